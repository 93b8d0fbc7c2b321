"""What users and staff do to the durable memory tier: add, correct, delete, restore, forget in
chat, pause, and the retention that purges. The write path of a chat turn is memoryapp.write."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone
from pgvector import Vector

from chat.models import Turn
from memoryapp import sensitive
from memoryapp.embeddings import Embedder, get_embedder
from memoryapp.hashing import content_hash
from memoryapp.keys import category_of, keys_of
from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryRecall, MemorySettings
from memoryapp.orders import obeyed, orders_problem
from memoryapp.parsed import ParsedTurn, parse_turn
from memoryapp.slots import slot_of
from memoryapp.write.extract import clean_fact
from memoryapp.write.store import drop_unused_needs, supersede, write_keys

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


class MemoryConflict(Exception):
    """The change would make a second live memory with the same text."""


class UndoExpired(Http404):
    """The undo period for a deleted memory has passed (a 404 to anything that does not ask)."""


def _history(memory: Memory, user: User, actor: User | None, action: str, **details) -> MemoryEvent:
    """One entry of the memory's history: the user's own doing unless `actor` (staff) says otherwise."""
    return MemoryEvent.objects.create(memory=memory, user=user, actor=actor or user, action=action, **details)


def _live_or_404(user: User, memory_id: int, *, deleted: bool = False) -> Memory:
    return get_object_or_404(
        Memory.objects.select_for_update().defer("embedding"),
        pk=memory_id,
        user=user,
        deleted_at__isnull=not deleted,
    )


@transaction.atomic
def memory_soft_delete(*, user: User, memory_id: int, actor: User | None = None, turn: Turn | None = None) -> Memory:
    """Hide a memory from recall from the very next request on; the row stays for incident review.
    `turn`: the chat turn that asked for it ("Forget that I'm a nurse")."""
    memory = _live_or_404(user, memory_id)
    memory.deleted_at = memory.updated_at = timezone.now()
    Memory.objects.filter(pk=memory.pk, user=user).update(deleted_at=memory.deleted_at, updated_at=memory.updated_at)
    _history(memory, user, actor, MemoryEvent.Action.DELETED, turn=turn, old_text=memory.text)
    return memory


FORGET_MAX = 3
FORGET_GAP = 0.05


@transaction.atomic
def memory_forget_asked(*, user: User, turn: Turn, said: ParsedTurn | None = None) -> list[Memory]:
    """Forget what a chat turn asks to forget ("Forget that I'm a nurse", "Delete what I told
    you about my daughter", "Olvida que soy enfermera": memoryapp.forgetting): the live
    memories nearest to what it names, found as the read path
    finds them (their text and keys, over the recall floor), the nearest and any within
    FORGET_GAP of it, at most FORGET_MAX. Each is deleted as on the memory page (with the same
    Undo), the turn recorded on its event. None when the turn names nothing ("Forget it.") or
    nothing clears the floor; the page then says so. `said` is the turn parsed, when the caller
    has it."""
    from memoryapp.read.recall import recall

    named = (said or parse_turn(turn.content)).forget_named
    if named is None:
        return []
    found = recall(user, named)
    if not found:
        return []
    nearest = found[0].similarity
    chosen = [item.memory for item in found if item.similarity >= nearest - FORGET_GAP][:FORGET_MAX]
    return [memory_soft_delete(user=user, memory_id=memory.pk, turn=turn) for memory in chosen]


@transaction.atomic
def memory_restore(*, user: User, memory_id: int, actor: User | None = None, window: bool = True) -> Memory:
    """Undo a delete. Users may restore for MEMORY_RESTORE_DAYS ("Recently deleted"); staff
    (window=False) at any time.

    Raises MemoryConflict when the same fact has been stated again since, as a new live row.
    """
    memory = _live_or_404(user, memory_id, deleted=True)
    deleted_at = memory.deleted_at or timezone.now()  # set: the row was looked up as deleted
    if window and timezone.now() - deleted_at > timedelta(days=settings.MEMORY_RESTORE_DAYS):
        raise UndoExpired(
            f"This memory was deleted more than {settings.MEMORY_RESTORE_DAYS} days ago and can no longer be restored."
        )
    if Memory.objects.filter(user=user, content_hash=memory.content_hash, deleted_at__isnull=True).exists():
        raise MemoryConflict("This fact has been remembered again since it was deleted.")
    memory.deleted_at, memory.updated_at = None, timezone.now()
    Memory.objects.filter(pk=memory.pk, user=user).update(deleted_at=None, updated_at=memory.updated_at)
    supersede(user=user, memory_id=memory.pk, text=memory.text, actor=actor or user)
    _history(memory, user, actor, MemoryEvent.Action.RESTORED)
    return memory


def _embedded(text: str) -> tuple[Embedder, np.ndarray, dict[str, np.ndarray]]:
    """A memory text the user wrote, embedded with its keys in one batch, before any transaction
    (no lock is held across the model call): the embedder, the text's vector, each key's."""
    embedder = get_embedder()
    keys = keys_of(text)
    vector, *key_vectors = embedder.embed([text, *keys])
    return embedder, vector, dict(zip(keys, key_vectors, strict=True))


def memory_correct(*, user: User, memory_id: int, text: str, actor: User | None = None) -> Memory:
    """Replace a memory's text with the user's correction and re-embed it.

    Provenance (source conversation and turn, evidence, recalls) stays: the memory is the same
    belief, corrected. The edit is recorded with the text before and after.
    Raises ValueError for unusable text and MemoryConflict when another live memory already says it.
    """
    cleaned = clean_fact(text)
    if cleaned is None:
        raise ValueError(f"A memory must be 1 to {settings.MEMORY_MAX_FACT_CHARS} characters of text.")
    embedder, vector, keyed_vectors = _embedded(cleaned)
    new_hash = content_hash(cleaned)
    with transaction.atomic():
        memory = _live_or_404(user, memory_id)
        if (
            Memory.objects.filter(user=user, content_hash=new_hash, deleted_at__isnull=True)
            .exclude(pk=memory.pk)
            .exists()
        ):
            raise MemoryConflict("Another memory already says this.")
        old_text = memory.text
        Memory.objects.filter(pk=memory.pk, user=user).update(
            text=cleaned,
            content_hash=new_hash,
            slot=slot_of(cleaned),
            sensitive=category_of(cleaned),
            standing=obeyed(cleaned),
            embedding=vector.tolist(),
            embedding_model=embedder.name,
            updated_at=timezone.now(),
        )
        with connection.cursor() as cursor:
            write_keys(cursor, user=user, memory_id=memory.pk, model_name=embedder.name, known=keyed_vectors)
        _history(memory, user, actor, MemoryEvent.Action.CORRECTED, old_text=old_text, new_text=cleaned)
        supersede(user=user, memory_id=memory.pk, text=cleaned, actor=actor or user)
    memory.text, memory.content_hash, memory.embedding_model = cleaned, new_hash, embedder.name
    return memory


def memory_pause_set(*, user: User, paused: bool) -> bool:
    """Pause memory or turn it back on. While paused, no memory is read into a reply and nothing
    is written from what the user says; turns said meanwhile are marked so and never written
    later (chat.services.chat_user_turn). The user's own actions on the store (add, correct,
    delete, forget in chat) still work. Returns the new state."""
    MemorySettings.objects.update_or_create(user=user, defaults={"paused": paused})
    return paused


def memory_reference_history_set(*, user: User, on: bool) -> bool:
    """Turn the chat history reference on or off: off, nothing from the user's past conversations
    is read into a reply (chat.history); saved memories still are. Returns the new state."""
    MemorySettings.objects.update_or_create(user=user, defaults={"reference_history": on})
    return on


class MemoryRefused(ValueError):
    """A memory the user wrote that no memory may be: a secret, or a standing instruction with orders."""


def memory_add(*, user: User, text: str, actor: User | None = None) -> tuple[Memory, bool]:
    """A memory the user writes by hand on the memory page or through the API, stored as written:
    no extraction and no gate, only what no memory may be is refused (a password, key, card,
    bank or id number: memoryapp.sensitive; a standing instruction that carries orders:
    memoryapp.orders). It is embedded with its keys and deduplicated like any memory: the same
    fact again refreshes the live one (`last_seen`, `times_seen`); a newer fact in its slot
    retires the older. Its provenance is "added by hand", with the time (an ADDED event).
    Returns the memory and whether it is new. Raises ValueError for unusable text and
    MemoryRefused for what may not be kept."""
    cleaned = clean_fact(text)
    if cleaned is None:
        raise ValueError(f"A memory must be 1 to {settings.MEMORY_MAX_FACT_CHARS} characters of text.")
    if sensitive.secret_kind(cleaned):
        raise MemoryRefused("This looks like a password, key, card, bank or ID number: those are never stored.")
    problem = orders_problem(cleaned)
    if problem:
        raise MemoryRefused(problem[0].upper() + problem[1:] + ".")
    embedder, vector, keyed_vectors = _embedded(cleaned)
    new_hash = content_hash(cleaned)
    now = timezone.now()
    with transaction.atomic():
        live = Memory.objects.select_for_update().filter(user=user, content_hash=new_hash, deleted_at__isnull=True)
        memory = live.first()
        created = memory is None
        if memory is not None:
            live.update(last_seen=now, updated_at=now, times_seen=F("times_seen") + 1)
        else:
            memory = Memory.objects.create(
                user=user,
                text=cleaned,
                embedding=vector.tolist(),
                embedding_model=embedder.name,
                content_hash=new_hash,
                slot=slot_of(cleaned),
                sensitive=category_of(cleaned),
                standing=obeyed(cleaned),
                added_by_hand=True,
                last_seen=now,
            )
            with connection.cursor() as cursor:
                write_keys(cursor, user=user, memory_id=memory.pk, model_name=embedder.name, known=keyed_vectors)
            _history(memory, user, actor, MemoryEvent.Action.ADDED, new_text=cleaned)
            supersede(user=user, memory_id=memory.pk, text=cleaned, actor=actor or user)
    return memory, created


def _soft_delete_live(*, user: User, live: QuerySet[Memory], actor: User) -> int:
    """Soft-delete the user's live memories in `live` in three statements however many there
    are (lock, mark, one history row each); runs inside the caller's transaction."""
    now = timezone.now()
    ids = list(live.filter(user=user, deleted_at__isnull=True).select_for_update().values_list("id", flat=True))
    Memory.objects.filter(user=user, pk__in=ids).update(deleted_at=now, updated_at=now)
    MemoryEvent.objects.bulk_create(
        MemoryEvent(memory_id=pk, user=user, actor=actor, action=MemoryEvent.Action.DELETED) for pk in ids
    )
    return len(ids)


