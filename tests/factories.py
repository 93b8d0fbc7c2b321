"""Test data built through the services, the way the app builds it."""

from __future__ import annotations

from chat.models import Conversation, Turn
from chat.services import conversation_create, turn_append


def user_turn(user, content: str, conversation: Conversation | None = None) -> Turn:
    conversation = conversation or conversation_create(user=user, title="test")
    return turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content)
