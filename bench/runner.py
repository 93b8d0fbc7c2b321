"""The whole benchmark: datasets, our read path, mem0 side by side, the write path, the memory
page and API for a user with many memories, one chat turn without the model call, the table.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.db import connection

from bench.chat_bench import measure_chat
from bench.heavy_bench import HEAVY_FACTS, measure_heavy
from bench.mem0_runner import DATABASE_PREFIX as MEM0_PREFIX
from bench.mem0_runner import mem0_available, run_mem0
from bench.pages_bench import measure_pages
from bench.partition_bench import measure_partitioned_plans
from bench.recall_bench import RecallResult, measure_recall
from bench.seed import embedder_space, ensure_seeded, stored_vectors_match
from bench.synthetic import HEAVY_USER_INDEX, Dataset, probe_texts
from bench.write_bench import measure_embedding, measure_writes
from core.databases import list_databases, scratch_database
from core.partitioning import partition_by_owner
from memoryapp.embeddings import LOCAL_MODEL_NAME

DATASETS = {
    "100k": Dataset("100k", users=1_000, per_user=100),
    "1m": Dataset("1m", users=10_000, per_user=100, heavy=100_000),
    # the heavy user of 1m beside the regular users of 100k: quicker to seed for its own figures
    "heavy": Dataset("heavy", users=1_000, per_user=100, heavy=100_000),
    # 100k's data and probes, on the tables hash-partitioned by owner
    "partitioned": Dataset("partitioned", users=1_000, per_user=100, partitions=16),
    "smoke": Dataset("smoke", users=30, per_user=100, heavy=2_000),
}
# Every benchmark database is named with one of these prefixes, so `--drop` finds them all.
PREFIX = "memory_bench_"
# The datasets measured with a heavy user of realistic memories too (bench.heavy_bench), and how many.
HEAVY_TEXT = {"heavy": HEAVY_FACTS, "smoke": 600}
# How many IVFFlat lists the heavy user's indexes are searched (MEMORY_USER_INDEX_PROBES).
HEAVY_DEPTHS = [240, 360, 480]
WRITE_DATABASE = PREFIX + "write"
PAGES_DATABASE = PREFIX + "pages"
CHAT_DATABASE = PREFIX + "chat"
# The write path is measured on flat tables, then on tables hash-partitioned into this many.
WRITE_PARTITIONS = 16


@dataclass
class Options:
    sizes: list[str]
    probes: int = 1000
    heavy_probes: int = 200
    k: int = 5
    mem0_sizes: list[str] = field(default_factory=list)
    mem0_reload: bool = False
    write_users: int = 25
    embed_texts: int = 512
    page_memories: int = 10_000
    page_requests: int = 50
    chat_users: int = 50
    chat_turns_per_user: int = 4
    reseed: bool = False
    seed_only: bool = False
    progress: bool = True


@dataclass
class Results:
    machine: dict[str, Any]
    recall: list[RecallResult] = field(default_factory=list)
    mem0: dict[str, Any] = field(default_factory=dict)
    writes: dict[str, Any] = field(default_factory=dict)
    writes_offline: dict[str, Any] = field(default_factory=dict)
    writes_partitioned: dict[str, Any] = field(default_factory=dict)
    partition_plans: dict[str, Any] = field(default_factory=dict)
    embedding: dict[str, Any] = field(default_factory=dict)
    pages: dict[str, Any] = field(default_factory=dict)
    chat: dict[str, Any] = field(default_factory=dict)
    chat_worker: dict[str, Any] = field(default_factory=dict)
    heavy: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "recall": [r.as_dict() for r in self.recall],
            "mem0": self.mem0,
            "writes": self.writes,
            "writes_offline": self.writes_offline,
            "writes_partitioned": self.writes_partitioned,
            "partition_plans": self.partition_plans,
            "embedding": self.embedding,
            "heavy": self.heavy,
            "pages": self.pages,
            "chat": self.chat,
            "chat_worker": self.chat_worker,
            "seconds": self.seconds,
        }


def machine() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version'), extversion FROM pg_extension WHERE extname='vector'")
        row = cursor.fetchone()
        server, pgvector = row if row else (connection.pg_version, "?")
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]
    memory_gib = 0.0
    try:
        with open("/proc/meminfo") as meminfo:
            memory_gib = int(meminfo.readline().split()[1]) / 1024 / 1024
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(memory_gib, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "postgresql": server,
        "pgvector": pgvector,
        "shared_buffers": shared_buffers,
        "load_average_start": os.getloadavg(),
    }


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, flush=True)


def bench_databases() -> list[str]:
    """Every database the benchmark made, ours and mem0's."""
    return list_databases(PREFIX) + list_databases(MEM0_PREFIX)


