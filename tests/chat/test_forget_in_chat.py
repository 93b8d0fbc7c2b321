"""Forget in chat: "Forget that I'm a nurse" deletes what it names before the reply is made, with
the memory page's Undo, and says what it deleted, or that nothing matched."""

import pytest
from django.urls import reverse

from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory, MemoryEvent
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
STORE = [
    "I'm a pediatric nurse in Montreal.",
    "I live in Lisbon.",
    "My daughter Mia is 6.",
    "I play the cello in an amateur orchestra.",
    "I drive a 2019 Tesla Model 3.",
]


@pytest.fixture
def stored(alice):
    for text in STORE:
        assert remember(alice, user_turn(alice, text)).stored >= 1
    return alice


def _live(user) -> list[str]:
    return sorted(Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True))


def test_forgetting_in_chat_deletes_what_it_names_before_the_reply(stored):
    before = _live(stored)
    conversation = conversation_create(user=stored)
    turn = chat_user_turn(user=stored, conversation=conversation, content="Please forget that I'm a nurse.")
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    assert Memory.objects.get(pk=nurse.pk).deleted_at is not None
    (event,) = MemoryEvent.objects.filter(user=stored, action=MemoryEvent.Action.DELETED)
    assert (event.memory_id, event.turn_id) == (nurse.pk, turn.pk)

    outcome = chat_reply(user=stored, user_turn=turn)
    assert nurse not in [item.memory for item in outcome.recalled]  # given the nurse at 0.49 before
    assert "The user is a pediatric nurse." not in outcome.reply.content
    assert _live(stored) == sorted(set(before) - {"The user is a pediatric nurse."})  # nothing else, nothing new


@pytest.mark.parametrize(
    ("request_text", "forgotten"),
    [
        ("Delete what I told you about my daughter.", "The user's daughter Mia is 6 years old."),
        ("Don't remember that I play the cello.", "The user plays the cello in an amateur orchestra."),
        ("Please forget where I live.", "The user lives in Lisbon."),
    ],
)
def test_each_way_of_asking_forgets_the_memory_it_names(stored, request_text, forgotten):
    before = _live(stored)
    assert forgotten in before
    chat_user_turn(user=stored, conversation=conversation_create(user=stored), content=request_text)
    assert sorted(set(before) - set(_live(stored))) == [forgotten]


@pytest.mark.parametrize(
    "text",
    [
        "Forget it.",  # names nothing
        "Forget that I own a sailing boat.",  # names nothing remembered
        "Remove the background from this photo.",  # an edit, not a request to forget
        "I forget things a lot lately.",  # a statement
    ],
)
def test_a_turn_that_names_nothing_remembered_deletes_nothing(stored, text):
    before = _live(stored)
    chat_user_turn(user=stored, conversation=conversation_create(user=stored), content=text)
    assert _live(stored) == before


def _said_on_the_page(client, user, text: str):
    """Send `text` from the chat page, have it answered; the conversation and its page."""
    conversation = conversation_create(user=user)
    client.post(reverse("chat:turn_create", args=[conversation.public_id]), {"content": text}, **HTMX)
    client.post(reverse("chat:turn_reply", args=[conversation.public_id, 1]), **HTMX)
    page = client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    return conversation, page


def test_the_page_names_what_was_forgotten_and_undoes_it(stored, alice_client):
    conversation, page = _said_on_the_page(alice_client, stored, "Please forget that I'm a nurse.")
    assert "Forgot “The user is a pediatric nurse.”" in page
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")

    undone = alice_client.post(reverse("memoryapp:memory_undo", args=[nurse.pk]), {"in": "chat"}, **HTMX)
    assert "Restored" in undone.content.decode() and "The user is a pediatric nurse." in undone.content.decode()
    assert "The user is a pediatric nurse." in _live(stored)
    page = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    assert "you undid forgetting it" in page


def test_the_page_says_when_nothing_matched(stored, alice_client):
    _, page = _said_on_the_page(alice_client, stored, "Forget that I own a sailing boat.")
    assert "nothing remembered matched it, so nothing was deleted" in page


def test_another_users_memories_are_never_forgotten(stored, bob):
    remember(bob, user_turn(bob, "I'm a nurse in Leeds."))
    bobs = _live(bob)
    chat_user_turn(user=stored, conversation=conversation_create(user=stored), content="Forget that I'm a nurse.")
    assert "The user is a nurse." in bobs and _live(bob) == bobs


@pytest.mark.parametrize(
    "request_text",
    ["Olvida que soy enfermera.", "Vergiss, dass ich Krankenschwester bin.", "Oublie que je suis infirmière."],
)
def test_a_request_in_another_language_forgets_what_it_names(alice, settings, request_text):
    # Facts are stored in English; the request is matched to them across languages, which the
    # multilingual encoder (the default, named here as this test depends on it) does.
    settings.EMBEDDING_MODEL = "local-multilingual"
    for text in ["I'm a nurse.", "I live in Lisbon.", "I play the cello."]:
        assert remember(alice, user_turn(alice, text)).stored == 1
    turn = chat_user_turn(user=alice, conversation=conversation_create(user=alice), content=request_text)
    assert turn.memory_state == "forget"
    assert _live(alice) == ["The user lives in Lisbon.", "The user plays the cello."]


def test_a_model_never_turns_a_request_to_forget_into_a_memory(alice, fake_llm):
    # A model reading "Olvida que soy enfermera" may well answer with the fact it names.
    fake_llm.facts("The user is a nurse.")
    assert remember(alice, user_turn(alice, "Olvida que soy enfermera.")).stored == 0
    assert not Memory.objects.filter(user=alice).exists()
    assert not [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")]  # nor is it asked
