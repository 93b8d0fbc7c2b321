import pytest
from django.urls import reverse

from chat.models import Conversation, Turn
from memoryapp.models import Memory, MemoryEvidence, MemoryRecall
from tests.factories import chat

pytestmark = pytest.mark.django_db(transaction=True)


def test_confirmation_lists_what_was_learned_in_the_conversation(alice, alice_client):
    conversation = chat(alice, "I live in Lisbon.")
    page = alice_client.get(reverse("chat:conversation_delete", args=[conversation.public_id])).content.decode()
    assert "Also forget the 1 memory learned here" in page and "The user lives in Lisbon." in page
    assert Conversation.objects.filter(pk=conversation.pk).exists()  # a GET changes nothing


def test_deleting_keeps_the_memories_without_a_source(alice, alice_client):
    source = chat(alice, "I live in Lisbon.")
    other = chat(alice, "Which city do I live in?")
    memory = Memory.objects.get(user=alice)

    response = alice_client.post(reverse("chat:conversation_delete", args=[source.public_id]))

    assert response.status_code == 302
    assert not Conversation.objects.filter(pk=source.pk).exists()
    assert not Turn.objects.filter(conversation_id=source.pk).exists()
    memory.refresh_from_db()
    assert memory.deleted_at is None and memory.source_conversation_id is None and memory.source_turn_id is None
    assert MemoryEvidence.objects.get(memory=memory).turn_id is None
    assert MemoryRecall.objects.filter(memory=memory, conversation=other).count() == 1  # the other chat's log stays
    trace = alice_client.get(reverse("memoryapp:memory_detail", args=[memory.pk])).content.decode()
    assert "the source turn no longer exists" in trace


def test_deleting_can_forget_what_was_learned(alice, alice_client):
    source = chat(alice, "Call me Priya, and I'm always in UTC.")
    chat(alice, "I'm vegetarian.")
    alice_client.post(reverse("chat:conversation_delete", args=[source.public_id]), {"forget_memories": "on"})
    assert list(Memory.objects.filter(user=alice, deleted_at__isnull=True).values_list("text", flat=True)) == [
        "The user is vegetarian."
    ]


def test_another_users_conversation_cannot_be_deleted(alice, bob_client):
    conversation = chat(alice, "I live in Lisbon.")
    url = reverse("chat:conversation_delete", args=[conversation.public_id])
    assert bob_client.get(url).status_code == 404
    assert bob_client.post(url, {"forget_memories": "on"}).status_code == 404
    assert Conversation.objects.filter(pk=conversation.pk).exists()
    assert Memory.objects.filter(user=alice, deleted_at__isnull=True).count() == 1


def test_the_api_deletes_a_conversation_and_can_forget_its_memories(alice, bob):
    from rest_framework.test import APIClient

    source = chat(alice, "I live in Lisbon.")
    url = f"/api/conversations/{source.public_id}/"
    as_bob = APIClient()
    as_bob.force_authenticate(bob)
    assert as_bob.delete(url).status_code == 404
    as_alice = APIClient()
    as_alice.force_authenticate(alice)
    assert as_alice.get(url).json()["public_id"] == source.public_id
    assert as_alice.delete(url + "?forget_memories=true").status_code == 204
    assert as_alice.get(url).status_code == 404
    assert not Memory.objects.filter(user=alice, deleted_at__isnull=True).exists()


def test_forgetting_what_was_learned_takes_the_same_statements_for_one_memory_or_many(alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from chat.services import conversation_delete

    def delete_counting_statements(conversation) -> tuple[int, int]:
        with CaptureQueriesContext(connection) as captured:
            forgotten = conversation_delete(user=alice, conversation=conversation, forget_memories=True)
        return forgotten, len(captured.captured_queries)

    one = chat(alice, "I live in Lisbon.")
    many = chat(alice, "I'm vegetarian.", "I have a dog called Rex.", "I work as a nurse.", "I speak Portuguese.")
    forgotten_many, statements_many = delete_counting_statements(many)
    forgotten_one, statements_one = delete_counting_statements(one)
    assert (forgotten_many, forgotten_one) == (4, 1)
    assert statements_many == statements_one
    assert not Memory.objects.filter(user=alice, deleted_at__isnull=True).exists()


def test_a_turn_posted_to_a_conversation_deleted_meanwhile_is_a_404_not_a_500(alice):
    from django.http import Http404

    from chat.services import chat_user_turn, conversation_delete

    conversation = chat(alice, "I live in Lisbon.")
    looked_up = Conversation.objects.get(pk=conversation.pk)  # what the view fetched before the delete
    conversation_delete(user=alice, conversation=conversation)
    with pytest.raises(Http404):
        chat_user_turn(user=alice, conversation=looked_up, content="Are you there?")
    with pytest.raises(Http404):
        conversation_delete(user=alice, conversation=looked_up)
