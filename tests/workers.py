"""A real memory worker for tests: `manage.py memory_worker` (chat.worker) as its own process,
pointed at the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from core.databases import database_url

BASE_DIR = Path(__file__).resolve().parents[1]
TIMEOUT = 90  # start-up (Django, the parser, the embedder) and the writes, on a busy 2-core machine


def worker_settings(settings) -> dict[str, str]:
    """Queue memory writes in the database from this process; the environment for a worker."""
    settings.MEMORY_TASK_BACKEND = "worker"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MEMORY_"))}
    env.update(
        DATABASE_URL=database_url(connection.settings_dict["NAME"]),
        MEMORY_TASK_BACKEND="worker",
        MEMORY_LLM_MAX_RETRIES="0",
        MEMORY_LLM_TIMEOUT="3",
    )
    return env


def worker(env: dict[str, str], *args: str) -> subprocess.Popen:
    command = [sys.executable, "manage.py", "memory_worker", "--no-startup-delay"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and a fixed argument list
        [*command, "--interval", "0.1", *args],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def finish(process: subprocess.Popen) -> str:
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"the worker did not finish within {TIMEOUT} s:\n{output.decode(errors='replace')}")
    assert process.returncode == 0, output.decode(errors="replace")
    return output.decode(errors="replace")
