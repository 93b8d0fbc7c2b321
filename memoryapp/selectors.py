"""Reads from the durable memory tier. `recall` is the read path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef, Prefetch
from django.shortcuts import get_object_or_404
from pgvector import Vector

from chat.models import Conversation, Turn
from memoryapp import grammar
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryRecall
from memoryapp.need import first_at_lead, turn_need
from memoryapp.serializers import MemoryExportSerializer
from memoryapp.thresholds import lead_floor, recall_floor

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@dataclass(frozen=True)
class Recalled:
    memory: Memory
    similarity: float
    rank: int
    standing: bool = False  # a standing instruction, given to every reply whatever its similarity


_NEAREST_COLUMNS = ", ".join(f"m.{f.column}" for f in Memory._meta.concrete_fields if f.name != "embedding")
# Written out rather than built by the ORM: recall runs on every turn, and compiling the
# equivalent queryset cost more than the database's own work (1.7 ms against 0.8 ms measured).
# The user's live memories of one embedding model, with their distance to a vector and their
# source conversation and turn joined in; `_NEAREST` and `_STANDING` add their own order.
_LIVE_WITH_SOURCE = f"""
    SELECT {_NEAREST_COLUMNS}, c.public_id AS source_public_id, t.seq AS source_seq,
           m.embedding <=> %s::vector AS distance
    FROM {Memory._meta.db_table} m
    LEFT JOIN chat_conversation c ON c.id = m.source_conversation_id AND c.user_id = m.user_id
    LEFT JOIN chat_turn t ON t.id = m.source_turn_id AND t.user_id = m.user_id
    WHERE m.user_id = %s AND m.deleted_at IS NULL AND m.embedding_model = %s"""
_NEAREST = f"""{_LIVE_WITH_SOURCE}
    ORDER BY distance, m.id
    LIMIT %s