@transaction.atomic
def memory_forget_all(*, user: User) -> int:
    """Soft-delete every live memory of the user; returns how many."""
    return _soft_delete_live(user=user, live=Memory.objects.filter(user=user), actor=user)


@transaction.atomic
def memory_detach_conversation(*, user: User, conversation_id: int, forget_learned: bool = False) -> int:
    """Let go of a conversation that is about to be deleted; returns how many memories were forgotten.

    Memories first learned in it stay (they are the user's to keep or delete) but no longer
    point at its turns, and neither do their restatements; the record of which memories its
    replies were given goes with the replies. With `forget_learned`, the memories first
    learned in it are soft-deleted first, in bulk. Every statement names the owner.
    """
    learned = Memory.objects.filter(user=user, source_conversation_id=conversation_id)
    forgotten = _soft_delete_live(user=user, live=learned, actor=user) if forget_learned else 0
    MemoryRecall.objects.filter(user=user, conversation_id=conversation_id).delete()
    MemoryEvidence.objects.filter(user=user, conversation_id=conversation_id).update(conversation=None, turn=None)
    learned.update(source_conversation=None, source_turn=None)
    return forgotten


def recall_log(*, user: User, probe_turn: Turn, reply_turn: Turn, recalled: list) -> None:
    """Record which memories went into a reply, with similarity and rank, for incident review."""
    if reply_turn.user_id != user.pk or probe_turn.user_id != user.pk:
        raise PermissionError("recall_log() was given a turn that belongs to another user")
    MemoryRecall.objects.bulk_create(
        [
            MemoryRecall(
                memory_id=item.memory.pk,
                user=user,
                conversation_id=reply_turn.conversation_id,
                probe_turn=probe_turn,
                reply_turn=reply_turn,
                similarity=item.similarity,
                rank=item.rank,
                standing=item.standing,
                matched_key=item.matched_key,
                profile=item.profile,
            )
            for item in recalled
            if item.memory.user_id == user.pk
        ]
    )


