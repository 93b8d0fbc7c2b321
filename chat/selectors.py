"""Reads from the conversation log. Every lookup is keyed by its owner."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.shortcuts import get_object_or_404

from chat.models import Conversation, Turn
from memoryapp.selectors import evidence_for_turns, forgotten_for_turns, recalls_for_replies

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def conversation_get(*, user: AbstractBaseUser, public_id: str) -> Conversation:
    """The user's conversation, or 404: another user's id is indistinguishable from a missing one."""
    return get_object_or_404(Conversation, public_id=public_id, user=user)


def conversation_list(*, user: AbstractBaseUser):
    return Conversation.objects.filter(user=user).order_by("-updated_at", "-id")


def user_turn_get(*, user: AbstractBaseUser, conversation: Conversation, seq: int) -> Turn:
    return get_object_or_404(Turn, conversation=conversation, user=user, seq=seq, role=Turn.Role.USER)


@dataclass
class TurnView:
    """A turn as the page shows it, with what memory did around it."""

    turn: Turn
    recalled: list  # on a reply: MemoryRecall rows, in rank order
    written: list  # on a user turn: MemoryEvidence rows (created or refreshed)
    answered: bool  # on a user turn: whether a reply exists
    forgotten: list = field(default_factory=list)  # on a user turn that asked to forget: the delete events


def turn_views(*, user: AbstractBaseUser, turns: list[Turn]) -> list[TurnView]:
    """Decorate turns with recalls and memory writes in a constant number of queries."""
    user_ids = [t.pk for t in turns if t.role == Turn.Role.USER]
    reply_ids = [t.pk for t in turns if t.role == Turn.Role.ASSISTANT]
    evidence = evidence_for_turns(user=user, turn_ids=user_ids)
    forgotten = forgotten_for_turns(user=user, turn_ids=user_ids)
    recalls = recalls_for_replies(user=user, reply_ids=reply_ids)
    answered = set(Turn.objects.filter(user=user, reply_to_id__in=user_ids).values_list("reply_to_id", flat=True))
    return [
        TurnView(
            turn=t,
            recalled=recalls.get(t.pk, []),
            written=evidence.get(t.pk, []),
            answered=t.pk in answered,
            forgotten=forgotten.get(t.pk, []),
        )
        for t in turns
    ]


def conversation_turns(*, user: AbstractBaseUser, conversation: Conversation) -> list[TurnView]:
    turns = list(Turn.objects.filter(conversation=conversation, user=user).order_by("seq"))
    return turn_views(user=user, turns=turns)
