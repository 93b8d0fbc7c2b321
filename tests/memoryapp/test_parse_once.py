"""The write path parses a turn once and every stage reads that parse (memoryapp.parsed): after
`parse_turn`, extraction, the gate and its checks run spaCy on no text of the turn again, and on
each clause or fact at most once."""

from collections import Counter

import pytest
from spacy.language import Language

from memoryapp.grammar import parsing
from memoryapp.parsed import parse_turn
from memoryapp.write.extract import english_reading, extract_facts
from memoryapp.write.gate import gate_facts

TURNS = [
    "I live in Lisbon and work as a nurse.",
    "Just moved to Berlin with my wife, loving it so far!",  # the "I" put back: one sentence, one parse
    "My colleague Dr. Alvarez is a surgeon, and I'm a nurse.",
    "Can you recommend a good book? I love sci-fi.",
]


@pytest.fixture
def parses(monkeypatch):
    """How many times spaCy's pipeline ran on each text."""
    counted: Counter[str] = Counter()
    run = Language.__call__

    def counting(nlp, text, *args, **kwargs):
        counted[text] += 1
        return run(nlp, text, *args, **kwargs)

    parsing.analyse.cache_clear()
    parsing._fact_parse.cache_clear()
    monkeypatch.setattr(Language, "__call__", counting)
    return counted


@pytest.mark.parametrize("turn", TURNS)
def test_each_text_of_the_write_path_is_parsed_once(parses, turn):
    said = parse_turn(turn)
    assert not said.declined
    facts = extract_facts(said.with_reading(english_reading(said)))
    assert facts, "the turn states a fact"
    gate_facts(said, facts)
    assert parses and max(parses.values()) == 1, parses


@pytest.mark.parametrize("turn", TURNS)
def test_the_stages_after_parse_turn_read_its_parse_and_never_parse_the_turn_again(parses, turn):
    said = parse_turn(turn)
    parsed = set(parses)
    parsing.analyse.cache_clear()  # a stage that asked `analyse` for the turn would parse it anew
    assert not said.declined and not said.pleasantry
    facts = extract_facts(said)
    gate_facts(said, facts)
    assert not parsed & {text for text, runs in parses.items() if runs > 1}, parses
