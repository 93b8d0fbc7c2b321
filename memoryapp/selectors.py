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


def evidence_for_turns(*, user: AbstractBaseUser, turn_ids: Sequence[int]):
    """What each of these user turns wrote to memory (created or refreshed), by turn."""
    from memoryapp.models import MemoryEvidence

    rows = (
        MemoryEvidence.objects.filter(user=user, turn_id__in=list(turn_ids))
        .select_related("memory")
        .defer("memory__embedding")
        .order_by("turn_id", "id")
    )
    by_turn: dict[int, list] = {}
    for row in rows:
        by_turn.setdefault(row.turn_id, []).append(row)
    return by_turn


def recalls_for_replies(*, user: AbstractBaseUser, reply_ids: Sequence[int]):
    """The memories each of these assistant replies was given, by reply, in rank order."""
    from memoryapp.models import MemoryRecall

    rows = (
        MemoryRecall.objects.filter(user=user, reply_turn_id__in=list(reply_ids))
        .select_related("memory")
        .defer("memory__embedding")
        .order_by("reply_turn_id", "rank")
    )
    by_reply: dict[int, list] = {}
    for row in rows:
        by_reply.setdefault(row.reply_turn_id, []).append(row)
    return by_reply


@dataclass(frozen=True)
class MemoryTrace:
    memory: Memory
    evidence: list  # every statement, first one first
    recalls: list  # every reply it was put into, newest first


def memory_trace(*, user: AbstractBaseUser, memory_id: int) -> MemoryTrace:
    """A memory of this user (live or deleted) with its evidence and recalls, or 404."""
    from django.shortcuts import get_object_or_404

    from memoryapp.models import MemoryEvidence, MemoryRecall

    memory = get_object_or_404(
        Memory.objects.defer("embedding").select_related("source_conversation", "source_turn"),
        pk=memory_id,
        user=user,
    )
    evidence = list(
        MemoryEvidence.objects.filter(memory=memory, user=user)
        .select_related("conversation", "turn")
        .order_by("created_at", "id")
    )
    recalls = list(
        MemoryRecall.objects.filter(memory=memory, user=user)
        .select_related("conversation", "reply_turn", "probe_turn")
        .order_by("-created_at", "-id")
    )
    return MemoryTrace(memory=memory, evidence=evidence, recalls=recalls)