"""


def memory_nearest(
    *,
    user: AbstractBaseUser,
    vector: Sequence[float],
    embedding_model: str,
    k: int,
    min_sim: float,
    lead_sim: float | None = None,
) -> list[Recalled]:
    """The user's k nearest live memories by cosine distance, then the similarity floor.

    One statement: the owner predicate, `deleted_at IS NULL` and the model name are inside
    it, and the sort is exact over the user's rows (B-tree on user, no approximate index),
    so the result is the user's true top-k. The floor is applied after the limit: top-k
    alone always returns k rows, however unrelated. The source conversation and turn ride
    along (the request's memory note and the pages name them) without further queries.
    `lead_sim`, when given, is a lower floor for the first row only: for a turn known to need
    the user's memory, the nearest fact may score low and still be the answer ("What do I do
    for a living?" against the nurse memory 0.22).
    """
    rows = Memory.objects.raw(_NEAREST, [Vector(vector).to_text(), user.pk, embedding_model, k])
    recalled: list[Recalled] = []
    for row in rows:
        similarity = 1.0 - float(row.distance)
        if similarity < (lead_sim if lead_sim is not None and not recalled else min_sim):
            continue
        recalled.append(Recalled(memory=_with_source(row), similarity=similarity, rank=len(recalled) + 1))
    return recalled


def _with_source(row: Memory) -> Memory:
    """The row with its source conversation and turn attached from the joined columns."""
    if row.source_conversation_id is not None and row.source_public_id is not None:
        row.source_conversation = Conversation.from_db(
            "default",
            ["id", "user_id", "public_id"],
            [row.source_conversation_id, row.user_id, row.source_public_id],
        )
    if row.source_turn_id is not None and row.source_seq is not None:
        row.source_turn = Turn.from_db(
            "default",
            ["id", "user_id", "conversation_id", "seq"],
            [row.source_turn_id, row.user_id, row.source_conversation_id, row.source_seq],
        )
    return row


# A standing instruction is a memory of how the user wants to be answered: "The user wants the
# assistant to answer in British English.", "The user prefers short answers.", "The user does
# not want bullet points in answers." It holds for every reply, so it is not left to similarity
# ("Explain how black holes form." is nowhere near "British English").
STANDING_PATTERN = (
    r"^the user (wants|would like|prefers|asks|does not want|doesn't want|dislikes)\y.*"
    r"\y(the assistant|answers?|repl(y|ies)|responses?)\y"
)
MAX_STANDING = 5
_STANDING = f"""{_LIVE_WITH_SOURCE} AND m.text ~* %s
    ORDER BY m.last_seen DESC, m.id DESC
    LIMIT %s
"""


def memory_standing(*, user: AbstractBaseUser, vector: Sequence[float], embedding_model: str) -> list[Recalled]:
    """The user's standing instructions, most recently stated first (at most MAX_STANDING), each
    with its similarity to the turn for the record."""
    rows = Memory.objects.raw(
        _STANDING, [Vector(vector).to_text(), user.pk, embedding_model, STANDING_PATTERN, MAX_STANDING]
    )
    return [
        Recalled(memory=_with_source(row), similarity=1.0 - float(row.distance), rank=i, standing=True)
        for i, row in enumerate(rows, start=1)
    ]


def recall(
    user: AbstractBaseUser, probe: str, k: int | None = None, min_sim: float | None = None, *, needed: bool = False
) -> list[Recalled]:
    """Memories for the current turn. The probe is this turn's text only, embedded once. When
    the turn is known to need memory (`needed`), its nearest memory passes at the lead floor."""
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
        lead_sim=lead_floor(embedder.name) if needed and min_sim is None else None,
    )


@dataclass(frozen=True)
class TurnRead:
    """What the read path of a chat turn found, and the turn's embedding for its write path."""

    recalled: list[Recalled]
    vector: np.ndarray | None
    embedding_model: str


def recall_for_turn(user: AbstractBaseUser, text: str) -> list[Recalled]:
    """The memories for a chat turn (see `read_turn`)."""
    return read_turn(user, text).recalled


def nearest_for_turn(
    user: AbstractBaseUser, text: str, vector: Sequence[float], embedding_model: str, *, k: int
) -> list[Recalled]:
    """A turn's k nearest memories as its need decides: none for a turn that needs no memory
    (memoryapp.need), the first at the lead floor for one that asks about the user
    (`first_at_lead`), the recall floor else."""
    need = turn_need(text, vector, embedding_model)
    if need == grammar.NOT_NEEDED:
        return []
    return memory_nearest(
        user=user,
        vector=vector,
        embedding_model=embedding_model,
        k=k,
        min_sim=recall_floor(embedding_model),
        lead_sim=lead_floor(embedding_model) if first_at_lead(text, need) else None,
    )


def read_turn(user: AbstractBaseUser, text: str) -> TurnRead:
    """The read path of a chat turn: first, does the turn need the user's memory at all? A
    general question ("Who founded Tesla?") gets nothing by similarity, however close a stored
    fact is ("The user drives a Tesla."); a turn about the user, or a request whose answer
    depends on who asks, gets its nearest memories with the first at the lead floor. A turn in
    another language is decided on its embedding (memoryapp.need); with an embedder that has no
    weights for that, it gets its memories at the recall floor alone. Then,
    whatever the turn, the user's standing instructions, ranked after the rest. The turn is
    embedded once; its vector goes on to the write path, which needs the same one."""
    embedder = get_embedder()
    if not text or not text.strip():
        return TurnRead([], None, embedder.name)
    vector = embedder.embed([text])[0]
    found = nearest_for_turn(user, text, vector, embedder.name, k=settings.MEMORY_RECALL_K)
    seen = {item.memory.pk for item in found}
    standing = [
        item
        for item in memory_standing(user=user, vector=vector, embedding_model=embedder.name)
        if item.memory.pk not in seen
    ]
    recalled = [
        *found,
        *(
            Recalled(memory=item.memory, similarity=item.similarity, rank=len(found) + i, standing=True)
            for i, item in enumerate(standing, start=1)
        ),
    ]
    return TurnRead(recalled, vector, embedder.name)


def memory_list(*, user: AbstractBaseUser, text: str = "", include_deleted: bool = False):
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


def memory_get(*, user: AbstractBaseUser, memory_id: int, live: bool = True) -> Memory:
    """One of the user's memories, or 404 (another user's id is indistinguishable from a missing one)."""
    queryset = Memory.objects.defer("embedding").filter(user=user)
    return get_object_or_404(queryset.filter(deleted_at__isnull=True) if live else queryset, pk=memory_id)


SEARCH_K = 20


def memory_search(*, user: AbstractBaseUser, probe: str, k: int = SEARCH_K) -> list[Recalled]:
    """Semantic search over the user's own live memories: the read path of a turn that needs
    memory (a search is always about the user's own), with its floors, without the decision."""
    return recall(user, probe, k=k, needed=True)


def evidence_for_turns(*, user: AbstractBaseUser, turn_ids: Sequence[int]):
    """What each of these user turns wrote to memory (created or refreshed), by turn; each row's
    `replaced` lists the older facts that memory retired (see memoryapp.slots)."""
    retired = MemoryEvent.objects.filter(
        user=user, action=MemoryEvent.Action.SUPERSEDED, replaced_by_id=OuterRef("memory_id")
    ).order_by("id")
    rows = (
        MemoryEvidence.objects.filter(user=user, turn_id__in=list(turn_ids))
        .select_related("memory")
        .defer("memory__embedding")
        .annotate(replaced=ArraySubquery(retired.values("old_text")))
        .order_by("turn_id", "id")
    )
    by_turn: dict[int, list] = {}
    for row in rows:
        by_turn.setdefault(row.turn_id, []).append(row)
    return by_turn


def recalls_for_replies(*, user: AbstractBaseUser, reply_ids: Sequence[int]):
    """The memories each of these assistant replies was given, by reply, in rank order."""
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
    """A memory with its provenance: the one document the trace page, the API and the export show."""

    memory: Memory
    evidence: list  # every statement, first one first
    recalls: list  # every reply it was put into, newest first
    events: list  # corrections, deletes and restores, oldest first


def _traced(user: AbstractBaseUser):
    """The user's memories (live or deleted) with everything a trace shows, in four queries
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
        )
    )


def _trace(memory: Memory) -> MemoryTrace:
    return MemoryTrace(
        memory=memory,
        evidence=list(memory.evidence.all()),
        recalls=list(memory.recalls.all()),
        events=list(memory.events.all()),
    )


def memory_trace(*, user: AbstractBaseUser, memory_id: int) -> MemoryTrace:
    """A memory of this user (live or deleted) with its evidence, recalls and history, or 404."""
    return _trace(get_object_or_404(_traced(user), pk=memory_id))


def memory_traces(*, user: AbstractBaseUser) -> list[MemoryTrace]:
    """Every memory of the user, deleted ones included, oldest first, each with its trace."""
    return [_trace(memory) for memory in _traced(user).order_by("created_at", "id")]


def memory_export(*, user: AbstractBaseUser) -> dict:
    """Everything remembered about the user as plain data (no vectors): every memory's trace
    document, exactly as the API serves one."""
    return MemoryExportSerializer({"user": user.get_username(), "memories": memory_traces(user=user)}).data
