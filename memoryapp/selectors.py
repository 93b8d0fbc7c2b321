"""Reads of the durable memory tier for pages, the API and the admin: lists, traces, export.
The read path of a chat turn is memoryapp.read.recall."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef, Prefetch, Subquery
from django.shortcuts import get_object_or_404
from django.utils import timezone

from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryKey, MemoryRecall, MemorySettings
from memoryapp.read.recall import PROFILE_MAX, Recalled, grouped, recall, selected
from memoryapp.serializers import MemoryExportSerializer

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def memory_groups(*, user: User) -> list[tuple[str, list[Memory]]]:
    """The user's live memories by kind (memoryapp.keys.GROUPS), newest first in each group, and
    the standing instructions last: the profile page."""
    memories = list(memory_list(user=user)[: PROFILE_MAX * 10])
    return grouped(memories, key=lambda memory: memory.text)


def memory_paused(*, user: User) -> bool:
    """Whether the user has paused memory (memoryapp.models.MemorySettings; no row: memory on)."""
    return MemorySettings.objects.filter(user=user, paused=True).exists()


def memory_switches(*, user: User) -> MemorySettings:
    """The user's memory switches in one query: their row, or the defaults (memory on, chat
    history referenced) when they never changed one."""
    return MemorySettings.objects.filter(user=user).first() or MemorySettings(user=user)


def memory_list(*, user: User, text: str = "", include_deleted: bool = False):
    """The user's memories, newest first, optionally filtered by a plain text match."""
    queryset = (
        Memory.objects.filter(user=user)
        .select_related("source_conversation", "source_turn")
        .defer("embedding")
        .order_by("-created_at", "-id")
    )
    if text.strip():
        queryset = queryset.filter(text__icontains=text.strip())
    return queryset if include_deleted else queryset.filter(deleted_at__isnull=True)


# How a memory came to be deleted, as "Recently deleted" says it (its latest delete's event).
_HOW_DELETED = {
    MemoryEvent.Action.DELETED: "you deleted it",
    MemoryEvent.Action.SUPERSEDED: "replaced by a newer fact",
}


def memory_recently_deleted(*, user: User) -> list[Memory]:
    """The user's memories deleted in the last MEMORY_RESTORE_DAYS days, most recently deleted
    first, each with `how` (deleted on the page or in chat, or replaced by a newer fact) and
    `asked_in` (the chat turn that asked to forget it, if one did): "Recently deleted"."""
    since = timezone.now() - timedelta(days=settings.MEMORY_RESTORE_DAYS)
    latest = MemoryEvent.objects.filter(
        user=user,
        memory_id=OuterRef("pk"),
        action__in=[MemoryEvent.Action.DELETED, MemoryEvent.Action.SUPERSEDED],
    ).order_by("-created_at", "-id")
    rows: list[Memory] = list(
        Memory.objects.filter(user=user, deleted_at__gte=since)
        .defer("embedding")
        .annotate(deleted_how=Subquery(latest.values("action")[:1]), asked_in=Subquery(latest.values("turn_id")[:1]))
        .order_by("-deleted_at", "-id")
    )
    for row in rows:
        how = _HOW_DELETED.get(selected(row, "deleted_how"), "deleted")
        row.how = "forgotten in chat" if selected(row, "asked_in") else how  # type: ignore[attr-defined]
    return rows


def memory_get(*, user: User, memory_id: int, live: bool = True) -> Memory:
    """One of the user's memories, or 404 (another user's id is indistinguishable from a missing one)."""
    queryset = Memory.objects.defer("embedding").filter(user=user)
    return get_object_or_404(queryset.filter(deleted_at__isnull=True) if live else queryset, pk=memory_id)


SEARCH_K = 20


def memory_search(*, user: User, probe: str, k: int = SEARCH_K) -> list[Recalled]:
    """Semantic search over the user's own live memories: the read path's floors, without the
    need decision (a search is always about the user's own)."""
    return recall(user, probe, k=k)


def _grouped_by(rows, column: str) -> dict[int, list]:
    """The rows of a memory table that name the turns asked about, grouped by the turn, each
    with its memory loaded (without its vector), in the order the statement gave them."""
    grouped: dict[int, list] = {}
    for row in rows.select_related("memory").defer("memory__embedding"):
        grouped.setdefault(getattr(row, column), []).append(row)
    return grouped


