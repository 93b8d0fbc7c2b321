"""The controls through the API: the pause switch, temporary conversations, and removing a
secret from a turn; each for the caller only."""

import pytest
from django.urls import reverse

from chat.models import Conversation, Turn
from chat.services import chat_user_turn, conversation_create
from memoryapp.models import MemorySettings

pytestmark = pytest.mark.django_db(transaction=True)

SETTINGS = reverse("memory_api:memory_settings")
CONVERSATIONS = reverse("chat_api:conversation_list")


def test_the_pause_switch_is_read_and_set_per_user(alice_api, bob_api, alice, bob, anonymous):
    both_on = {"paused": False, "reference_history": True}
    assert alice_api.get(SETTINGS).json() == both_on
    assert alice_api.put(SETTINGS, {"paused": True}, format="json").json() == {**both_on, "paused": True}
    assert alice_api.get(SETTINGS).json() == {**both_on, "paused": True}
    assert bob_api.get(SETTINGS).json() == both_on  # bob's own switch
    assert alice_api.patch(SETTINGS, {"paused": False}, format="json").json() == both_on
    assert alice_api.patch(SETTINGS, {"paused": "sometimes"}, format="json").status_code == 400
    assert alice_api.patch(SETTINGS, {}, format="json").json() == both_on  # changes nothing
    assert anonymous.get(SETTINGS).status_code == 401
    assert list(MemorySettings.objects.values_list("user_id", "paused")) == [(alice.pk, False)]


def test_a_paused_callers_turn_is_answered_without_memories_and_marked(alice_api, alice, lisbon):
    alice_api.put(SETTINGS, {"paused": True}, format="json")
    conversation = conversation_create(user=alice)
    url = reverse("chat_api:turn_list", args=[conversation.public_id])
    exchange = alice_api.post(url, {"content": "Where do I live?"}, format="json").json()
    assert exchange["user_turn"]["memory_state"] == "paused"
    assert exchange["reply"]["memories_used"] == []


def test_a_temporary_conversation_is_made_marked_and_expires(alice_api, alice):
    created = alice_api.post(CONVERSATIONS, {"temporary": True}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["temporary"] is True and body["expires_at"] is not None
    ordinary = alice_api.post(CONVERSATIONS, {}, format="json").json()
    assert ordinary["temporary"] is False and ordinary["expires_at"] is None
    url = reverse("chat_api:turn_list", args=[body["public_id"]])
    exchange = alice_api.post(url, {"content": "I have a cat named Miso."}, format="json").json()
    assert exchange["user_turn"]["memory_state"] == "temporary"
    assert Conversation.objects.get(public_id=body["public_id"]).temporary


def test_removing_a_secret_through_the_api_is_for_the_owner_only(alice_api, bob_api, alice):
    conversation = conversation_create(user=alice)
    chat_user_turn(user=alice, conversation=conversation, content="My PIN is 4921, don't tell anyone.")
    url = reverse("chat_api:turn_redact", args=[conversation.public_id, 1])
    assert bob_api.post(url).status_code == 404
    assert "4921" in Turn.objects.get(conversation=conversation, seq=1).content
    response = alice_api.post(url)
    assert response.status_code == 200
    body = response.json()
    assert body["removed"] == 1 and body["turn"]["content"] == "My PIN is [password removed], don't tell anyone."
    assert body["turn"]["redacted_at"] is not None
    assert alice_api.post(url).json()["removed"] == 0  # nothing left to remove
