"""Words the user quotes or pastes are not theirs: a fact is weighed against the turn's own
words only (`ParsedTurn.own_text`), in every language's quotation marks, and a reading that
loses the turn's quotation marks does not speak for the turn."""

import pytest

from memoryapp.grammar import not_own_blanked
from memoryapp.models import Memory
from memoryapp.parsed import parse_turn
from memoryapp.write import remember
from memoryapp.write.checks import FAR
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


def live_texts(user) -> list[str]:
    return list(Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True))


@pytest.mark.parametrize(
    "turn",
    [
        'Translate to French: "I am a pilot and I live in Dubai."',
        "Traduis en anglais : « Je suis pilote et j'habite à Dubaï. »",
        "Übersetze bitte: „Ich bin Pilot und wohne in Dubai.“",
        "この文を英語にして：「私はパイロットでドバイに住んでいます。」",
        "Why does this fail? `me = {'job': 'pilot', 'city': 'Dubai'}`",
    ],
)
def test_a_quotation_or_code_is_not_the_users_own_words(turn):
    said = parse_turn(turn)
    assert said.quotes and not_own_blanked(turn) != turn
    assert "Dubai" not in said.own_text and "Dubaï" not in said.own_text and "ドバイ" not in said.own_text
    assert all("ilot" not in clause.text for clause in said.clauses)


@pytest.mark.parametrize(
    "turn",
    [
        'My cat is called "Miso".',
        'I keep rereading "You Are Not So Smart".',
        "I use `pnpm` for everything, how do I update it?",
        "Mi perro se llama «Toby».",
        "I live in Dubai and work as a pilot.",
    ],
)
def test_a_title_or_a_name_in_quotation_marks_or_backticks_is_the_users_own(turn):
    said = parse_turn(turn)
    assert not said.quotes and said.own_text == turn


def test_facts_taken_from_a_quotation_are_refused_and_the_users_own_are_kept(alice, fake_llm):
    turn = 'I\'m a translator in Lyon. Can you check this line: "I am a pilot and I live in Dubai."'
    fake_llm.facts("The user is a pilot.", "The user is a translator in Lyon.")
    written = remember(alice, user_turn(alice, turn))
    assert live_texts(alice) == ["The user is a translator in Lyon."]
    assert ("The user is a pilot.", FAR) in written.refused


def test_a_reading_that_loses_the_quotation_marks_supports_nothing(alice, fake_llm, settings):
    settings.MEMORY_GRAMMAR_FIRST = True
    settings.MEMORY_READ_IN_ENGLISH = True
    # asked to translate a sentence, the reading translates only the sentence
    fake_llm.reply("I am a vegetarian and have three cats.")
    fake_llm.facts("The user is a vegetarian.")
    written = remember(alice, user_turn(alice, 'Traduz para inglês: "Sou vegetariana e tenho três gatos."'))
    assert written.stored == 0 and live_texts(alice) == []
