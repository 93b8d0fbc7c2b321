"""The chat history reference (chat.history): a later conversation finds the user's own words in an
earlier one, and never in what was deleted, temporary, redacted, forgotten or another user's."""

from __future__ import annotations

import pytest

from chat.history import history_for_turn, history_nearest, search_config
from chat.models import Turn
from chat.services import (
    chat_reply,
    chat_user_turn,
    conversation_create,
    conversation_delete,
    turn_redact,
)
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory
from memoryapp.read.recall import read_turn
from memoryapp.services import memory_pause_set, memory_restore, memory_soft_delete
from tests.factories import chat

pytestmark = pytest.mark.django_db(transaction=True)

DINNER = "We had dinner at Trattoria Lucca on Friday and the tiramisu there was the best I've ever had."
ASK = "What was the name of the place where I had that amazing tiramisu?"


def _found(user, text, conversation=None, **floor) -> list[str]:
    """The words of the past turns found for `text`, said in `conversation` (a new one by default);
    with `min_sim`, under that floor and without the limit of a reply."""
    embedder = get_embedder()
    conversation = conversation or conversation_create(user=user)
    vector = embedder.embed([text])[0]
    if floor:
        excerpts = history_nearest(
            user=user,
            text=text,
            vector=vector,
            embedding_model=embedder.name,
            exclude_conversation_id=conversation.pk,
            k=10,
            **floor,
        )
    else:
        excerpts = history_for_turn(user=user, text=text, read=read_turn(user, text), conversation=conversation)
    return [excerpt.turn.content for excerpt in excerpts]


def test_a_turn_is_indexed_once_its_memory_write_has_run(alice):
    conversation = chat(alice, DINNER)
    turn = Turn.objects.get(conversation=conversation, role=Turn.Role.USER)
    assert turn.memory_state == Turn.MemoryState.DONE
    assert turn.embedding is not None and turn.embedding_model == get_embedder().name
    assert "lucca" in str(turn.search) and "tiramisu" in str(turn.search)
    reply = Turn.objects.get(conversation=conversation, role=Turn.Role.ASSISTANT)
    assert reply.embedding is None and reply.search is None  # the assistant's words are not the user's


def test_a_later_conversation_finds_an_earlier_ones_words_until_it_is_deleted(alice):
    earlier = chat(alice, DINNER, "Can you suggest a name for my new goldfish?")
    assert _found(alice, ASK) == [DINNER]
    conversation_delete(user=alice, conversation=earlier)
    assert _found(alice, ASK, min_sim=-1.0) == []


def test_words_match_as_written_and_as_their_stem(alice):
    chat(alice, "The plumber said the boiler's pressure valve is failing and quoted 240 euros.")
    chat(alice, "I'm repainting the kitchen in sage green.")
    # an inflected form ("valves") and a number, in a turn that is not otherwise close
    found = history_nearest(
        user=alice,
        text="valves 240",
        vector=get_embedder().embed(["valves 240"])[0],
        embedding_model=get_embedder().name,
        exclude_conversation_id=None,
        k=10,
        min_sim=-1.0,
    )
    by_words = [excerpt.turn.content for excerpt in found if excerpt.lexical_rank is not None]
    assert by_words == ["The plumber said the boiler's pressure valve is failing and quoted 240 euros."]


def test_the_current_conversation_is_not_quoted_to_itself(alice):
    conversation = chat(alice, DINNER)
    assert _found(alice, ASK, conversation=conversation, min_sim=-1.0) == []
    assert _found(alice, ASK) == [DINNER]


def test_another_users_turns_are_never_found(alice, bob):
    chat(alice, DINNER)
    assert _found(bob, ASK, min_sim=-1.0) == []


def test_temporary_and_paused_turns_are_never_indexed(alice):
    temporary = conversation_create(user=alice, temporary=True)
    chat_reply(user=alice, user_turn=chat_user_turn(user=alice, conversation=temporary, content=DINNER))
    memory_pause_set(user=alice, paused=True)
    dentist = "My dentist appointment at Smile Studio is on the 14th."
    said = chat_user_turn(user=alice, conversation=conversation_create(user=alice), content=dentist)
    chat_reply(user=alice, user_turn=said)
    memory_pause_set(user=alice, paused=False)
    assert not Turn.objects.filter(user=alice, embedding__isnull=False).exists()
    assert _found(alice, ASK, min_sim=-1.0) == []
    assert _found(alice, "When is my dentist appointment?", min_sim=-1.0) == []


def test_a_turn_that_carried_a_secret_is_never_indexed_and_redacting_drops_an_index(alice):
    chat(alice, "My card number is 4111 1111 1111 1111, expiry 09/29, for the Trattoria Lucca booking.")
    withheld = Turn.objects.get(user=alice, role=Turn.Role.USER)
    assert withheld.memory_state == Turn.MemoryState.WITHHELD and withheld.embedding is None

    conversation = chat(alice, DINNER)
    turn = Turn.objects.get(conversation=conversation, role=Turn.Role.USER)
    Turn.objects.filter(pk=turn.pk).update(content=DINNER + " My PIN is 4321.")  # said, not yet redacted
    turn.refresh_from_db()
    assert turn_redact(user=alice, turn=turn) == 1
    turn.refresh_from_db()
    assert turn.embedding is None and turn.search is None and turn.embedding_model == ""
    assert _found(alice, ASK, min_sim=-1.0) == []


def test_a_turn_that_stated_a_deleted_memory_is_not_quoted_until_it_is_restored(alice):
    chat(alice, "I work as a nurse at St Mary's hospital in Leeds.")
    memory = Memory.objects.get(user=alice)
    probe = "What do I do at St Mary's?"
    assert _found(alice, probe, min_sim=-1.0) == ["I work as a nurse at St Mary's hospital in Leeds."]
    memory_soft_delete(user=alice, memory_id=memory.pk)
    assert _found(alice, probe, min_sim=-1.0) == []
    memory_restore(user=alice, memory_id=memory.pk)
    assert _found(alice, probe, min_sim=-1.0) == ["I work as a nurse at St Mary's hospital in Leeds."]


def test_the_floor_comes_after_the_limit(alice):
    chat(alice, DINNER, "I'm thinking about repainting the kitchen.")
    assert len(_found(alice, "Who won the World Cup in 2010?", min_sim=-1.0)) == 2  # top-k alone: every row
    assert _found(alice, "Who won the World Cup in 2010?") == []


@pytest.mark.parametrize(
    ("text", "config"),
    [
        ("I work as a nurse in Leeds.", "english"),
        ("Wo habe ich am Freitag gegessen?", "german"),
        ("¿Dónde cené el viernes?", "spanish"),
        ("東京に住んでいます。", "simple"),  # no configuration for Japanese
        ("ok", "simple"),  # too short to tell
    ],
)
def test_each_turn_is_searched_in_its_languages_configuration(text, config):
    assert search_config(text) == config


def test_the_same_question_asked_before_is_not_quoted_back(alice):
    chat(alice, DINNER)
    chat(alice, ASK)  # asked once already, in another conversation
    assert _found(alice, ASK) == [DINNER]
    assert ASK in _found(alice, ASK, min_sim=-1.0)  # found, and left out as saying what the turn says
