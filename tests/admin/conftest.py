from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from chat.models import Conversation, Turn
from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory
from memoryapp.write import remember

PRIYA = "Call me Priya, and I'm always in UTC."
ASK_TIMEZONE = "Which timezone am I in again?"


@pytest.fixture
def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@dataclass
class History:
    """One conversation: a turn that wrote memories, then a question whose reply recalled them."""

    conversation: Conversation
    source: Turn  # the user turn the memories were learned from
    question: Turn
    reply: Turn
    timezone: Memory  # the memory the reply was given, first in rank


def history_for(user) -> History:
    """Built through the services. The memory write is run directly (not on commit), so
    this works inside a test transaction; the reply's recall is the real read path."""
    conversation = conversation_create(user=user)
    source = chat_user_turn(user=user, conversation=conversation, content=PRIYA)
    remember(user, source)
    question = chat_user_turn(user=user, conversation=conversation, content=ASK_TIMEZONE)
    outcome = chat_reply(user=user, user_turn=question)
    timezone = Memory.objects.defer("embedding").get(user=user, text="The user's timezone is UTC.")
    assert outcome.recalled and outcome.recalled[0].memory.pk == timezone.pk
    return History(conversation, source, question, outcome.reply, timezone)


@pytest.fixture
def alices_history(alice) -> History:
    return history_for(alice)
