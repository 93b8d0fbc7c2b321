"""Reads from the conversation log. Every lookup is keyed by its owner."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.utils import timezone

from chat.history import quoted_for_replies
from chat.models import Conversation, Turn
from memoryapp.selectors import evidence_for_turns, forgotten_for_turns, recalls_for_replies

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def temporary_expired_before():
    """A temporary conversation last active before this has expired."""
    return timezone.now() - timedelta(hours=settings.CHAT_TEMPORARY_HOURS)


def _conversations(user: User):
    """The user's conversations; a temporary one that has expired is gone from the moment it
    expires, whenever the purge deletes its rows."""
    return Conversation.objects.filter(user=user).exclude(temporary=True, updated_at__lt=temporary_expired_before())


def conversation_get(*, user: User, public_id: str) -> Conversation:
    """The user's conversation, or 404: another user's id is indistinguishable from a missing one."""
    return get_object_or_404(_conversations(user), public_id=public_id)


def conversation_list(*, user: User):
    return _conversations(user).order_by("-updated_at", "-id")


def user_turn_get(*, user: User, public_id: str, seq: int) -> tuple[Conversation, Turn]:
    """The user's conversation and its user turn `seq`, or 404 for either."""
    conversation = conversation_get(user=user, public_id=public_id)
    turn = get_object_or_404(Turn, conversation=conversation, user=user, seq=seq, role=Turn.Role.USER)
    return conversation, turn


@dataclass
class TurnView:
    """A turn as the page shows it, with what memory did around it."""

    turn: Turn
    recalled: list  # on a reply: MemoryRecall rows, in rank order
    written: list  # on a user turn: MemoryEvidence rows (created or refreshed)
    answered: bool  # on a user turn: whether a reply exists
    forgotten: list = field(default_factory=list)  # on a user turn that asked to forget: the delete events
    quoted: list = field(default_factory=list)  # on a reply: HistoryRecall rows (past turns quoted), in rank order


def turn_views(*, user: User, turns: list[Turn]) -> list[TurnView]:
    """Decorate turns with recalls, quoted past turns and memory writes in a constant number of queries."""
    user_ids = [t.pk for t in turns if t.role == Turn.Role.USER]
    reply_ids = [t.pk for t in turns if t.role == Turn.Role.ASSISTANT]
    evidence = evidence_for_turns(user=user, turn_ids=user_ids)
    forgotten = forgotten_for_turns(user=user, turn_ids=user_ids)
    recalls = recalls_for_replies(user=user, reply_ids=reply_ids)
    quoted = quoted_for_replies(user=user, reply_ids=reply_ids)
    answered = set(Turn.objects.filter(user=user, reply_to_id__in=user_ids).values_list("reply_to_id", flat=True))
    return [
        TurnView(
            turn=t,
            recalled=recalls.get(t.pk, []),
            written=evidence.get(t.pk, []),
            answered=t.pk in answered,
            forgotten=forgotten.get(t.pk, []),
            quoted=quoted.get(t.pk, []),
        )
        for t in turns
    ]


# How many of a conversation's latest messages in a row the memory worker must have failed to read
# for the page to say so above them: one failure is a hiccup with a Retry beside it; a run of
# them means the model is down, slow or answering badly.
FAILURE_RUN = 3


def memory_failure_run(turns: list[TurnView]) -> int:
    """How many of the conversation's latest user turns, in a row, the memory worker failed to
    read (FAILED), counting back from the newest turn whose write was tried; 0 for a run shorter
    than FAILURE_RUN. A turn that was not to be written (paused, temporary, a secret, a request
    to forget) or is still waiting neither counts nor breaks the run."""
    run = 0
    for view in reversed(turns):
        state = view.turn.memory_state
        if state == Turn.MemoryState.FAILED:
            run += 1
        elif state == Turn.MemoryState.DONE:
            break
    return run if run >= FAILURE_RUN else 0


def conversation_turns(*, user: User, conversation: Conversation) -> list[TurnView]:
    turns = list(Turn.objects.filter(conversation=conversation, user=user).order_by("seq"))
    return turn_views(user=user, turns=turns)
