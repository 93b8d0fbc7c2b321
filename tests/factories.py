"""Test data built through the services, the way the app builds it."""

from __future__ import annotations

from chat.models import Conversation, Turn
from chat.services import conversation_create, turn_append


def user_turn(user, content: str, conversation: Conversation | None = None) -> Turn:
    conversation = conversation or conversation_create(user=user, title="test")
    return turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content)


def chat(user, *texts: str) -> Conversation:
    """A new conversation in which the user says each text and gets its reply (the whole turn)."""
    from chat.services import chat_reply

    conversation = conversation_create(user=user)
    for text in texts:
        turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=text)
        chat_reply(user=user, user_turn=turn)
    return conversation
