"""Deterministic synthetic memories and probes, shared by our side and the mem0 side.

Plain numpy only: `mem0_side.py` imports this module inside the mem0 venv, so both stores
are loaded with bit-identical vectors without shipping gigabytes between processes.
A user's vectors depend only on (seed, user index), so any user can be regenerated on its
own for the brute-force truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# all-MiniLM-L6-v2's space, which the mem0 side embeds its searches in; our side generates
# vectors in the configured embedder's dimension (`Dataset.dimensions`).
DIMENSIONS = 384
DEFAULT_SEED = 20261202
# The heavy user is generated from its own stream, away from the regular users' indexes.
HEAVY_USER_INDEX = 9_000_000


@dataclass(frozen=True)
class Dataset:
    """`users` regular users with `per_user` memories each, plus an optional heavy user."""

    name: str
    users: int
    per_user: int
    heavy: int = 0
    seed: int = DEFAULT_SEED
    dimensions: int = DIMENSIONS
    # Memory keys per memory (memoryapp.keys): the first is the fact asked, the rest needs of its
    # kind. Our side only; mem0 stores none.
    keys: int = 4
    # Hash partitions by owner of the distributed tables (core.partitioning); 0 keeps them flat.
    partitions: int = 0

    @property
    def rows(self) -> int:
        return self.users * self.per_user + self.heavy

    def user_indexes(self) -> list[int]:
        return list(range(self.users)) + ([HEAVY_USER_INDEX] if self.heavy else [])

    def count_for(self, user_index: int) -> int:
        return self.heavy if user_index == HEAVY_USER_INDEX else self.per_user

    def vectors(self, user_index: int) -> np.ndarray:
        """Every vector of one user, in generation order."""
        return user_vectors(self.seed, user_index, self.count_for(user_index), self.dimensions)

    def key_vectors(self, user_index: int) -> np.ndarray:
        """The key vectors of one user's memories, shape (memories, keys, dimensions), from a
        stream of their own (the memory vectors stay those of a dataset without keys)."""
        count = self.count_for(user_index)
        flat = user_vectors(self.seed + 1, user_index, count * self.keys, self.dimensions)
        return flat.reshape(count, self.keys, self.dimensions)


def user_vectors(seed: int, user_index: int, count: int, dimensions: int = DIMENSIONS) -> np.ndarray:
    """`count` random unit vectors (float32) owned by one user, the same on every call."""
    rng = np.random.default_rng([seed, user_index])
    vectors = rng.standard_normal((count, dimensions), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def username(user_index: int) -> str:
    return f"bench-u{user_index}"


def memory_text(user_index: int, position: int) -> str:
    # Opaque tokens: no word of a probe matches them, so mem0's keyword (BM25) leg finds
    # nothing and its ranking is its vector search alone, like ours.
    return f"mem u{user_index} n{position}"


def position_of(text: str) -> int:
    """The generation position of a synthetic memory, read back from its text."""
    return int(text.rsplit(" n", 1)[1])


def true_top_k(vectors: np.ndarray, probe: np.ndarray, k: int) -> list[int]:
    """Brute-force cosine top-k positions (vectors are unit length), in float64."""
    similarities = vectors.astype(np.float64) @ probe.astype(np.float64)
    return np.argsort(-similarities, kind="stable")[:k].tolist()


def key_text(user_index: int, position: int, key: int) -> str:
    return f"key {key} of mem u{user_index} n{position}"


def true_top_k_keyed(
    vectors: np.ndarray, keys: np.ndarray, probe: np.ndarray, k: int, *, question_offset: float, key_offset: float
) -> list[int]:
    """Brute-force top-k positions as recall scores memories: the best of the text, the first key
    (the fact asked) less `question_offset` and the other keys less `key_offset`, in float64
    (memoryapp.selectors)."""
    probe64 = probe.astype(np.float64)
    text = vectors.astype(np.float64) @ probe64
    by_key = keys.astype(np.float64) @ probe64
    score = np.maximum(text, by_key[:, 0] - question_offset)
    if keys.shape[1] > 1:
        score = np.maximum(score, by_key[:, 1:].max(axis=1) - key_offset)
    return np.argsort(-score, kind="stable")[:k].tolist()


_OPENERS = [
    "What did I tell you about",
    "Remind me about",
    "Do you remember",
    "Can you recall",
    "What was it I said regarding",
    "Quick question about",
    "Tell me again about",
    "Any notes on",
]
_TOPICS = [
    "my standup time",
    "the dentist appointment",
    "my sister's birthday",
    "the project deadline",
    "where I live",
    "my favourite coffee",
    "the laptop I use",
    "my allergy",
    "the trip to Kyoto",
    "my manager's name",
    "the gym schedule",
    "my timezone",
    "the book club",
    "my dog's vet visit",
    "the budget review",
    "my daughter's school",
    "the flight to Berlin",
    "my running plan",
    "the tax forms",
    "my guitar lessons",
    "the rent increase",
    "my diet",
    "the conference talk",
    "my password manager",
    "the kitchen renovation",
]
_CLOSERS = ["?", " again?", ", please?", " from last week?", " if you can?"]


def probe_texts(count: int, seed: int = DEFAULT_SEED) -> list[str]:
    """`count` short user questions, varied enough that embedding them is realistic work."""
    rng = np.random.default_rng([seed, 1])
    texts = []
    for _ in range(count):
        opener = _OPENERS[rng.integers(len(_OPENERS))]
        topic = _TOPICS[rng.integers(len(_TOPICS))]
        closer = _CLOSERS[rng.integers(len(_CLOSERS))]
        texts.append(f"{opener} {topic}{closer}")
    return texts


def probe_users(dataset: Dataset, count: int) -> list[int]:
    """Which regular user each probe is asked for (uniform, with repeats)."""
    rng = np.random.default_rng([dataset.seed, 2])
    return rng.integers(0, dataset.users, size=count).tolist()


def percentiles(samples_seconds: list[float]) -> dict[str, float]:
    """p50 / p95 / p99 / mean in milliseconds."""
    values = np.asarray(samples_seconds, dtype=np.float64) * 1000.0
    if values.size == 0:
        return {"n": 0}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {
        "n": int(values.size),
        "p50": float(p50),
        "p95": float(p95),
        "p99": float(p99),
        "mean": float(values.mean()),
    }
