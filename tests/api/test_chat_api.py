from __future__ import annotations

import pytest
from django.urls import reverse

from chat.models import Conversation, Turn
from chat.services import conversation_create
from memoryapp.models import Memory
from tests.api.conftest import PRIYA

pytestmark = pytest.mark.django_db(transaction=True)

CONVERSATIONS = reverse("chat_api:conversation_list")
TIMEZONE_QUESTION = "What timezone am I in?"


def turns_url(conversation: Conversation) -> str:
    return reverse("chat_api:turn_list", args=[conversation.public_id])


def reply_url(conversation: Conversation, seq: int) -> str:
    return reverse("chat_api:turn_reply", args=[conversation.public_id, seq])


def say(client, conversation: Conversation, content: str):
    return client.post(turns_url(conversation), {"content": content}, format="json")


@pytest.fixture
def alices_conversation(alice_api, alice) -> Conversation:
    conversation = conversation_create(user=alice)
    assert say(alice_api, conversation, PRIYA).status_code == 201
    return conversation


def test_anonymous_is_refused_on_every_chat_route_with_401(anonymous, alices_conversation):
    for method, url in [
        ("get", CONVERSATIONS),
        ("post", CONVERSATIONS),
        ("get", turns_url(alices_conversation)),
        ("post", turns_url(alices_conversation)),
        ("post", reply_url(alices_conversation, 1)),
    ]:
        response = getattr(anonymous, method)(url, {"content": "hi"} if method == "post" else None, format="json")
        assert response.status_code == 401, (method, url)
    assert Turn.objects.count() == 2 and Conversation.objects.count() == 1


def test_another_users_conversation_is_404_and_nothing_is_added(bob_api, alices_conversation):
    assert bob_api.get(turns_url(alices_conversation)).status_code == 404
    assert say(bob_api, alices_conversation, "hi").status_code == 404
    assert bob_api.post(reply_url(alices_conversation, 1)).status_code == 404
    assert Turn.objects.filter(conversation=alices_conversation).count() == 2
    assert bob_api.get(CONVERSATIONS).json()["results"] == []


def test_create_and_list_conversations(alice_api, alice, bob):
    conversation_create(user=bob, title="bob's")
    response = alice_api.post(CONVERSATIONS, {"title": "Trip planning"}, format="json")
    untitled = alice_api.post(CONVERSATIONS, {}, format="json")

    assert response.status_code == 201 and untitled.status_code == 201
    created = response.json()
    assert created["title"] == "Trip planning" and created["public_id"].startswith("c-")
    listed = alice_api.get(CONVERSATIONS).json()
    assert listed["count"] == 2
    assert [c["public_id"] for c in listed["results"]] == [untitled.json()["public_id"], created["public_id"]]
    assert alice_api.post(CONVERSATIONS, {"title": "x" * 201}, format="json").status_code == 400


def test_a_turn_is_answered_and_reports_what_memory_did(alice_api, alice):
    conversation = conversation_create(user=alice)
    first = say(alice_api, conversation, PRIYA)

    assert first.status_code == 201
    data = first.json()
    assert (data["user_turn"]["seq"], data["user_turn"]["role"], data["user_turn"]["content"]) == (1, "user", PRIYA)
    assert data["user_turn"]["answered"] is True and data["user_turn"]["memory_state"] == "done"
    assert {m["text"] for m in data["user_turn"]["memories_written"]} == {
        "The user's name is Priya.",
        "The user's timezone is UTC.",
    }
    assert (data["reply"]["seq"], data["reply"]["role"]) == (2, "assistant")
    assert "Offline mode" in data["reply"]["content"]

    second = say(alice_api, conversation, TIMEZONE_QUESTION).json()
    used = second["reply"]["memories_used"]
    utc = Memory.objects.get(user=alice, text="The user's timezone is UTC.")
    assert used[0]["memory_id"] == utc.pk and used[0]["rank"] == 1 and used[0]["similarity"] > 0.26

    turns = alice_api.get(turns_url(conversation)).json()
    assert [(t["seq"], t["role"]) for t in turns] == [(1, "user"), (2, "assistant"), (3, "user"), (4, "assistant")]
    assert turns[3]["memories_used"] == used
    assert turns[1]["memories_used"] == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "Say something first: an empty message was not sent."),
        ("   \n ", "Say something first: an empty message was not sent."),
        ("x" * 8001, "Messages are limited to 8,000 characters; this one has 8,001. Nothing was sent."),
        ("a\x00b", "Null characters are not allowed."),  # Django's form field says it before TurnForm can
    ],
    ids=["empty", "whitespace", "too-long", "nul"],
)
def test_invalid_turns_are_400_with_the_pages_message_and_nothing_is_saved(alice_api, alice, content, message):
    conversation = conversation_create(user=alice)
    response = say(alice_api, conversation, content)
    assert response.status_code == 400
    assert response.json() == {"content": [message]}
    assert not Turn.objects.filter(conversation=conversation).exists()


def test_model_failure_is_503_with_the_turn_kept_and_a_retry_url_that_works(alice_api, alice, fake_llm):
    conversation = conversation_create(user=alice)
    fake_llm.fail(500)

    response = say(alice_api, conversation, "hello")

    assert response.status_code == 503
    data = response.json()
    assert (
        data["detail"] == "The language model answered with an error (500). Your message was saved; retry to ask again."
    )
    assert (data["user_turn"]["seq"], data["user_turn"]["content"], data["user_turn"]["answered"]) == (
        1,
        "hello",
        False,
    )
    assert data["retry_url"] == f"http://testserver{reply_url(conversation, 1)}"
    assert list(Turn.objects.filter(conversation=conversation).values_list("role", flat=True)) == ["user"]

    fake_llm.reply("Hello again!")
    retried = alice_api.post(data["retry_url"])
    assert retried.status_code == 200
    assert retried.json()["reply"]["content"] == "Hello again!"
    again = alice_api.post(data["retry_url"])  # a reply is made once per user turn
    assert again.json()["reply"]["seq"] == retried.json()["reply"]["seq"]
    assert Turn.objects.filter(conversation=conversation, role="assistant").count() == 1


def test_reply_to_an_assistant_turn_or_a_missing_one_is_404(alice_api, alices_conversation):
    assert alice_api.post(reply_url(alices_conversation, 2)).status_code == 404
    assert alice_api.post(reply_url(alices_conversation, 9)).status_code == 404


def test_a_memory_deleted_over_the_api_is_not_used_by_the_next_reply(alice_api, alice, alices_conversation):
    utc = Memory.objects.get(user=alice, text="The user's timezone is UTC.")
    assert alice_api.delete(reverse("memory_api:memory_detail", args=[utc.pk])).status_code == 204

    reply = say(alice_api, alices_conversation, TIMEZONE_QUESTION).json()["reply"]

    assert utc.pk not in [m["memory_id"] for m in reply["memories_used"]]
    assert "UTC" not in reply["content"]