def evidence_for_turns(*, user: User, turn_ids: Sequence[int]):
    """What each of these user turns wrote to memory (created or refreshed), by turn; each row's
    `replaced` lists the older facts that memory retired (see memoryapp.slots)."""
    retired = MemoryEvent.objects.filter(
        user=user, action=MemoryEvent.Action.SUPERSEDED, replaced_by_id=OuterRef("memory_id")
    ).order_by("id")
    rows = (
        MemoryEvidence.objects.filter(user=user, turn_id__in=list(turn_ids))
        .annotate(replaced=ArraySubquery(retired.values("old_text")))
        .order_by("turn_id", "id")
    )
    return _grouped_by(rows, "turn_id")


def forgotten_for_turns(*, user: User, turn_ids: Sequence[int]):
    """The memories each of these user turns asked to forget and had deleted, by turn; each row
    is the delete's event, its memory loaded (live again if the user undid it)."""
    rows = MemoryEvent.objects.filter(
        user=user, action=MemoryEvent.Action.DELETED, turn_id__in=list(turn_ids)
    ).order_by("turn_id", "id")
    return _grouped_by(rows, "turn_id")


def recalls_for_replies(*, user: User, reply_ids: Sequence[int]):
    """The memories each of these assistant replies was given, by reply, in rank order."""
    rows = MemoryRecall.objects.filter(user=user, reply_turn_id__in=list(reply_ids)).order_by("reply_turn_id", "rank")
    return _grouped_by(rows, "reply_turn_id")


@dataclass(frozen=True)
class MemoryTrace:
    """A memory with its provenance: the one document the trace page, the API and the export show."""

    memory: Memory
    keys: list[str]  # the needs it answers (memoryapp.keys)
    evidence: list  # every statement, first one first
    recalls: list  # every reply it was put into, newest first
    events: list  # corrections, deletes and restores, oldest first


def _traced(user: User):
    """The user's memories (live or deleted) with everything a trace shows, in five queries
    however many memories: each prefetch names the owner too."""
    return (
        Memory.objects.filter(user=user)
        .defer("embedding")
        .select_related("source_conversation", "source_turn")
        .prefetch_related(
            Prefetch(
                "evidence",
                MemoryEvidence.objects.filter(user=user)
                .select_related("conversation", "turn")
                .order_by("created_at", "id"),
            ),
            Prefetch(
                "recalls",
                MemoryRecall.objects.filter(user=user)
                .select_related("conversation", "reply_turn", "probe_turn")
                .order_by("-created_at", "-id"),
            ),
            Prefetch("events", MemoryEvent.objects.filter(user=user).order_by("created_at", "id")),
            Prefetch("keys", MemoryKey.objects.filter(user=user).defer("embedding").order_by("id")),
        )
    )


def _trace(memory: Memory) -> MemoryTrace:
    return MemoryTrace(
        memory=memory,
        keys=list(
            dict.fromkeys(key.text for key in memory.keys.all() if key.embedding_model == memory.embedding_model)
        ),
        evidence=list(memory.evidence.all()),
        recalls=list(memory.recalls.all()),
        events=list(memory.events.all()),
    )


def memory_trace(*, user: User, memory_id: int) -> MemoryTrace:
    """A memory of this user (live or deleted) with its evidence, recalls and history, or 404."""
    return _trace(get_object_or_404(_traced(user), pk=memory_id))


def memory_traces(*, user: User) -> list[MemoryTrace]:
    """Every memory of the user, deleted ones included, oldest first, each with its trace."""
    return [_trace(memory) for memory in _traced(user).order_by("created_at", "id")]


def memory_export(*, user: User) -> dict:
    """Everything remembered about the user as plain data (no vectors): every memory's trace
    document, exactly as the API serves one."""
    return MemoryExportSerializer({"user": user.get_username(), "memories": memory_traces(user=user)}).data


def recalled_before(*, user_id: int, turn_ids: Sequence[int]) -> dict[int, list[Recalled]]:
    """What the recall log says each of these user turns' replies was given, in the order it was
    given, by turn id: live memories only, so a memory deleted since is never shown to a model
    again, and a corrected one is shown as it reads now."""
    rows = (
        MemoryRecall.objects.filter(
            user_id=user_id, probe_turn_id__in=list(turn_ids), memory__user_id=user_id, memory__deleted_at__isnull=True
        )
        .select_related("memory__source_conversation")
        .order_by("probe_turn_id", "rank", "pk")
    )
    given: dict[int, list[Recalled]] = {}
    for row in rows:
        given.setdefault(row.probe_turn_id, []).append(
            Recalled(
                memory=row.memory,
                similarity=row.similarity,
                rank=row.rank,
                standing=row.standing,
                matched_key=row.matched_key,
                profile=row.profile,
            )
        )
    return given
