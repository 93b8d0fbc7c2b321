"""Latency and exactness of the read path on a seeded dataset in the current database.

Three timings per probe, each in its own pass over the same probes:
- `sql`: the exact statement `memory_nearest` sends (captured from it), executed on the raw
  psycopg cursor and fetched: the database's share, round trip included;
- `nearest`: `memory_nearest(...)` with the probe's vector: the whole recall minus embedding;
- `recall`: `recall(user, text)`: the whole read path, embedding the probe included.
Exactness compares each result with a numpy brute-force top-k over the owner's generated
vectors, each memory scored as recall scores it (the best of its text and its keys, needs less
the key offset); the floor is disabled (min_sim -1) so that every call returns k rows to compare.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from tqdm import tqdm

from bench.seed import synthetic_model
from bench.synthetic import (
    HEAVY_USER_INDEX,
    Dataset,
    percentiles,
    position_of,
    probe_texts,
    probe_users,
    true_top_k_keyed,
)
from memoryapp import grammar
from memoryapp.embeddings import get_embedder
from memoryapp.read.recall import memory_nearest, read_turn, recall
from memoryapp.thresholds import key_offset, question_offset

_VECTOR_LITERAL = re.compile(r"'\[[-0-9.,e+ ]+\]'")


@dataclass
class Probe:
    user_index: int
    text: str
    vector: np.ndarray
    truth: list[int] = field(default_factory=list)
    sql: str = ""
    params: Any = None


@dataclass
class RecallResult:
    label: str
    table_rows: int
    user_rows: int
    probes: int
    sql: dict[str, float]
    nearest: dict[str, float]
    recall: dict[str, float]
    turn: dict[str, float]  # a chat turn's read path: the decision (parse uncached) then recall
    server: dict[str, float]
    exact_nearest: float
    exact_recall: float
    explain: str
    probe_set: list[Probe] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "probe_set"}


def build_probes(dataset: Dataset, count: int, *, heavy: bool, k: int) -> list[Probe]:
    """Probe texts, their owners, the probe vectors (embedded one by one, as recall does) and the truth."""
    embedder = get_embedder()
    texts = probe_texts(count, dataset.seed + (1 if heavy else 0))
    owners = [HEAVY_USER_INDEX] * count if heavy else probe_users(dataset, count)
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    offsets = {"question_offset": question_offset(embedder.name), "key_offset": key_offset(embedder.name)}
    probes = []
    for owner, text in zip(owners, texts, strict=True):
        vector = embedder.embed([text])[0]
        if owner not in cache:
            cache[owner] = (dataset.vectors(owner), dataset.key_vectors(owner))
        truth = true_top_k_keyed(*cache[owner], vector, k, **offsets)
        probes.append(Probe(owner, text, vector, truth))
    return probes


def _capture(user: Any, probe: Probe, k: int) -> list[int]:
    captured: list[tuple[str, Any]] = []

    def wrapper(execute, sql, params, many, context):  # noqa: ANN001 - Django's wrapper signature
        captured.append((sql, params))
        return execute(sql, params, many, context)

    model = synthetic_model()
    with connection.execute_wrapper(wrapper):
        got = memory_nearest(user=user, vector=probe.vector, embedding_model=model, k=k, min_sim=-1.0)
    (probe.sql, probe.params), *_ = captured
    assert all(r.memory.user_id == user.pk for r in got), "recall returned another user's memory"
    return [position_of(r.memory.text) for r in got]


def _explain(probe: Probe) -> tuple[str, float]:
    with connection.connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + probe.sql, probe.params)
        plan = cursor.fetchone()[0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + probe.sql, probe.params)
        floats = f"'[...{len(probe.vector)} floats...]'"
        text = _VECTOR_LITERAL.sub(floats, "\n".join(row[0] for row in cursor.fetchall()))
    return text, float(plan[0]["Execution Time"])


def measure_recall(
    dataset: Dataset,
    users: dict[int, int],
    *,
    label: str,
    probes: int,
    k: int = 5,
    heavy: bool = False,
    progress: bool = True,
    server_samples: int = 200,
) -> RecallResult:
    User = get_user_model()
    probe_set = build_probes(dataset, probes, heavy=heavy, k=k)
    owners = {index: User.objects.get(pk=users[index]) for index in {p.user_index for p in probe_set}}
    bar = {"disable": not progress, "unit": "probe", "leave": False}
    connection.ensure_connection()

    exact_nearest = 0
    for probe in tqdm(probe_set, desc=f"{label}: warm-up and exactness", **bar):
        exact_nearest += _capture(owners[probe.user_index], probe, k) == probe.truth

    sql_times = []
    with connection.connection.cursor() as cursor:
        for probe in tqdm(probe_set, desc=f"{label}: SQL", **bar):
            start = time.perf_counter()
            cursor.execute(probe.sql, probe.params)
            cursor.fetchall()
            sql_times.append(time.perf_counter() - start)

    nearest_times = []
    model = synthetic_model()
    for probe in tqdm(probe_set, desc=f"{label}: memory_nearest", **bar):
        user = owners[probe.user_index]
        start = time.perf_counter()
        memory_nearest(user=user, vector=probe.vector, embedding_model=model, k=k, min_sim=-1.0)
        nearest_times.append(time.perf_counter() - start)

    recall_times = []
    exact_recall = 0
    for probe in tqdm(probe_set, desc=f"{label}: recall", **bar):
        user = owners[probe.user_index]
        start = time.perf_counter()
        got = recall(user, probe.text, k=k, min_sim=-1.0)
        recall_times.append(time.perf_counter() - start)
        exact_recall += [position_of(r.memory.text) for r in got] == probe.truth

    # A chat turn's whole read path (memoryapp.read.recall.read_turn): the embedding, the standing
    # instructions, the profile check, the need decision (the parse uncached here, as in a worker
    # that did not write the turn), then the scored top-k and the floors.
    turn_times = []
    for probe in tqdm(probe_set, desc=f"{label}: read_turn", **bar):
        user = owners[probe.user_index]
        grammar.analyse.cache_clear()
        start = time.perf_counter()
        read_turn(user, probe.text)
        turn_times.append(time.perf_counter() - start)

    server_times = []
    explain_text = ""
    for probe in tqdm(probe_set[:server_samples], desc=f"{label}: EXPLAIN ANALYZE", **bar):
        text, execution_ms = _explain(probe)
        server_times.append(execution_ms / 1000.0)
        explain_text = explain_text or text

    return RecallResult(
        label=label,
        table_rows=dataset.rows,
        user_rows=dataset.count_for(probe_set[0].user_index),
        probes=len(probe_set),
        sql=percentiles(sql_times),
        nearest=percentiles(nearest_times),
        recall=percentiles(recall_times),
        turn=percentiles(turn_times),
        server=percentiles(server_times),
        exact_nearest=exact_nearest / len(probe_set),
        exact_recall=exact_recall / len(probe_set),
        explain=explain_text,
        probe_set=probe_set,
    )
