"""Latency of the chat history reference for a heavy user, in a database of its own.

One user is given N past turns (synthetic: sentences whose words are drawn by Zipf's law from a
vocabulary of VOCABULARY words, each turn with a vector of the embedder's dimension stored under
its name, indexed by `turn_index` as the memory worker indexes a turn), spread over conversations
of 20 turns. The vocabulary is made-up words of three syllables, with the hundred topical words
the probes use placed at ranks from 30 to 5,000: a word's share of the turns, and so how many
turns a probe's words match, runs from most of them to a few dozen, as in real text. A turn's
vector is the sum of its words' (a random direction per word, weighted by its smooth inverse
frequency) and some noise, normalised: turns that share uncommon words are near, as real sentence
embeddings are, which is what an approximate index is built for (random vectors are its worst
case). Probes are real sentences embedded by the configured embedder.
Timed per probe, each in its own pass:
- `statement`: `history_nearest` (the full-text queries, the one statement and its floor), vector
  given; and again with every word of the probe matched (CHAT_HISTORY_COMMON_SHARE 1), as before
  common words only ranked;
- `combined`: the read path of a chat turn as a reply makes it: `read_turn` (embedding, need,
  memories) then `history_for_turn`.
Exactness: each probe, its vector made from its words as the turns' are, is looked up with the
approximate index and again with index scans off (an exact sort); the share of the exact top 10
(and of the exact 30 nearest by embedding) that the statement returns.
"""

from __future__ import annotations

import functools
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import override_settings
from tqdm import tqdm

from bench.runner import machine
from bench.seed import settle
from bench.synthetic import percentiles
from chat.history import (
    CANDIDATES,
    SEARCH_CONFIGS,
    Excerpt,
    history_for_turn,
    history_nearest,
    history_plan,
    turn_index,
)
from chat.models import Conversation, Turn
from chat.services import conversation_create
from memoryapp.embeddings import get_embedder
from memoryapp.read.recall import read_turn

if TYPE_CHECKING:
    from django.contrib.auth.models import User

_WORDS = (
    (
        "dinner plumber boiler valve garden trip Lisbon Porto dentist appointment recipe tiramisu bike race "
        "marathon training sister brother daughter son school teacher meeting project deadline budget rent "
        "apartment kitchen paint colour sofa holiday flight hotel museum concert guitar piano lesson book novel "
        "film series coffee tea bakery market vegetables soup pasta salad cake birthday party wedding gift "
        "doctor nurse clinic allergy medicine insurance tax invoice client contract laptop phone printer router "
        "password email calendar weekend morning evening friday saturday sunday monday winter summer rain snow"
    )
    .lower()
    .split()
)
VOCABULARY = 20_000
ZIPF = 1.0  # the r-th commonest word's share of all words is proportional to 1 / r ** ZIPF
TOPICAL_RANKS = (30, 5000)  # the first and last rank of the topical words
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
    every_word_ms: dict[str, float]  # the statement, matching by common words too
    combined_ms: dict[str, float]
    excerpts_given: int
    top10_exact: float  # share of the exact statement's top 10 that the approximate one returns
    nearest30_exact: float  # share of the exact 30 nearest by embedding among the approximate 30
    nearest_similarity: list[float]  # the exact nearest's mean similarity at places 1, 10 and 30
    plan: str  # EXPLAIN (ANALYZE, BUFFERS) of the statement for the first probe
    machine: (
        dict  # bench.runner.machine(): among the rest, the buffer pool, which decides whether the index is read or hit
    )


NOISE = 0.5  # the length of a turn's noise against an uncommon word's vector


@dataclass(frozen=True)
class Vocabulary:
    words: list[str]  # commonest first
    cumulative: list[float]  # Zipf's weights, summed, for random.choices


@functools.cache
def vocabulary(seed: int) -> Vocabulary:
    """The synthetic turns' words: made-up words of three syllables, with the topical words spaced
    by rank (geometrically) from TOPICAL_RANKS[0] to TOPICAL_RANKS[1]."""
    rng = random.Random(seed + 3)
    made: dict[str, None] = {}
    while len(made) < VOCABULARY - len(_WORDS):
        word = "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))
        if word not in _WORDS:
            made[word] = None
    words = list(made)
    topical = _WORDS[:]
    rng.shuffle(topical)
    rank = 0
    for word, wanted in zip(topical, np.geomspace(*TOPICAL_RANKS, num=len(topical)), strict=True):
        rank = max(rank + 1, int(wanted))
        words.insert(rank - 1, word)
    weights = np.cumsum(1.0 / np.arange(1, len(words) + 1) ** ZIPF)
    return Vocabulary(words=words, cumulative=weights.tolist())


def _sentence(rng: random.Random, words: Vocabulary) -> str:
    return "I " + " ".join(rng.choices(words.words, cum_weights=words.cumulative, k=rng.randint(8, 24))) + "."


SIF_A = 1e-3  # smooth inverse frequency's constant


