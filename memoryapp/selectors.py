"""Reads from the durable memory tier. `recall` is the read path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from pgvector.django import CosineDistance

from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory
from memoryapp.thresholds import recall_floor

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@dataclass(frozen=True)
class Recalled:
    memory: Memory
    similarity: float
    rank: int


def memory_nearest(
    *,
    user: AbstractBaseUser,
    vector: Sequence[float],
    embedding_model: str,
    k: int,
    min_sim: float,
) -> list[Recalled]:
    """The user's k nearest live memories by cosine distance, then the similarity floor.

    One statement: the owner predicate, `deleted_at IS NULL` and the model name are inside
    it, and the sort is exact over the user's rows (B-tree on user, no approximate index),
    so the result is the user's true top-k. The floor is applied after the limit: top-k
    alone always returns k rows, however unrelated.
    """
    rows = (
        Memory.objects.filter(user=user, deleted_at__isnull=True, embedding_model=embedding_model)
        .annotate(distance=CosineDistance("embedding", list(map(float, vector))))
        .defer("embedding")
        .order_by("distance", "id")[:k]
    )
    recalled: list[Recalled] = []
    for row in rows:
        similarity = 1.0 - float(row.distance)
        if similarity >= min_sim:
            recalled.append(Recalled(memory=row, similarity=similarity, rank=len(recalled) + 1))
    return recalled


def recall(user: AbstractBaseUser, probe: str, k: int | None = None, min_sim: float | None = None) -> list[Recalled]:
    """Memories for the current turn. The probe is this turn's text only, embedded once."""
    if not probe or not probe.strip():
        return []
    embedder = get_embedder()
    vector = embedder.embed([probe])[0]
    return memory_nearest(
        user=user,
        vector=vector,
        embedding_model=embedder.name,
        k=k if k is not None else settings.MEMORY_RECALL_K,
        min_sim=min_sim if min_sim is not None else recall_floor(embedder.name),
    )


def memory_list(*, user: AbstractBaseUser, include_deleted: bool = False):
    """The user's memories, newest first."""
    queryset = Memory.objects.filter(user=user).defer("embedding").order_by("-created_at", "-id")
    return queryset if include_deleted else queryset.filter(deleted_at__isnull=True)
