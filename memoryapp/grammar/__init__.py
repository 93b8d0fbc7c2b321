"""Offline extraction from the grammar of a turn, on spaCy's small English pipeline.

A turn is parsed once. Each clause whose subject is the user ("I", "we"), and that states
something durable, becomes one standalone third-person sentence: identity, home, work, family,
health and diet, possessions, traits, preferences, goals and ongoing activities, events, and
standing instructions to the assistant ("from now on, answer in British English"). Clauses said
in passing inside a question or a request count ("Since I'm moving to Toronto in January, what
coat should I buy?" -> "The user is moving to Toronto in January."); the question itself does
not. Another person's clause gives only their name and age as the user's relation ("my son
Mateo just turned seven"). Nothing is taken from hypotheticals, quoted text or code, transient
states ("I'm tired"), opinions ("I think ..."), or clauses that lean on a word they do not
define ("I can't stand it"). A turn that asks to forget or not to remember writes nothing.

The parser is English. A turn in another language parses into nothing useful, and the caller
falls back to the multilingual patterns of `memoryapp.write.rules`.

The parts, each importing only those above it:
- `parsing`: the parse, the user's own words, whether a turn is English, the shared word lists;
- `turns`: what kind of turn it is (only asks, speaks of anyone, asks to forget);
- `clauses`: a clause as a third-person sentence, and what keeps it from being a fact;
- `facts`: a fact's own form, and why it is not a fact about the user;
- `comparing`: a fact against its turn (the gate's checks);
- `extract`: facts from a parsed turn.
This package re-exports what the rest of the app uses, so callers write `grammar.extract`.
"""

from __future__ import annotations

from memoryapp.grammar.clauses import Piece
from memoryapp.grammar.comparing import (
    about_others_only,
    about_shown_code,
    no_longer_abroad,
    restated_question,
    reversed_comparison,
    says_more,
    stale_value,
    unsaid_name,
)
from memoryapp.grammar.extract import aged_relations, extract
from memoryapp.grammar.facts import (
    as_user_sentence,
    claim,
    fact_problems,
    home_and_company,
    job_and_place,
    past_tense_verb,
    without_address,
)
from memoryapp.grammar.parsing import (
    FAMILY,
    FIRST_PERSON,
    KIN,
    NUMBER_WORDS,
    PETS,
    RELATIONS,
    analyse,
    has_user_clause,
    leans_on_context,
    looks_english,
    not_own_blanked,
    own_words,
    parser,
    recognise,
)
from memoryapp.grammar.turns import (
    asks_how_to,
    asks_outright,
    code_spans,
    forget_object,
    is_forget_request,
    only_asks,
    only_asks_abroad,
    only_asks_for_something,
    requests_something,
    speaks_of_anyone,
)

__all__ = [
    "FAMILY",
    "FIRST_PERSON",
    "KIN",
    "NUMBER_WORDS",
    "PETS",
    "Piece",
    "RELATIONS",
    "about_others_only",
    "about_shown_code",
    "aged_relations",
    "analyse",
    "as_user_sentence",
    "asks_how_to",
    "asks_outright",
    "claim",
    "code_spans",
    "extract",
    "fact_problems",
    "forget_object",
    "has_user_clause",
    "home_and_company",
    "is_forget_request",
    "job_and_place",
    "leans_on_context",
    "looks_english",
    "no_longer_abroad",
    "only_asks",
    "only_asks_abroad",
    "only_asks_for_something",
    "not_own_blanked",
    "own_words",
    "parser",
    "past_tense_verb",
    "recognise",
    "requests_something",
    "restated_question",
    "reversed_comparison",
    "says_more",
    "speaks_of_anyone",
    "stale_value",
    "unsaid_name",
    "without_address",
]