def _word_vectors(dimension: int, seed: int) -> dict[str, np.ndarray]:
    """A random direction per word, weighted by its smooth inverse frequency a / (a + p(word))
    (Arora, Liang and Ma, 2017): a sentence encoder gives the commonest words little weight, so
    that turns are near when they share uncommon words, not when they share the commonest."""
    words = vocabulary(seed).words
    draw = np.random.default_rng(seed + 1)
    vectors = draw.standard_normal((len(words), dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    share = 1.0 / np.arange(1, len(words) + 1) ** ZIPF
    share /= share.sum()
    vectors *= (SIF_A / (SIF_A + share))[:, None].astype(np.float32)
    return dict(zip(words, vectors, strict=True))


def _vector_of(text: str, words: dict[str, np.ndarray], noise: np.random.Generator) -> np.ndarray:
    """A text's synthetic vector: its vocabulary words' weighted vectors summed, plus noise, normalised."""
    dimension = len(next(iter(words.values())))
    found = [words[w] for w in text.lower().replace("?", " ").replace(".", " ").split() if w in words]
    shake = noise.standard_normal(dimension).astype(np.float32)
    vector = np.sum(found, axis=0) + NOISE * shake / np.linalg.norm(shake) if found else shake
    return vector / np.linalg.norm(vector)


def seed_turns(*, turns: int, seed: int = 7, batch: int = 2000, progress: bool = True) -> tuple[User, int]:
    """A user with `turns` indexed past turns; returns the user and the dimension used."""
    embedder = get_embedder()
    dimension = int(embedder.embed(["dimension"]).shape[1])
    user = get_user_model().objects.create_user(username=f"bench-history-{turns}")
    rng = random.Random(seed)
    noise = np.random.default_rng(seed)
    words = _word_vectors(dimension, seed)
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
                    content=_sentence(rng, vocabulary(seed)),
                    memory_state=Turn.MemoryState.DONE,
                )
            )
        created = Turn.objects.bulk_create(rows)
        for turn in created:
            vector = _vector_of(turn.content, words, noise)
            turn_index(user=user, turn=turn, vector=vector, embedding_model=embedder.name, config=SEARCH_CONFIGS["en"])
        made += size
        bar.update(size)
    bar.close()
    settle(Turn._meta.db_table, Conversation._meta.db_table)  # statistics, the full-text index's pending entries merged
    return user, dimension


def _exactness(user: User, asked_in: Conversation, dimension: int, seed: int) -> tuple[float, float, list[float]]:
    """The shares of the exact top 10 and 30 nearest that the approximate statement returns, and
    the exact nearest turns' mean similarity to the probe at places 1, 10 and 30 (how far the
    nearest stand out from the rest)."""
    model = get_embedder().name
    words, noise = _word_vectors(dimension, seed), np.random.default_rng(seed + 2)
    top, nearest, similarity = [], [], []
    for text in PROBES:
        vector = _vector_of(text, words, noise)
        found: dict[bool, list[Excerpt]] = {}
        for sorted_exactly in (False, True):
            with transaction.atomic():
                if sorted_exactly:
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT set_config('enable_indexscan', 'off', true)")
                found[sorted_exactly] = history_nearest(
                    user=user,
                    text=text,
                    vector=vector,
                    embedding_model=model,
                    exclude_conversation_id=asked_in.pk,
                    k=CANDIDATES * 2,
                    min_sim=-1.0,
                )
        approximate, exact = found[False], found[True]
        top.append(len({e.turn.pk for e in approximate[:10]} & {e.turn.pk for e in exact[:10]}) / 10)
        by_embedding = [{e.turn.pk for e in excerpts if e.dense_rank is not None} for excerpts in (approximate, exact)]
        nearest.append(len(by_embedding[0] & by_embedding[1]) / max(1, len(by_embedding[1])))
        exact_nearest = sorted((e.dense_rank, e.similarity) for e in exact if e.dense_rank is not None)
        similarity.append([exact_nearest[place - 1][1] for place in SIMILARITY_PLACES])
    return float(np.mean(top)), float(np.mean(nearest)), np.mean(similarity, axis=0).round(3).tolist()


SIMILARITY_PLACES = (1, 10, CANDIDATES)


def run_history_bench(*, turns: int, repeats: int = 10, progress: bool = True, seed: int = 7) -> HistoryBenchResult:
    user, dimension = seed_turns(turns=turns, progress=progress, seed=seed)
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
    statement, every_word, combined, given = [], [], [], 0
    for _ in range(repeats):
        for text, vector in zip(PROBES, vectors, strict=True):
            started = time.perf_counter()
            statement_of(text, vector)
            statement.append(time.perf_counter() - started)
        with override_settings(CHAT_HISTORY_COMMON_SHARE=1.0):
            for text, vector in zip(PROBES, vectors, strict=True):
                started = time.perf_counter()
                statement_of(text, vector)
                every_word.append(time.perf_counter() - started)
        for text in PROBES:
            started = time.perf_counter()
            read = read_turn(user, text)
            found = history_for_turn(user=user, text=text, read=read, conversation=asked_in)
            combined.append(time.perf_counter() - started)
            given += len(found)
    top10, nearest30, similarity = _exactness(user, asked_in, dimension, seed)
    return HistoryBenchResult(
        turns=turns,
        probes=len(statement),
        statement_ms=percentiles(statement),
        every_word_ms=percentiles(every_word),
        combined_ms=percentiles(combined),
        excerpts_given=given,
        top10_exact=top10,
        nearest30_exact=nearest30,
        nearest_similarity=similarity,
        machine=machine(),
        plan=history_plan(
            user=user,
            text=PROBES[0],
            vector=vectors[0],
            embedding_model=embedder.name,
            exclude_conversation_id=asked_in.pk,
            k=3,
        ),
    )
