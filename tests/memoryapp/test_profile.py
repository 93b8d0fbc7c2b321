""" "What do you know about me?": the user's profile, in chat and on the memory pages."""

import pytest

from chat.models import Turn
from memoryapp.embeddings import get_embedder
from memoryapp.models import MemoryRecall
from memoryapp.read.need import asks_for_profile
from memoryapp.read.recall import read_turn
from memoryapp.write import remember
from tests.factories import chat, user_turn

pytestmark = pytest.mark.django_db


def _asks(text: str) -> bool:
    embedder = get_embedder()
    return asks_for_profile(embedder.embed([text])[0], embedder.name)


@pytest.mark.parametrize(
    "text",
    [
        "what do you know about me",
        "Show me what you remember about me",
        "¿Qué sabes de mí?",
        "Que sais-tu de moi ?",
        "Was weißt du über mich?",
        "Что ты знаешь обо мне?",
        "私について何を知っていますか？",
    ],
)
def test_asking_what_is_remembered_is_told_in_any_language(text):
    assert _asks(text)


@pytest.mark.parametrize(
    "text",
    [
        "What do you know about black holes?",
        "Tell me about yourself.",
        "What is my job?",
        "Remember that I like tea.",
        "What do you think about my plan?",
    ],
)
def test_other_turns_are_not_a_profile_request(text):
    assert not _asks(text)


@pytest.fixture
def profiled(alice, bob):
    for text in [
        "I'm a pediatric nurse.",
        "I live in Montreal.",
        "I have a greyhound called Biscuit.",
        "I've been sober for two years now.",
        "Please keep your answers short from now on.",
    ]:
        assert remember(alice, user_turn(alice, text)).stored == 1
    remember(bob, user_turn(bob, "I'm an architect."))
    return alice


def test_the_profile_request_gets_every_memory_by_kind_and_the_standing_instructions(profiled):
    recalled = read_turn(profiled, "What do you know about me?").recalled
    texts = [item.memory.text for item in recalled]
    assert texts == [
        "The user lives in Montreal.",
        "The user is a pediatric nurse.",
        "The user has a greyhound called Biscuit.",
        "The user has been sober for two years.",  # the user's own, asked for: sensitive ones too
        "The user wants the assistant to keep its answers short.",
    ]
    assert [item.rank for item in recalled] == [1, 2, 3, 4, 5]
    assert all(item.profile for item in recalled[:4]) and recalled[4].standing
    assert "The user is an architect." not in texts  # bob's


def test_the_reply_lists_the_profile_and_the_log_says_why(profiled):
    conversation = chat(profiled, "What do you know about me?")
    reply = conversation.turns.filter(role=Turn.Role.ASSISTANT).get()
    assert "Here is everything I remember about you:" in reply.content
    assert "About you:\n- The user lives in Montreal." in reply.content
    assert "Work and study:\n- The user is a pediatric nurse." in reply.content
    logged = MemoryRecall.objects.filter(user=profiled, reply_turn=reply)
    assert logged.count() == 5 and logged.filter(profile=True).count() == 4


def test_the_profile_page_groups_the_memories(
    profiled, alice_client, bob_client, client, django_assert_max_num_queries
):
    with django_assert_max_num_queries(8):
        page = alice_client.get("/memories/about-me/")
    body = page.content.decode()
    assert page.status_code == 200
    assert body.index("About you") < body.index("Montreal") < body.index("Work and study") < body.index("nurse")
    assert "sensitive: alcohol or addiction" in body and "How you like answers" in body
    assert "architect" not in body
    assert "Montreal" not in bob_client.get("/memories/about-me/").content.decode()
    assert client.get("/memories/about-me/").status_code == 302  # signed out: to the sign-in page
    assert 'href="/memories/about-me/"' in alice_client.get("/memories/").content.decode()
