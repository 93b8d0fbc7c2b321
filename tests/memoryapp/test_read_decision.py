"""The read path decides first whether a turn needs the user's memory at all."""

import pytest

from memoryapp.read.need import NEEDED, NOT_NEEDED, UNDECIDED, memory_need
from memoryapp.read.recall import recall, recall_for_turn
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "turn",
    [
        "Where do I live?",
        "What's my dog called?",
        "Plan a dinner menu for me.",
        "Recommend a film for tonight.",
        "Any good bakeries around here?",
        "Which tools should we use for the migration?",
        "Can you suggest a gift?",
    ],
)
def test_a_turn_about_the_user_or_asking_for_advice_needs_memory(turn):
    assert memory_need(turn) == NEEDED


@pytest.mark.parametrize(
    "turn",
    [
        "Who invented the telephone?",
        "Tell me a joke.",
        "Explain quantum entanglement simply.",
        "Translate 'good night' into German.",
        "What is the boiling point of water at sea level?",
        "Give me a fun fact about octopuses.",
    ],
)
def test_a_general_question_needs_none(turn):
    assert memory_need(turn) == NOT_NEEDED


@pytest.mark.parametrize("turn", ["¿Dónde vivo?", "Wo wohne ich?", "私はどこに住んでいますか？"])
def test_a_turn_in_another_language_is_left_to_the_floor(turn):
    assert memory_need(turn) == UNDECIDED


def test_a_general_question_gets_no_memory_however_close_a_fact_is(alice):
    assert remember(alice, user_turn(alice, "I drive a 2019 Tesla Model 3.")).stored == 1
    assert recall(alice, "Who founded Tesla?")  # the floor alone lets the car through
    assert recall_for_turn(alice, "Who founded Tesla?") == []
    assert [r.memory.text for r in recall_for_turn(alice, "Which car do I drive?")] == [
        "The user drives a 2019 Tesla Model 3."
    ]


def test_a_how_to_question_gets_a_memory_only_above_the_recall_floor(alice):
    assert remember(alice, user_turn(alice, "I play the cello.")).stored == 1
    question = "How do I clean a cast iron pan?"
    assert memory_need(question) == NEEDED  # it may depend on who asks ...
    assert recall(alice, question, min_sim=-1.0)  # ... and the cello is its nearest memory, far off
    assert recall_for_turn(alice, question) == []
    assert remember(alice, user_turn(alice, "I cook on a gas stove.")).stored == 1
    assert [r.memory.text for r in recall_for_turn(alice, question)] == ["The user cooks on a gas stove."]
