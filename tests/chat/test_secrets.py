"""A turn that carries a secret value: nothing of it is remembered, the value never reaches the
model, and one click removes it from the stored turn (and its reply, summary and title)."""

import pytest
from django.urls import reverse

from chat.models import Conversation, Turn
from chat.services import chat_reply, chat_user_turn, conversation_create, turn_redact
from memoryapp.models import Memory
from memoryapp.sensitive import redact

pytestmark = pytest.mark.django_db

PIN_TURN = "My bank PIN is 4921 and my card is 4111 1111 1111 1111, can you keep them safe?"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my wifi password is hunter2x, ok?", "my wifi password is [password removed], ok?"),
        ("API key: sk-abcdefghijklmnopqrstuvwx please", "API key: [key removed] please"),
        ("SSN 123-45-6789.", "SSN [ID number removed]."),
        ("IBAN GB82 WEST 1234 5698 7654 32 for rent", "IBAN [account number removed] for rent"),
        ("I live in Lisbon and have 2 cats.", "I live in Lisbon and have 2 cats."),  # nothing secret
        ("My flight is BA 2490 at 7:45 on gate 12.", "My flight is BA 2490 at 7:45 on gate 12."),
    ],
)
def test_redaction_replaces_each_kind_of_secret_value_and_nothing_else(text, expected):
    assert redact(text)[0] == expected


def test_a_secret_never_reaches_the_model_and_one_click_removes_it(alice, alice_client, fake_llm):
    conversation = conversation_create(user=alice)
    url = reverse("chat:turn_create", args=[conversation.public_id])
    alice_client.post(url, {"content": PIN_TURN})
    turn = Turn.objects.get(conversation=conversation, role="user")
    assert turn.memory_state == Turn.MemoryState.WITHHELD
    sent = [request["body"] for request in fake_llm.requests if request["path"].endswith("/chat/completions")]
    assert sent, "the reply was asked of the model"
    for body in sent:
        text = str(body["messages"])
        assert "4921" not in text and "4111" not in text
        assert "[password removed]" in text
    assert not Memory.objects.filter(user=alice).exists()
    assert "4921" not in Conversation.objects.get(pk=conversation.pk).title  # the title never held it

    detail = reverse("chat:conversation_detail", args=[conversation.public_id])
    assert "Remove it from the message" in alice_client.get(detail).content.decode()
    response = alice_client.post(reverse("chat:turn_redact", args=[conversation.public_id, turn.seq]))
    assert response.status_code == 302
    turn.refresh_from_db()
    assert turn.content == (
        "My bank PIN is [password removed] and my card is [card number removed], can you keep them safe?"
    )
    assert turn.redacted_at is not None
    page = alice_client.get(detail).content.decode()
    assert "4921" not in page and "Remove it from the message" not in page
    assert "The value was removed from this message." in page


def test_redaction_also_clears_the_reply_and_the_summary(alice):
    conversation = conversation_create(user=alice)
    turn = chat_user_turn(user=alice, conversation=conversation, content="password: Tr0ub4dor&3 is the one")
    reply = chat_reply(user=alice, user_turn=turn).reply
    # What a model could have written before: the value repeated, with no label beside it.
    Turn.objects.filter(pk=reply.pk).update(content="Got it: Tr0ub4dor&3.")
    Conversation.objects.filter(pk=conversation.pk).update(summary="User: password: Tr0ub4dor&3 is the one")

    assert turn_redact(user=alice, turn=turn) == 1
    assert Turn.objects.get(pk=turn.pk).content == "password: [password removed] is the one"
    assert Turn.objects.get(pk=reply.pk).content == "Got it: [password removed]."
    assert Conversation.objects.get(pk=conversation.pk).summary == "User: password: [password removed] is the one"


def test_another_users_turn_cannot_be_redacted(alice, bob_client):
    conversation = conversation_create(user=alice)
    chat_user_turn(user=alice, conversation=conversation, content=PIN_TURN)
    response = bob_client.post(reverse("chat:turn_redact", args=[conversation.public_id, 1]))
    assert response.status_code == 404
    assert Turn.objects.get(conversation=conversation, seq=1).content == PIN_TURN
