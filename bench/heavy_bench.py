"""The heavy user on realistic memories: recall over 100,000 facts (bench.facts) with the keys the
write path gives them, every memory scored exactly, then through the user's approximate indexes
(memoryapp.user_index) searched at several depths (IVFFlat lists), each against the exact answer
on the same probes (the floor off, so that every call returns k memories to compare). Two kinds
of probe: turns about facts of the user's own, which recall serves, and turns about nothing the
user said (bench.synthetic), the hardest for an approximate index: far from every memory, they
are about as far from many."""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import override_settings
from tqdm import tqdm

from bench.facts import heavy_facts, own_fact_turns
from bench.seed import TEXT_USER, embedder_space, seed_text_user, synthetic_model
from bench.synthetic import DEFAULT_SEED, percentiles, probe_texts
from memoryapp import user_index
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryKey, MemoryNeed
from memoryapp.read import recall

HEAVY_FACTS = 100_000
FACTS_SEED = 7
# A build of the indexes of a user already far past the mark is given this much memory (the
# memory worker makes them at the mark, where the graphs are small).
BUILD_MEMORY = "2GB"


@dataclass
class HeavyResult:
    memories: int
    keys: int
    needs: int  # the needs' wordings, once each (MemoryNeed)
    probes: int  # of each kind
    exact: dict[str, dict[str, float]]  # by kind of probe
    build_seconds: float | None
    index_mb: dict[str, int]
    # by kind of probe and lists searched: times and how much of the exact answer was returned
    approximate: list[dict[str, Any]] = field(default_factory=list)
    explain: str = ""
    # How many of the exact answers each scan of recall's approximate form would have to find:
    # the one by which the memory scored best (its text, the fact asked, a need of its kind).
    answered_by: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PROBE_KINDS = ("own facts", "unrelated")


def _heavy_user(facts: int, progress: bool):
    """The realistic heavy user, seeded unless this database holds them already."""
    user = get_user_model().objects.filter(username=TEXT_USER).first()
    if user is None or Memory.objects.filter(user=user, embedding_model=synthetic_model()).count() != facts:
        seed_text_user(heavy_facts(facts, FACTS_SEED), progress=progress)
        user = get_user_model().objects.get(username=TEXT_USER)
    return user


def answered_by(item: recall.Recalled) -> str:
    """The scan by which a recalled memory scored best: its text, the fact asked, or a need."""
    if item.key_similarity > item.text_similarity:
        return "need"
    return "question" if item.text_similarity > item.plain_similarity else "text"


def _pass(user, vectors, *, k: int, approximate: bool, desc: str, progress: bool, scans: Counter | None = None):
    found, times = [], []
    for vector in tqdm(vectors, desc=desc, unit="probe", leave=False, disable=not progress):
        start = time.perf_counter()
        got = recall.memory_nearest(
            user=user, vector=vector, embedding_model=synthetic_model(), k=k, min_sim=-1.0, approximate=approximate
        )
        times.append(time.perf_counter() - start)
        found.append([(item.memory.pk, item.similarity) for item in got])
        if scans is not None:
            scans.update(answered_by(item) for item in got)
    return found, times


def _build(user, dims: int, facts: int) -> float | None:
    """Make the user's indexes; how long it took, None when they were there already."""
    before = set(user_index.indexed_users().get(user.pk, []))
    with connection.cursor() as cursor:
        cursor.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
    start = time.perf_counter()
    with override_settings(MEMORY_USER_INDEX_AT=facts // 2):
        assert user_index.ensure(user.pk, synthetic_model(), dims)
    took = time.perf_counter() - start
    return None if set(user_index.indexed_users()[user.pk]) == before else took


def _probes(user, count: int) -> dict[str, list]:
    """The probe vectors of each kind (PROBE_KINDS)."""
    facts = list(Memory.objects.filter(user=user).order_by("id").values_list("text", flat=True))
    texts = {
        "own facts": own_fact_turns(facts, min(count, len(facts)), DEFAULT_SEED + 4),
        "unrelated": probe_texts(count, DEFAULT_SEED + 3),
    }
    embedder = get_embedder()
    return {kind: list(embedder.embed(texts[kind])) for kind in PROBE_KINDS}


def measure_heavy(
    *, probes: int, k: int, depths: list[int], facts: int = HEAVY_FACTS, progress: bool = True
) -> HeavyResult:
    """The heavy user's recall, exact and through the indexes searched `depths` lists deep."""
    user = _heavy_user(facts, progress)
    _model, dims = embedder_space()
    vectors = _probes(user, probes)
    exact: dict[str, list] = {}
    result = HeavyResult(
        memories=facts,
        keys=MemoryKey.objects.filter(user=user).count(),
        needs=MemoryNeed.objects.filter(user=user).count(),
        probes=probes,
        exact={},
        build_seconds=None,
        index_mb={},
    )
    for kind in PROBE_KINDS:
        scans: Counter = Counter({"text": 0, "question": 0, "need": 0})
        exact[kind], times = _pass(
            user, vectors[kind], k=k, approximate=False, desc=f"heavy, {kind}: exact", progress=progress, scans=scans
        )
        result.exact[kind], result.answered_by[kind] = percentiles(times), dict(scans)
    result.build_seconds = _build(user, dims, facts)
    with connection.cursor() as cursor:
        for name in sorted(user_index.indexed_users()[user.pk]):
            cursor.execute("SELECT pg_relation_size(%s::regclass)", [name])
            result.index_mb[name] = cursor.fetchone()[0] >> 20
    for kind, lists in ((kind, lists) for kind in PROBE_KINDS for lists in depths):
        with override_settings(MEMORY_USER_INDEX_PROBES=lists):
            _pass(user, vectors[kind][:10], k=k, approximate=True, desc="warm-up", progress=False)
            found, times = _pass(
                user, vectors[kind], k=k, approximate=True, desc=f"heavy, {kind}: {lists} lists", progress=progress
            )
        result.approximate.append(
            {"probes": kind, "lists": lists, **percentiles(times), **_agreement(exact[kind], found, k)}
        )
    with override_settings(MEMORY_USER_INDEX_PROBES=depths[0]):
        result.explain = _explain(user, vectors["unrelated"][0], dims, k)
    return result


def _agreement(exact: list, found: list, k: int) -> dict[str, float]:
    """How much of the exact top k was returned, by id and by score (a tie at the k-th score
    may be broken either way)."""
    same = by_score = 0.0
    for truth, got in zip(exact, found, strict=True):
        fifth = min(similarity for _pk, similarity in truth)
        same += len({pk for pk, _ in got} & {pk for pk, _ in truth}) / k
        by_score += sum(similarity >= fifth - 1e-6 for _pk, similarity in got) / k
    return {"same_ids": same / len(found), "by_score": by_score / len(found)}


def _explain(user, vector, dims: int, k: int) -> str:
    params = recall._params(user, vector, synthetic_model(), k=k, candidates=k * recall.CANDIDATES_PER_RESULT)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(user_index.SEARCH_SETTINGS, user_index.search_settings())
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + recall._sql(recall._NEAREST, dims), params)
        text = "\n".join(row[0] for row in cursor.fetchall())
    return re.sub(r"'\[[-0-9.,e+ ]+\]'", f"'[...{dims} floats...]'", text)
