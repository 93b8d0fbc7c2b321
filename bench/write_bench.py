"""Throughput of the write path (`remember`) and of the embedding model alone.

The extractor is fixed (`bench.extractor`, set through the MEMORY_EXTRACTOR setting): a
lookup table over a fixed corpus of self-disclosure turns, so every run writes the same
facts and extraction costs next to nothing. What `remember` then does is everything but the
model call: embed the turn, its clauses and the facts with the local model (one batch), the
write gate, and the SQL (advisory lock, paraphrase check, upsert, evidence, commit). Timed
whole, per turn; the embedding and the extraction inside the same calls are timed by
stopwatches, so the time without the embedding is measured in the same run, not derived. A second run uses
the offline default, the grammar extractor (memoryapp.grammar), on the same turns: what it adds
is the parser.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.test.utils import override_settings
from tqdm import tqdm

import memoryapp.write.pipeline
from bench.extractor import FIXED_EXTRACTOR, TURNS
from bench.synthetic import percentiles
from bench.timing import Buckets, stopwatch
from chat.models import Turn
from chat.services import conversation_create, turn_append
from memoryapp import grammar
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory
from memoryapp.write import remember


@dataclass
class WriteResult:
    turns: int
    facts: int
    remember_seconds: float
    extract_seconds: float
    embed_seconds: float
    rows_added: int = 0
    latency: dict[str, float] = field(default_factory=dict)
    extractor: str = FIXED_EXTRACTOR

    @property
    def turns_per_second(self) -> float:
        """Turns per second of the whole write path without the model call (measured)."""
        return self.turns / self.remember_seconds

    @property
    def facts_per_second(self) -> float:
        return self.facts / self.remember_seconds

    @property
    def without_embedding_turns_per_second(self) -> float:
        """Turns per second once the embedding measured inside the same calls is taken out."""
        return self.turns / max(self.remember_seconds - self.embed_seconds, 1e-9)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.__dict__,
            "extractor": self.extractor or "offline default (grammar)",
            "turns_per_second": self.turns_per_second,
            "facts_per_second": self.facts_per_second,
            "without_embedding_turns_per_second": self.without_embedding_turns_per_second,
            "remember_ms_per_turn": 1000 * self.remember_seconds / self.turns,
            "extract_ms_per_turn": 1000 * self.extract_seconds / self.turns,
            "embed_ms_per_turn": 1000 * self.embed_seconds / self.turns,
            "rest_ms_per_turn": 1000 * (self.remember_seconds - self.embed_seconds - self.extract_seconds) / self.turns,
        }


def measure_writes(*, users: int, progress: bool = True, extractor: str = FIXED_EXTRACTOR) -> WriteResult:
    """`users` writers each state every turn of TURNS once, in one conversation each.
    `extractor` is the MEMORY_EXTRACTOR setting: "" is the offline default."""
    User = get_user_model()
    get_embedder()  # load the models outside the timings
    grammar.parser()
    forget_parses = grammar.analyse.cache_clear
    turns: list[tuple[Any, Turn]] = []
    for n in tqdm(range(users), desc="write: create turns", unit="user", disable=not progress, leave=False):
        user = User.objects.create(username=f"bench-writer-{n}-{extractor or 'offline'}", password="!")  # noqa: S106
        conversation = conversation_create(user=user, title="bench")
        for content in TURNS:
            turns.append(
                (user, turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content))
            )
    before = Memory.objects.count()

    facts = 0
    samples = []
    buckets = Buckets()
    with (
        override_settings(MEMORY_EXTRACTOR=extractor),
        stopwatch(memoryapp.write.pipeline, "extract_facts", buckets, "extract"),
        stopwatch(get_embedder(), "embed", buckets, "embed"),
    ):
        for user, turn in tqdm(turns, desc="write: remember", unit="turn", disable=not progress, leave=False):
            # Every writer says the same turns: without this the parser would be timed only once.
            forget_parses()
            start = time.perf_counter()
            facts += remember(user, turn).stored
            samples.append(time.perf_counter() - start)
    # A restatement in other words refreshes an existing memory, so rows added <= facts written.
    rows_added = Memory.objects.count() - before
    return WriteResult(
        len(turns),
        facts,
        sum(samples),
        buckets["extract"],
        buckets["embed"],
        rows_added,
        percentiles(samples),
        extractor,
    )


@dataclass
class EmbedResult:
    single_texts_per_second: float
    batch_texts_per_second: float
    batch_size: int
    texts: int
    single_latency: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def measure_embedding(texts: list[str], *, batch_size: int = 64) -> EmbedResult:
    embedder = get_embedder()
    embedder.embed(texts[:batch_size])  # warm-up
    samples = []
    for text in texts:
        start = time.perf_counter()
        embedder.embed([text])
        samples.append(time.perf_counter() - start)
    single = len(texts) / sum(samples)
    start = time.perf_counter()
    for offset in range(0, len(texts), batch_size):
        embedder.embed(texts[offset : offset + batch_size])
    batch = len(texts) / (time.perf_counter() - start)
    return EmbedResult(single, batch, batch_size, len(texts), percentiles(samples))