def memory_admin_log_erase(*, user: User) -> int:
    """Delete the admin log entries about the user's memories: each keeps the memory's text."""
    ids = [str(pk) for pk in Memory.objects.filter(user=user).values_list("id", flat=True)]
    memories = ContentType.objects.get_for_model(Memory)
    deleted, _ = LogEntry.objects.filter(content_type=memories, object_id__in=ids).delete()
    return deleted


def memory_purge_deleted(*, older_than: timedelta) -> dict[str, int]:
    """Hard-delete memories soft-deleted more than `older_than` ago, with their evidence,
    recall and history rows (retention), and the need wordings no key has any more. Live
    memories are never touched."""
    cutoff = timezone.now() - older_than
    with transaction.atomic():
        _, by_model = Memory.objects.filter(deleted_at__isnull=False, deleted_at__lt=cutoff).delete()
    removed = {label.split(".")[-1]: count for label, count in by_model.items()}
    if unused := drop_unused_needs():
        removed["memoryneed"] = unused
    return removed


_REEMBED = f"""
    UPDATE {Memory._meta.db_table} SET embedding = %s::vector, embedding_model = %s
    WHERE id = %s AND user_id = %s AND text = %s
"""


def _pending(model: str) -> QuerySet[Memory]:
    """Memories, live or deleted (a deleted one may be restored), whose vector or keys are not
    yet of `model`."""
    return Memory.objects.filter(~Q(embedding_model=model) | ~Q(keys_model=model))


