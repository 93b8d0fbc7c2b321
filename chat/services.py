"""Writes to the conversation log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Max

from chat.models import Conversation, Turn

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def conversation_create(*, user: AbstractBaseUser, title: str = "") -> Conversation:
    return Conversation.objects.create(user=user, title=title[:200])


@transaction.atomic
def turn_append(*, user: AbstractBaseUser, conversation: Conversation, role: str, content: str) -> Turn:
    """Append a turn with the next seq. Concurrent appends to one conversation serialise on
    the conversation row, so each gets a distinct seq and none is lost."""
    locked = Conversation.objects.select_for_update().get(pk=conversation.pk, user=user)
    last = Turn.objects.filter(conversation=locked, user=user).aggregate(last=Max("seq"))["last"] or 0
    turn = Turn.objects.create(conversation=locked, user=user, seq=last + 1, role=role, content=content)
    Conversation.objects.filter(pk=locked.pk, user=user).update(updated_at=turn.created_at)
    return turn
