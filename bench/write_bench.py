"""Throughput of the write path (`remember`) and of the embedding model alone.

The extractor is fixed: the app's built-in rule extractor (its offline default, in
process, no model endpoint) over a fixed corpus of self-disclosure turns, so every run
extracts the same facts. The write path is timed whole, then its embedding step
(`gate_facts`, the only model call left offline) is timed alone on the same turns, so the
write path without any model call is the difference of the two.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from tqdm import tqdm

from chat.models import Turn
from chat.services import conversation_create, turn_append
from memoryapp.embeddings import get_embedder
from memoryapp.extraction import extract_facts
from memoryapp.models import Memory
from memoryapp.services import gate_facts, remember

# Each turn states one or two durable facts the rule extractor recognises.
TURNS = [
    "My name is Priya Raman.",
    "I live in Lisbon, and I'm always in UTC.",
    "I work at Acme as a data scientist.",
    "I'm vegetarian.",
    "I have two cats.",
    "I speak Portuguese and German.",
    "I use a MacBook Pro for work.",
    "I hate emoji in emails.",
    "I prefer tea over coffee.",
    "My daughter is called Ana.",
    "I'm a nurse.",
    "I love hiking.",
    "I'm allergic to peanuts.",
    "I live in Porto.",
    "I work at Globex as a software engineer.",
    "I prefer short answers.",
    "I have a dog.",
    "I speak Japanese.",
    "I use Linux at home.",
    "I dislike long meetings.",
    "I love jazz, and I play the piano.",
    "My son is called Tomas.",
    "I'm always in CET.",
    "I prefer metric units.",
    "I'm a teacher.",
    "I hate small talk.",
    "I use an iPhone.",
    "I love Italian food.",
    "I work at Initech as a product manager.",
    "I'm vegan.",
    "I have three kids.",
    "I prefer email over phone calls.",
    "I live in Berlin.",
    "I speak French.",
    "I dislike cilantro.",
    "I love cycling.",
    "My wife is called Marta.",
    "I'm lactose intolerant.",
    "I use Vim for coding.",
    "I prefer dark mode.",
]


@dataclass
class WriteResult:
    turns: int
    facts: int
    remember_seconds: float
    extract_seconds: float
    gate_seconds: float

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.remember_seconds

    @property
    def facts_per_second(self) -> float:
        return self.facts / self.remember_seconds

    @property
    def without_model_turns_per_second(self) -> float:
        """Turns per second once the embedding step's own time is taken out (derived)."""
        return self.turns / max(self.remember_seconds - self.gate_seconds, 1e-9)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.__dict__,
            "turns_per_second": self.turns_per_second,
            "facts_per_second": self.facts_per_second,
            "without_model_turns_per_second": self.without_model_turns_per_second,
            "remember_ms_per_turn": 1000 * self.remember_seconds / self.turns,
            "extract_ms_per_turn": 1000 * self.extract_seconds / self.turns,
            "gate_ms_per_turn": 1000 * self.gate_seconds / self.turns,
        }


def measure_writes(*, users: int, progress: bool = True) -> WriteResult:
    """`users` writers each state every turn of TURNS once, in one conversation each."""
    User = get_user_model()
    get_embedder()  # load the model outside the timings
    turns: list[tuple[Any, Turn]] = []
    for n in tqdm(range(users), desc="write: create turns", unit="user", disable=not progress, leave=False):
        user = User.objects.create(username=f"bench-writer-{n}", password="!")  # noqa: S106 - unusable
        conversation = conversation_create(user=user, title="bench")
        for content in TURNS:
            turns.append(
                (user, turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content))
            )
    before = Memory.objects.count()

    facts = 0
    start = time.perf_counter()
    for user, turn in tqdm(turns, desc="write: remember", unit="turn", disable=not progress, leave=False):
        facts += remember(user, turn)
    remember_seconds = time.perf_counter() - start
    assert Memory.objects.count() - before == facts, "every fact of a new statement is a new memory"

    extract_seconds = gate_seconds = 0.0
    for _, turn in tqdm(turns, desc="write: extract and gate alone", unit="turn", disable=not progress, leave=False):
        start = time.perf_counter()
        candidates = extract_facts(turn.content)
        extract_seconds += time.perf_counter() - start
        if candidates:
            start = time.perf_counter()
            gate_facts(turn.content, candidates)
            gate_seconds += time.perf_counter() - start
    return WriteResult(len(turns), facts, remember_seconds, extract_seconds, gate_seconds)


@dataclass
class EmbedResult:
    single_texts_per_second: float
    batch_texts_per_second: float
    batch_size: int
    texts: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def measure_embedding(texts: list[str], *, batch_size: int = 64) -> EmbedResult:
    embedder = get_embedder()
    embedder.embed(texts[:batch_size])  # warm-up
    start = time.perf_counter()
    for text in texts:
        embedder.embed([text])
    single = len(texts) / (time.perf_counter() - start)
    start = time.perf_counter()
    for offset in range(0, len(texts), batch_size):
        embedder.embed(texts[offset : offset + batch_size])
    batch = len(texts) / (time.perf_counter() - start)
    return EmbedResult(single, batch, batch_size, len(texts))
