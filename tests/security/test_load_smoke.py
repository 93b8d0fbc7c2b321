"""A short run of the load driver (loadtest/run.py): gunicorn on loopback, concurrent users, invariants.

The driver runs as its own process, exactly as `python -m loadtest.run`, on a throwaway database
it creates and drops; this test checks its report and that nothing was left behind. Figures are
printed, never asserted: they depend on the machine and whatever else it is doing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from django.db import connection

from loadtest.run import BASE_DIR, VIOLATIONS

pytestmark = pytest.mark.django_db

USERS, SECONDS, WORKERS = 3, 4, 2
TIMEOUT = 240  # start-up, migrate, the run and clean-up, on a busy 2-core machine


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("load") / "report.json"
    command = [
        sys.executable,
        "-m",
        "loadtest.run",
        f"--users={USERS}",
        f"--seconds={SECONDS}",
        f"--workers={WORKERS}",
        f"--json={out}",
    ]
    driver = subprocess.Popen(  # noqa: S603 - our own interpreter and a fixed argument list
        command, cwd=BASE_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        output, _ = driver.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        driver.terminate()  # the driver stops gunicorn and drops its database on SIGTERM
        try:
            output, _ = driver.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(driver.pid, signal.SIGKILL)
            output, _ = driver.communicate()
        pytest.fail(f"the load driver did not finish within {TIMEOUT} s:\n{output.decode(errors='replace')}")
    print(output.decode(errors="replace"))
    assert Path(out).exists(), output.decode(errors="replace")
    data = json.loads(Path(out).read_text())
    data["exit_code"] = driver.returncode
    data["output"] = output.decode(errors="replace")
    return data


def test_every_request_of_the_run_succeeded(report):
    figures = report["figures"]
    assert figures["errors"] == 0, report["output"]
    assert all(figures["kinds"][kind]["ok"] > 0 for kind in ("turn", "search", "delete")), report["output"]
    assert report["exit_code"] == 0, report["output"]


def test_no_turn_is_lost_and_seqs_are_unique_and_gapless(report):
    found = report["invariants"]
    assert found["lost_turns"] == 0
    assert found["user_turns_stored"] == found["user_turns_acknowledged"] > 0
    assert found["duplicate_seqs"] == 0 and found["conversations_with_seq_gaps"] == 0


def test_no_duplicate_live_memory_and_no_deleted_memory_recalled_after_its_delete(report):
    found = report["invariants"]
    assert found["deletes"] > 0
    assert found["duplicate_live_memories"] == 0
    assert found["deleted_memories_live_again"] == 0
    assert found["recalls_of_deleted_after_delete"] == 0
    assert found["responses_with_deleted_after_delete"] == 0
    assert {k: found[k] for k in VIOLATIONS} == dict.fromkeys(VIOLATIONS, 0)


def test_the_run_leaves_no_server_no_worker_and_no_database_behind(report):
    for pid in (report["gunicorn_pid"], report["worker_pid"]):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [report["database"]])
        assert cursor.fetchone() == (0,)
