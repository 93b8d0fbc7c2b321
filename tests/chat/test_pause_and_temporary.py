"""Pause memory and temporary chats: nothing read into a reply, nothing written from a turn said
there, and a temporary chat gone for good a day after its last turn."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from chat.models import Conversation, Turn
from chat.services import chat_reply, chat_user_turn, conversation_create, memory_write_enqueue
from memoryapp.models import Memory, MemoryRecall
from memoryapp.services import memory_pause_set
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def lisbon(alice):
    assert remember(alice, user_turn(alice, "I live in Lisbon.")).stored == 1
    return Memory.objects.get(user=alice)


def _say(user, conversation, text: str):
    turn = chat_user_turn(user=user, conversation=conversation, content=text)
    return turn, chat_reply(user=user, user_turn=turn)


def test_while_paused_nothing_is_read_and_nothing_said_is_ever_written(alice, lisbon):
    conversation = conversation_create(user=alice)
    memory_pause_set(user=alice, paused=True)
    turn, outcome = _say(alice, conversation, "Where do I live? Also, I work as a carpenter.")
    assert outcome.recalled == [] and not MemoryRecall.objects.filter(user=alice).exists()
    assert "Memory is paused" in outcome.reply.content  # the offline answer says why it has no memory
    assert Turn.objects.get(pk=turn.pk).memory_state == Turn.MemoryState.PAUSED
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == [lisbon.text]

    memory_pause_set(user=alice, paused=False)
    # Turned back on, the turn said meanwhile is still never written, even when asked to.
    assert memory_write_enqueue(user=alice, turn=turn, retry=True) is False
    assert Memory.objects.filter(user=alice).count() == 1
    _, outcome = _say(alice, conversation, "Where do I live?")
    assert [item.memory for item in outcome.recalled] == [lisbon]


def test_pausing_is_one_users_switch(alice, bob, lisbon):
    memory_pause_set(user=alice, paused=True)
    remember(bob, user_turn(bob, "I live in Porto."))
    _, outcome = _say(bob, conversation_create(user=bob), "Where do I live?")
    assert [item.memory.text for item in outcome.recalled] == ["The user lives in Porto."]


def test_a_temporary_chat_reads_nothing_and_writes_nothing(alice, lisbon):
    conversation = conversation_create(user=alice, temporary=True)
    turn, outcome = _say(alice, conversation, "Where do I live? By the way, I have a dog named Rex.")
    assert outcome.recalled == [] and "This is a temporary chat" in outcome.reply.content
    assert Turn.objects.get(pk=turn.pk).memory_state == Turn.MemoryState.TEMPORARY
    assert Memory.objects.filter(user=alice).count() == 1
    # An ordinary conversation of the same user still reads and writes.
    ordinary = conversation_create(user=alice)
    turn, _ = _say(alice, ordinary, "I have a dog named Rex.")
    assert Turn.objects.get(pk=turn.pk).memory_state == Turn.MemoryState.QUEUED  # its write is queued
    _, outcome = _say(alice, ordinary, "Where do I live?")
    assert lisbon in [item.memory for item in outcome.recalled]


def test_a_forget_request_is_carried_out_even_while_paused(alice, lisbon):
    memory_pause_set(user=alice, paused=True)
    turn = chat_user_turn(user=alice, conversation=conversation_create(user=alice), content="Forget where I live.")
    assert turn.memory_state == Turn.MemoryState.FORGET
    assert Memory.objects.get(pk=lisbon.pk).deleted_at is not None


def _age(conversation, hours: float) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now() - timedelta(hours=hours))


def test_a_temporary_chat_is_gone_a_day_after_its_last_turn(alice, alice_client):
    temporary = conversation_create(user=alice, temporary=True)
    chat_user_turn(user=alice, conversation=temporary, content="Just between us: I'm nervous about Monday.")
    kept = conversation_create(user=alice)
    chat_user_turn(user=alice, conversation=kept, content="Hello there.")
    detail = reverse("chat:conversation_detail", args=[temporary.public_id])

    _age(temporary, 23)
    _age(kept, 300)
    call_command("purge_deleted")
    assert alice_client.get(detail).status_code == 200  # 23 hours: still there

    _age(temporary, 25)
    # Gone from the pages from the moment it expires, whenever the purge runs...
    assert alice_client.get(detail).status_code == 404
    assert temporary.public_id not in alice_client.get(reverse("chat:conversation_list")).content.decode()
    # ...and from the database with the purge; an old ordinary conversation stays.
    call_command("purge_deleted")
    assert not Conversation.objects.filter(pk=temporary.pk).exists()
    assert not Turn.objects.filter(conversation_id=temporary.pk).exists()
    assert Conversation.objects.filter(pk=kept.pk).exists()


def test_the_pages_start_a_temporary_chat_and_say_what_it_is(alice, alice_client):
    response = alice_client.post(reverse("chat:conversation_list"), {"temporary": "on"})
    conversation = Conversation.objects.get(user=alice)
    assert conversation.temporary
    page = alice_client.get(response["Location"]).content.decode()
    assert "Temporary chat." in page and "deleted for good" in page
    assert "temporary" in alice_client.get(reverse("chat:conversation_list")).content.decode()
    alice_client.post(reverse("chat:conversation_list"))
    assert Conversation.objects.filter(user=alice, temporary=False).count() == 1


def test_the_pages_pause_memory_and_the_chat_says_so(alice, alice_client):
    conversation = conversation_create(user=alice)
    detail = reverse("chat:conversation_detail", args=[conversation.public_id])
    assert "Memory is paused" not in alice_client.get(detail).content.decode()
    response = alice_client.post(reverse("memoryapp:memory_pause"), {"paused": "on", "next": detail})
    assert response.status_code == 302 and response["Location"] == detail
    assert "Memory is paused" in alice_client.get(detail).content.decode()
    assert "Memory is paused." in alice_client.get(reverse("memoryapp:memory_list")).content.decode()
    alice_client.post(reverse("chat:turn_create", args=[conversation.public_id]), {"content": "I teach chemistry."})
    assert "Not remembered: memory was paused." in alice_client.get(detail).content.decode()
    # `next` must be a page of this site.
    response = alice_client.post(reverse("memoryapp:memory_pause"), {"paused": "off", "next": "https://evil.test/"})
    assert response["Location"] == reverse("memoryapp:memory_list")
    assert "Memory is on." in alice_client.get(reverse("memoryapp:memory_list")).content.decode()
    assert not Memory.objects.filter(user=alice).exists()
