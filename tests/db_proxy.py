"""A TCP proxy in front of the test database, for outages: `cut()` drops every connection and
refuses new ones, as a stopped server does; `restore()` listens again on the same port."""

from __future__ import annotations

import os
import socket
import threading
from urllib.parse import quote

from django.db import connection


def _upstream_address() -> tuple[int, str | tuple[str, int]]:
    connection.ensure_connection()
    params = connection.get_connection_params()
    host, port = params.get("host") or "", int(params.get("port") or 5432)
    if host.startswith("/"):
        return socket.AF_UNIX, os.path.join(host, f".s.PGSQL.{port}")
    return socket.AF_INET, (host or "127.0.0.1", port)


class DatabaseProxy:
    def __init__(self) -> None:
        self.family, self.upstream = _upstream_address()
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.restore()

    def url(self, database: str) -> str:
        params = connection.get_connection_params()
        user = quote(params.get("user") or "postgres", safe="")
        password = params.get("password")
        auth = f"{user}:{quote(password, safe='')}" if password else user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        if listener is not None:
            listener.close()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            server = socket.socket(self.family)
            try:
                server.connect(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
