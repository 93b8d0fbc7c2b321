"""What a turn does decides what of the past it may be quoted (chat.history.turn_form): a question
from the lower floor, a request from the higher, and a turn that only tells something nothing."""

from __future__ import annotations

import pytest

from chat.history import QUESTION, REQUEST, STATEMENT, excerpt_floor, history_for_turn, history_nearest, turn_form
from chat.services import conversation_create
from memoryapp import thresholds
from memoryapp.embeddings import get_embedder
from memoryapp.read.recall import read_turn
from tests.factories import chat


@pytest.mark.parametrize(
    "text",
    [
        "What did the plumber say was wrong with our boiler?",
        "what was that place called",  # English with no question mark: every sentence opens with a question word
        "How long did the Stelvio climb take me?",  # "how" of what was, not how to
        "¿Qué hotel reservamos para el aniversario de mis padres?",
        "横浜での撮影はいつですか？",
        "هل تتذكر اسم المطعم؟",
    ],
)
def test_a_question_in_any_script_is_a_question(text):
    assert turn_form(text) == QUESTION


@pytest.mark.parametrize(
    "text",
    [
        "Plan my week around my shifts.",
        "Please suggest a film for tonight.",
        "Help me prepare for my English exam.",
        "I need tips for my interview.",  # a word of asking for advice
        "How do I fold a fitted sheet?",  # how to do something: advice, not anything the user said
        "Should I shoot weddings in RAW or JPEG?",
        "Can I freeze cooked rice?",
    ],
)
def test_asking_the_assistant_for_something_or_for_advice_is_a_request(text):
    assert turn_form(text) == REQUEST


@pytest.mark.parametrize(
    "text",
    [
        "I'm grading essays all weekend.",
        "Picked up an extra shift this weekend.",  # its "I" left out: a past verb, no imperative
        "I picked the blue sofa in the end.",  # a word of advice as the user's own doing
        'My son keeps asking "why is the sky blue?" every morning.',  # a quoted question asks nothing
        "Sugira um almoço para mim.",  # no parse and no question mark: read as telling
    ],
)
def test_a_turn_that_only_tells_is_a_statement(text):
    assert turn_form(text) == STATEMENT


def test_a_question_has_the_lower_floor_and_a_statement_none():
    model = get_embedder().name
    question = excerpt_floor("What did the vet say about the limp?", model)
    request = excerpt_floor("Plan a walk for the dog this weekend.", model)
    assert question == thresholds.history_question_floor(model)
    assert request == thresholds.history_floor(model)
    assert question is not None and request is not None and question <= request
    assert excerpt_floor("Took the dog for a long walk this morning.", model) is None


@pytest.mark.django_db(transaction=True)
def test_a_statement_beside_a_close_past_turn_is_quoted_nothing_and_a_question_about_it_is(alice):
    vet = "The vet said Pixel's limp is a sprained paw and she needs two weeks of rest."
    chat(alice, vet)
    statement = "Took Pixel for a short walk this morning, she's limping a bit."
    embedder = get_embedder()
    close = history_nearest(
        user=alice,
        text=statement,
        vector=embedder.embed([statement])[0],
        embedding_model=embedder.name,
        exclude_conversation_id=None,
        k=3,
        min_sim=thresholds.history_floor(embedder.name),
    )
    assert [excerpt.turn.content for excerpt in close] == [vet]  # it clears even the request floor
    now = conversation_create(user=alice)
    read = read_turn(alice, statement)
    assert history_for_turn(user=alice, text=statement, read=read, conversation=now) == []
    question = "What did the vet say about my dog's limp?"
    found = history_for_turn(user=alice, text=question, read=read_turn(alice, question), conversation=now)
    assert [excerpt.turn.content for excerpt in found] == [vet]
