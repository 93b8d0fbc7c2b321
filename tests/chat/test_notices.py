"""What the chat says memory did keeps its words: a notice written when a fact was saved still
says what was saved after the memory is corrected or deleted; and a page without JavaScript
refreshes itself while a memory is being saved."""

import pytest
from django.urls import reverse

from chat.models import Turn
from memoryapp.models import Memory
from memoryapp.services import memory_correct, memory_soft_delete
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


def _page(client, conversation) -> str:
    return client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()


def test_a_saved_notice_keeps_its_words_after_a_correction_and_a_delete(alice, alice_client):
    turn = user_turn(alice, "I live in Lisbon.")
    assert remember(alice, turn).stored == 1
    memory = Memory.objects.get(user=alice)
    assert "Memory updated: saved\n      “<a" in _page(alice_client, turn.conversation)

    memory_correct(user=alice, memory_id=memory.pk, text="The user lives in Porto.")
    page = _page(alice_client, turn.conversation)
    assert ">The user lives in Lisbon.</a>”" in page  # what was saved then
    assert "since changed to “The user lives in Porto.”" in page  # and what it says now

    memory_soft_delete(user=alice, memory_id=memory.pk)
    page = _page(alice_client, turn.conversation)
    assert ">The user lives in Lisbon.</a>”" in page and "(since deleted)" in page


def test_without_javascript_the_page_refreshes_until_the_memory_is_saved(alice, alice_client):
    turn = user_turn(alice, "I live in Lisbon.")
    Turn.objects.filter(pk=turn.pk).update(memory_state=Turn.MemoryState.QUEUED)
    refresh = '<noscript><meta http-equiv="refresh" content="3"></noscript>'
    assert refresh in _page(alice_client, turn.conversation)
    Turn.objects.filter(pk=turn.pk).update(memory_state=Turn.MemoryState.DONE)
    assert refresh not in _page(alice_client, turn.conversation)