def run(options: Options) -> Results:
    started = time.perf_counter()
    debug, settings.DEBUG = settings.DEBUG, False  # no query log: production runs without DEBUG
    try:
        results = Results(machine=machine())
        model, dimensions = embedder_space()
        results.machine["embedding_model"] = model
        for name in options.sizes:
            dataset = replace(DATASETS[name], dimensions=dimensions)
            with scratch_database(PREFIX + name, keep=True):
                if dataset.partitions:
                    partition_by_owner(dataset.partitions)
                users, seeded = ensure_seeded(dataset, reseed=options.reseed, progress=options.progress)
                _say(options.progress, f"{name}: {'seeded' if seeded else 'reused'} {dataset.rows:,} memories")
                if options.seed_only:
                    continue
                sample = [0, dataset.users - 1] + ([HEAVY_USER_INDEX] if dataset.heavy else [])
                assert all(stored_vectors_match(dataset, i, users[i]) for i in sample), "stored data differs"
                regular = measure_recall(
                    dataset, users, label=name, probes=options.probes, k=options.k, progress=options.progress
                )
                results.recall.append(regular)
                if name in HEAVY_TEXT:
                    results.heavy = measure_heavy(
                        probes=options.heavy_probes,
                        k=options.k,
                        depths=HEAVY_DEPTHS,
                        facts=HEAVY_TEXT[name],
                        progress=options.progress,
                    ).as_dict()
                if dataset.heavy:
                    results.recall.append(
                        measure_recall(
                            dataset,
                            users,
                            label=f"{name} heavy user",
                            probes=options.heavy_probes,
                            k=options.k,
                            heavy=True,
                            progress=options.progress,
                        )
                    )
            if name in options.mem0_sizes:
                # mem0 embeds its own searches with all-MiniLM-L6-v2, so both sides must be in its space.
                if model != LOCAL_MODEL_NAME:
                    available, why = False, f"mem0 is compared on {LOCAL_MODEL_NAME} (MEMORY_EMBEDDING_MODEL=local)"
                else:
                    available, why = mem0_available()
                if not available:
                    results.mem0[name] = {"error": why}
                    continue
                results.mem0[name] = run_mem0(
                    dataset,
                    regular.probe_set,
                    label=name,
                    k=options.k,
                    reload=options.mem0_reload,
                    progress=options.progress,
                )
        if options.seed_only:
            return results
        # Each of these writes, so each gets a fresh database of its own, dropped afterwards.
        if options.write_users:
            with scratch_database(WRITE_DATABASE):
                results.writes = measure_writes(users=options.write_users, progress=options.progress).as_dict()
                results.writes_offline = measure_writes(
                    users=options.write_users, progress=options.progress, extractor=""
                ).as_dict()
            with scratch_database(WRITE_DATABASE):
                partition_by_owner(WRITE_PARTITIONS)
                results.writes_partitioned = measure_writes(
                    users=options.write_users, progress=options.progress
                ).as_dict()
                results.partition_plans = measure_partitioned_plans()
        if options.page_requests:
            with scratch_database(PAGES_DATABASE):
                results.pages = measure_pages(
                    large=options.page_memories, requests=options.page_requests, progress=options.progress
                ).as_dict()
        if options.chat_users:
            with scratch_database(CHAT_DATABASE):
                results.chat = measure_chat(
                    users=options.chat_users, turns_per_user=options.chat_turns_per_user, progress=options.progress
                ).as_dict()
            with scratch_database(CHAT_DATABASE):
                results.chat_worker = measure_chat(
                    users=options.chat_users,
                    turns_per_user=options.chat_turns_per_user,
                    progress=options.progress,
                    mode="worker",
                ).as_dict()
        if options.embed_texts:
            results.embedding = measure_embedding(probe_texts(options.embed_texts)).as_dict()
        results.machine["load_average_end"] = os.getloadavg()
        results.seconds = time.perf_counter() - started
        return results
    finally:
        settings.DEBUG = debug
