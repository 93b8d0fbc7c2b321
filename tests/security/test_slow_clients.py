"""Clients that send headers and a Content-Length but never the body: behind the nginx
configuration the app ships (deploy/nginx/), they hold nginx connections, and the app goes on
answering; straight at gunicorn, they take every thread. gunicorn and nginx run as their own
processes on loopback, against the test database."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from core.databases import database_url
from loadtest.run import BASE_DIR, free_port, gunicorn

pytestmark = pytest.mark.django_db(transaction=True)

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"  # Debian's nginx-light, installed by `make test`
STALLED = 40
THREADS = 4
STALLED_REQUEST = (
    b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
)


@contextmanager
def nginx_in_front_of(upstream_port: int) -> Iterator[int]:
    """nginx on a free loopback port, serving the app with the shipped server snippet."""
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="memory-nginx-"))
    temp = " ".join(
        f"{kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (folder / "nginx.conf").write_text(
        f"daemon off; master_process off; pid {folder / 'nginx.pid'}; error_log {folder / 'error.log'} warn;\n"
        "events { worker_connections 512; }\n"
        f"http {{ access_log off; {temp}\n"
        f"  upstream memory_app {{ server 127.0.0.1:{upstream_port}; keepalive 16; }}\n"
        f"  server {{ listen 127.0.0.1:{port}; include {BASE_DIR / 'deploy' / 'nginx' / 'memory-proxy.conf'}; }}\n"
        "}\n"
    )
    process = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")])  # noqa: S603
    try:
        deadline = time.monotonic() + 10
        while not _accepts(port):
            assert process.poll() is None, (folder / "error.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _stall(port: int, count: int) -> list[socket.socket]:
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(STALLED_REQUEST)
        held.append(sock)
    time.sleep(0.5)
    return held


def _answers(port: int, within: float) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=within) as answer:  # noqa: S310
            return answer.status == 200
    except (TimeoutError, urllib.error.URLError, ConnectionError):
        return False


def test_stalled_request_bodies_hold_nginx_and_the_app_goes_on_answering():
    held: list[socket.socket] = []
    try:
        with gunicorn(database_url(connection.settings_dict["NAME"]), workers=1, threads=THREADS) as app:
            with nginx_in_front_of(app.port) as front:
                held += _stall(front, STALLED)
                assert _answers(front, within=5), "the app stopped answering behind nginx"
                # The same clients straight at gunicorn take its threads: why it must run behind the proxy.
                held += _stall(app.port, STALLED)
                assert not _answers(app.port, within=3)
    finally:
        for sock in held:
            sock.close()
