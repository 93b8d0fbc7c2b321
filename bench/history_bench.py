"""Latency of the chat history reference for a heavy user, in a database of its own.

One user is given N past turns (synthetic: sentences drawn from a fixed vocabulary, each with a
unit vector of the embedder's dimension stored under its name, indexed by `turn_index` as the
memory worker indexes a turn), spread over conversations of 20 turns. Probes are real
sentences embedded by the configured embedder. Timed per probe, each in its own pass:
- `statement`: `history_nearest` (the one statement and its floor), vector given;
- `combined`: the read path of a chat turn as a reply makes it: `read_turn` (embedding, need,
  memories) then `history_for_turn`.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from tqdm import tqdm

from bench.synthetic import percentiles
from chat.history import SEARCH_CONFIGS, history_for_turn, history_nearest, turn_index
from chat.models import Conversation, Turn
from chat.services import conversation_create
from memoryapp.embeddings import get_embedder
from memoryapp.read.recall import read_turn

_WORDS = (
    "dinner plumber boiler valve garden trip Lisbon Porto dentist appointment recipe tiramisu bike race "
    "marathon training sister brother daughter son school teacher meeting project deadline budget rent "
    "apartment kitchen paint colour sofa holiday flight hotel museum concert guitar piano lesson book novel "
    "film series coffee tea bakery market vegetables soup pasta salad cake birthday party wedding gift "
    "doctor nurse clinic allergy medicine insurance tax invoice client contract laptop phone printer router "
    "password email calendar weekend morning evening friday saturday sunday monday winter summer rain snow"
).split()
PROBES = [
    "What was the name of the restaurant where we had that amazing tiramisu?",
    "What did the plumber say about the boiler?",
    "When is my next dentist appointment?",
    "Which hotel did I book for the Lisbon trip?",
    "What colour did I want to paint the kitchen?",
    "How far was the bike race I trained for?",
    "What gift did I get my sister for her birthday?",
    "Which laptop did I end up buying?",
    "What did my daughter's teacher say at the meeting?",
    "How much is the rent for the new apartment?",
]
TURNS_PER_CONVERSATION = 20


@dataclass
class HistoryBenchResult:
    turns: int
    probes: int
    statement_ms: dict[str, float]
    combined_ms: dict[str, float]
    excerpts_given: int


def _sentence(rng: random.Random) -> str:
    return "I " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 24))) + "."


def seed_turns(*, turns: int, seed: int = 7, batch: int = 2000, progress: bool = True) -> tuple[object, int]:
    """A user with `turns` indexed past turns; returns the user and the dimension used."""
    embedder = get_embedder()
    dimension = int(embedder.embed(["dimension"]).shape[1])
    user = get_user_model().objects.create_user(username=f"bench-history-{turns}")
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed)
    bar = tqdm(total=turns, desc="past turns", unit="turn", disable=not progress)
    made = 0
    while made < turns:
        size = min(batch, turns - made)
        conversations = [
            conversation_create(user=user, title="bench") for _ in range(-(-size // TURNS_PER_CONVERSATION))
        ]
        rows = []
        for i in range(size):
            conversation = conversations[i // TURNS_PER_CONVERSATION]
            rows.append(
                Turn(
                    conversation=conversation,
                    user=user,
                    seq=i % TURNS_PER_CONVERSATION + 1,
                    role=Turn.Role.USER,
                    content=_sentence(rng),
                    memory_state=Turn.MemoryState.DONE,
                )
            )
        created = Turn.objects.bulk_create(rows)
        unit = vectors.standard_normal((size, dimension)).astype(np.float32)
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        for turn, vector in zip(created, unit, strict=True):
            turn_index(user=user, turn=turn, vector=vector, embedding_model=embedder.name, config=SEARCH_CONFIGS["en"])
        made += size
        bar.update(size)
    bar.close()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Turn._meta.db_table}")
        cursor.execute(f"ANALYZE {Conversation._meta.db_table}")
    return user, dimension


def run_history_bench(*, turns: int, repeats: int = 5, progress: bool = True) -> HistoryBenchResult:
    user, _ = seed_turns(turns=turns, progress=progress)
    embedder = get_embedder()
    asked_in = conversation_create(user=user, title="probes")
    vectors = embedder.embed(PROBES)

    def statement_of(text: str, vector: np.ndarray) -> None:
        history_nearest(
            user=user,
            text=text,
            vector=vector,
            embedding_model=embedder.name,
            exclude_conversation_id=asked_in.pk,
            k=3,
            min_sim=-1.0,
        )

    for text, vector in zip(PROBES, vectors, strict=True):  # warm: plans, caches, the encoder
        statement_of(text, vector)
        read_turn(user, text)
    statement, combined, given = [], [], 0
    for _ in range(repeats):
        for text, vector in zip(PROBES, vectors, strict=True):
            started = time.perf_counter()
            statement_of(text, vector)
            statement.append(time.perf_counter() - started)
        for text in PROBES:
            started = time.perf_counter()
            read = read_turn(user, text)
            found = history_for_turn(user=user, text=text, read=read, conversation=asked_in)
            combined.append(time.perf_counter() - started)
            given += len(found)
    return HistoryBenchResult(
        turns=turns,
        probes=len(statement),
        statement_ms=percentiles(statement),
        combined_ms=percentiles(combined),
        excerpts_given=given,
    )