def memory_reembed_batch(*, after_id: int = 0, user_id: int | None = None, batch_size: int = 256) -> tuple[int, int]:
    """Move one batch of memories to the configured embedding model, in id order after
    `after_id`: embed their texts and keys (memoryapp.keys) in one call, then update the rows
    and their keys in one transaction. Returns (rows updated, last id seen; 0 when none are left).

    Recall compares only vectors of one model, so a memory is found under the new model as
    soon as its batch commits, and a run stopped anywhere resumes where it stopped. A row whose
    text changed meanwhile (a correction re-embeds it itself) is left as it is. Memories stored
    before keys existed get theirs the same way.
    """
    embedder = get_embedder()
    pending = _pending(embedder.name).filter(id__gt=after_id)
    if user_id is not None:
        pending = pending.filter(user_id=user_id)
    rows = list(pending.order_by("id").values_list("id", "user_id", "text", "embedding_model")[:batch_size])
    if not rows:
        return 0, 0
    keys = [keys_of(text) for _, _, text, _ in rows]
    vectors = iter(embedder.embed([*(text for _, _, text, _ in rows), *(key for ks in keys for key in ks)]))
    text_vectors = [next(vectors) for _ in rows]
    updated = 0
    owners = {owner: get_user_model()(pk=owner) for _, owner, _, _ in rows}
    with transaction.atomic(), connection.cursor() as cursor:
        for (pk, owner, text, model), vector, memory_keys in zip(rows, text_vectors, keys, strict=True):
            known = {key: next(vectors) for key in memory_keys}
            if model != embedder.name:
                cursor.execute(_REEMBED, [Vector(vector).to_text(), embedder.name, pk, owner, text])
                if cursor.rowcount != 1:
                    continue
            write_keys(cursor, user=owners[owner], memory_id=pk, model_name=embedder.name, known=known)
            updated += 1
    return updated, rows[-1][0]


def memory_reembed_pending(*, user_id: int | None = None) -> int:
    """How many memories are embedded by another model than the configured one."""
    pending = _pending(get_embedder().name)
    return (pending.filter(user_id=user_id) if user_id is not None else pending).count()
