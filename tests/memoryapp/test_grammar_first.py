"""With a model configured, the parse of an English turn comes first (MEMORY_GRAMMAR_FIRST, on by
default): the model is asked only about turns the parse states nothing in and that may be about
the user."""

import pytest

from memoryapp.models import Memory
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def grammar_first(fake_llm, settings):
    settings.MEMORY_GRAMMAR_FIRST = True
    return fake_llm


def live_texts(user) -> list[str]:
    return list(Memory.objects.filter(user=user, deleted_at__isnull=True).order_by("id").values_list("text", flat=True))


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("I'm divorced.", "The user is divorced."),
        ("Please keep your answers short from now on.", "The user wants the assistant to keep its answers short."),
    ],
)
def test_an_english_turn_the_parse_reads_never_reaches_the_model(alice, grammar_first, turn, fact):
    grammar_first.facts("The user's name is Dr. Alvarez.")  # what the model would have said
    assert remember(alice, user_turn(alice, turn)).stored == 1
    assert live_texts(alice) == [fact]
    assert grammar_first.chat_requests() == []


def test_an_english_turn_the_parse_finds_nothing_in_goes_to_the_model_and_its_gate(alice, grammar_first):
    grammar_first.facts("The user uses Vim.", "The user's name is Dr. Alvarez.")
    assert remember(alice, user_turn(alice, "Vim user here, what's the best plugin manager?")).stored == 1
    assert live_texts(alice) == ["The user uses Vim."]  # the invented name still fails the gate
    assert len(grammar_first.chat_requests()) == 1


@pytest.mark.parametrize(
    "turn", ["Cristiano Ronaldo is from Madeira.", "Is it rude to tip in Japan?", "Dana works as a nurse at Rush."]
)
def test_an_english_turn_about_others_only_writes_nothing_and_never_reaches_the_model(alice, grammar_first, turn):
    grammar_first.facts("The user is from Madeira.")
    assert remember(alice, user_turn(alice, turn)).stored == 0
    assert live_texts(alice) == []
    assert grammar_first.chat_requests() == []


def test_a_sentence_with_no_subject_may_be_the_user_speaking_and_goes_to_the_model(alice, grammar_first):
    grammar_first.facts("The user lives in Lisbon.")
    assert remember(alice, user_turn(alice, "Still in Lisbon, loving it.")).stored == 1
    assert live_texts(alice) == ["The user lives in Lisbon."]
    assert len(grammar_first.chat_requests()) == 1


def test_a_turn_in_another_language_goes_to_the_model(alice, grammar_first):
    grammar_first.facts("The user has been vegan for three years.")
    assert remember(alice, user_turn(alice, "Je suis végane depuis trois ans.")).stored == 1
    assert live_texts(alice) == ["The user has been vegan for three years."]
    assert len(grammar_first.chat_requests()) == 1


def test_a_model_that_finds_nothing_in_a_turn_with_no_subject_writes_nothing(alice, grammar_first):
    grammar_first.facts()
    assert remember(alice, user_turn(alice, "thanks!")).stored == 0
    assert live_texts(alice) == []
    assert len(grammar_first.chat_requests()) == 1


def test_turned_off_the_model_extracts_from_every_turn(alice, fake_llm, settings):
    settings.MEMORY_GRAMMAR_FIRST = False
    fake_llm.facts("The user is divorced.")
    remember(alice, user_turn(alice, "I'm divorced."))
    assert live_texts(alice) == ["The user is divorced."]
    assert len(fake_llm.chat_requests()) == 1
