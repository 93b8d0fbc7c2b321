"""The write path parses each text it reads once: the turn (with its left-out "I" put back), each
clause and each fact, however many rules read them."""

from collections import Counter

import pytest
from spacy.language import Language

from memoryapp.grammar import parsing
from memoryapp.write.extract import declined, english_reading, extract_facts
from memoryapp.write.gate import gate_facts


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


@pytest.mark.parametrize(
    "turn",
    [
        "I live in Lisbon and work as a nurse.",
        "Just moved to Berlin with my wife, loving it so far!",  # the "I" put back: one sentence, one parse
        "My colleague Dr. Alvarez is a surgeon, and I'm a nurse.",
        "Can you recommend a good book? I love sci-fi.",
    ],
)
def test_each_text_of_the_write_path_is_parsed_once(parses, turn):
    assert not declined(turn)
    facts = extract_facts(turn, reading=english_reading(turn))
    assert facts, "the turn states a fact"
    gate_facts(turn, facts)
    assert parses and max(parses.values()) == 1, parses
