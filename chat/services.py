"""Writes to the conversation log, and one chat turn end to end."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Max

from chat import assistant, prompting
from chat.models import Conversation, Turn
from chat.tasks import remember_turn
from core.llm import ModelUnavailable
from memoryapp.selectors import Recalled, recall
from memoryapp.services import memory_detach_conversation, recall_log

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

logger = logging.getLogger(__name__)

TITLE_CHARS = 60


def conversation_create(*, user: AbstractBaseUser, title: str = "") -> Conversation:
    return Conversation.objects.create(user=user, title=title[:200])


@transaction.atomic
def turn_append(
    *,
    user: AbstractBaseUser,
    conversation: Conversation,
    role: str,
    content: str,
    reply_to: Turn | None = None,
    model_name: str = "",
) -> Turn:
    """Append a turn with the next seq. Concurrent appends to one conversation serialise on
    the conversation row, so each gets a distinct seq and none is lost. The caller's
    `conversation` is brought up to date (its title comes from its first user turn)."""
    locked = Conversation.objects.select_for_update().get(pk=conversation.pk, user=user)
    last = Turn.objects.filter(conversation=locked, user=user).aggregate(last=Max("seq"))["last"] or 0
    turn = Turn.objects.create(
        conversation=locked,
        user=user,
        seq=last + 1,
        role=role,
        content=content,
        reply_to=reply_to,
        model_name=model_name,
        memory_state=Turn.MemoryState.PENDING if role == Turn.Role.USER else "",
    )
    changes: dict = {"updated_at": turn.created_at}
    if not locked.title and role == Turn.Role.USER:
        changes["title"] = " ".join(content.split())[:TITLE_CHARS]
    Conversation.objects.filter(pk=locked.pk, user=user).update(**changes)
    for name, value in changes.items():
        setattr(conversation, name, value)
    if "title" not in changes:
        conversation.title = locked.title
    return turn


def chat_user_turn(*, user: AbstractBaseUser, conversation: Conversation, content: str) -> Turn:
    """Step 1 of a chat turn: store what the user said, before any model is involved."""
    return turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content)


@dataclass
class ReplyOutcome:
    user_turn: Turn
    reply: Turn | None = None
    recalled: list[Recalled] = field(default_factory=list)
    error: str | None = None


def _recall_safely(user: AbstractBaseUser, probe: str) -> list[Recalled]:
    try:
        return recall(user, probe)
    except ModelUnavailable:
        # Memory helps the answer; its absence must not cost the user their reply.
        logger.warning("recall failed; answering without memories")
        return []


def _fold_overflow(conversation: Conversation, overflow: list[Turn]) -> Conversation:
    """Fold unsummarised turns that no longer fit into the head summary."""
    fresh = [turn for turn in overflow if turn.seq > conversation.summary_through_seq]
    if not fresh:
        return conversation
    summary = assistant.summarise(conversation.summary, fresh)
    Conversation.objects.filter(pk=conversation.pk, user=conversation.user_id).update(
        summary=summary, summary_through_seq=fresh[-1].seq
    )
    conversation.summary, conversation.summary_through_seq = summary, fresh[-1].seq
    return conversation


def build_request(*, conversation: Conversation, user_turn: Turn, recalled: list[Recalled]) -> list[dict[str, str]]:
    """The messages for the model: summary, memories, and the recent turns up to this one."""
    note = prompting.memory_note(recalled) if recalled else ""
    history = list(
        Turn.objects.filter(
            conversation=conversation,
            user=user_turn.user_id,
            seq__gt=conversation.summary_through_seq,
            seq__lte=user_turn.seq,
        ).order_by("seq")
    )
    window = prompting.fit_window(
        turns=history,
        fixed_tokens=prompting.fixed_tokens(conversation=conversation, note=note),
        budget=settings.CHAT_CONTEXT_TOKENS,
        max_turns=settings.CHAT_MAX_RECENT_TURNS,
    )
    if window.overflow:
        conversation = _fold_overflow(conversation, window.overflow)
    return prompting.build_messages(conversation=conversation, note=note, recent=window.recent)


def chat_reply(*, user: AbstractBaseUser, user_turn: Turn) -> ReplyOutcome:
    """Step 2 of a chat turn: recall, build the request, answer, log, then remember.

    Idempotent per user turn: a turn that already has a reply gets it back, so a retried
    or doubled request never produces two answers. When the model fails, the user's turn is
    kept, nothing partial is written, and the outcome carries a message for a retry button.
    The durable-memory write is queued once per user turn, after its reply.
    """
    if user_turn.user_id != user.pk or user_turn.role != Turn.Role.USER:
        raise PermissionError("chat_reply() needs a user turn of this user")
    existing = Turn.objects.filter(user=user, reply_to=user_turn).first()
    if existing is not None:
        return ReplyOutcome(user_turn=user_turn, reply=existing)

    conversation = Conversation.objects.get(pk=user_turn.conversation_id, user=user)
    recalled = _recall_safely(user, user_turn.content)
    outcome = ReplyOutcome(user_turn=user_turn, recalled=recalled)
    try:
        messages = build_request(conversation=conversation, user_turn=user_turn, recalled=recalled)
        text = assistant.generate_reply(messages, recalled)
    except ModelUnavailable as exc:
        outcome.error = str(exc)
    else:
        try:
            with transaction.atomic():
                reply = turn_append(
                    user=user,
                    conversation=conversation,
                    role=Turn.Role.ASSISTANT,
                    content=text,
                    reply_to=user_turn,
                    model_name=assistant.model_name(),
                )
                recall_log(user=user, probe_turn=user_turn, reply_turn=reply, recalled=recalled)
        except IntegrityError:
            # A concurrent request answered this turn first; one reply per turn, theirs stands.
            return ReplyOutcome(user_turn=user_turn, reply=Turn.objects.get(user=user, reply_to=user_turn))
        outcome.reply = reply
        # Only once the model has answered: while the endpoint is failing, a second call for
        # the memory write would only double the user's wait. Retrying the reply queues it.
        memory_write_enqueue(user=user, turn=user_turn)
    user_turn.memory_state = turn_memory_state(user=user, turn=user_turn)
    return outcome


def turn_memory_state(*, user: AbstractBaseUser, turn: Turn) -> str:
    return Turn.objects.filter(pk=turn.pk, user=user).values_list("memory_state", flat=True).get()


def memory_write_enqueue(*, user: AbstractBaseUser, turn: Turn, retry: bool = False) -> bool:
    """Queue the durable-memory write for a user turn, once (or again after a failure)."""
    allowed = [Turn.MemoryState.PENDING] + ([Turn.MemoryState.FAILED] if retry else [])
    claimed = Turn.objects.filter(pk=turn.pk, user=user, role=Turn.Role.USER, memory_state__in=allowed).update(
        memory_state=Turn.MemoryState.QUEUED
    )
    if claimed:
        transaction.on_commit(lambda: remember_turn.enqueue(user_id=user.pk, turn_id=turn.pk))
    return bool(claimed)


@transaction.atomic
def account_erase(*, user: AbstractBaseUser) -> None:
    """Delete a user and, by cascade, every conversation, turn, memory (with its vector),
    evidence, recall and history row that belongs to them."""
    get_user_model().objects.filter(pk=user.pk).delete()


@transaction.atomic
def conversation_delete(*, user: AbstractBaseUser, conversation: Conversation, forget_memories: bool = False) -> int:
    """Delete a conversation and all its turns. Memories learned in it stay (they are the
    user's to keep or delete), without a source turn to point to, unless `forget_memories`
    soft-deletes them too. Returns how many memories were forgotten.

    Each statement names the owner: the memory tier lets go of the conversation first
    (memoryapp.services.memory_detach_conversation), then its turns and the conversation go
    by explicit deletes rather than a cascade that would select rows by id alone.
    """
    locked = Conversation.objects.select_for_update().get(pk=conversation.pk, user=user)
    forgotten = memory_detach_conversation(user=user, conversation_id=locked.pk, forget_learned=forget_memories)
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {Turn._meta.db_table} WHERE conversation_id = %s AND user_id = %s", [locked.pk, user.pk]
        )
        cursor.execute(
            f"DELETE FROM {Conversation._meta.db_table} WHERE id = %s AND user_id = %s", [locked.pk, user.pk]
        )
    return forgotten
