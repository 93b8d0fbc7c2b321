"""Every setting read from the environment is checked at start-up, with a message naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage_check(**variables: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **variables}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("MEMORY_WRITE_GATE", "high", "MEMORY_WRITE_GATE must be a number, got 'high'"),
        ("MEMORY_RECALL_FLOOR", "1.5", "MEMORY_RECALL_FLOOR must be at least -1 and at most 1, got '1.5'"),
        ("MEMORY_RECALL_FLOOR", "nan", "MEMORY_RECALL_FLOOR must be a finite number, got 'nan'"),
        ("MEMORY_RECALL_K", "0", "MEMORY_RECALL_K must be at least 1 and at most 50, got '0'"),
        ("MEMORY_LLM_TIMEOUT", "-3", "MEMORY_LLM_TIMEOUT must be at least 0.1, got '-3'"),
        ("MEMORY_LOG_LEVEL", "loud", "MEMORY_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("MEMORY_EXTRACTOR", "nowhere.extract", "MEMORY_EXTRACTOR='nowhere.extract' cannot be imported"),
        (
            "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB",
            "1GB",
            "EMBEDDED_POSTGRES_SHARED_BUFFERS_MB must be an integer, got '1GB'",
        ),
    ],
)
def test_a_malformed_memory_setting_stops_start_up_naming_the_variable(variable, value, message):
    result = manage_check(**{variable: value})
    assert result.returncode != 0
    assert message in result.stderr


def test_well_formed_overrides_pass_the_check():
    result = manage_check(MEMORY_WRITE_GATE="0.55", MEMORY_RECALL_FLOOR="-0.2", MEMORY_RECALL_K="8")
    assert result.returncode == 0, result.stderr
