"""Facts that hold one value at a time.

A user has one name, one home city, one timezone, one age and one birthday at a time, and each
relation of theirs one age ("The user's daughter is eleven." after "... is ten."). When a
new fact fills one of these slots, the older live fact in the same slot is retired (soft
deleted, recorded as superseded), so "Actually I moved to Porto" does not leave "The user
lives in Lisbon." to be recalled beside it. Other facts accumulate: a user can like many
things. The patterns read the third-person sentences that both extractors write.
"""

from __future__ import annotations

import re

from memoryapp.grammar import FAMILY, NUMBER_WORDS

_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("name", re.compile(r"^the user(?:'s|’s)? (?:name is|full name is|goes by|is called)\b", re.I)),
    (
        "timezone",
        re.compile(r"^the user(?:'s|’s)? (?:timezone|time zone) is\b|^the user is in the \S+ time ?zone", re.I),
    ),
    (
        "home",
        # "is still in Lisbon" says the home has not changed; "is still in school" names no place;
        # "has lived in Accra for three years" lives there still, "has lived in Tokyo" may not
        re.compile(
            r"^the user (?:(?:now |currently |still )?(?:lives|resides|is based|is living) in\b"
            r"|is still in (?-i:[A-Z])"
            r"|has (?:lived|been living) in [^.;]*?\b(?:for|since)\b)",
            re.I,
        ),
    ),
    ("age", re.compile(r"^the user is \d{1,3} years? old\b", re.I)),
    ("birthday", re.compile(r"^the user(?:'s|’s)? birthday is\b", re.I)),
)


# "The user's daughter is eleven.", "The user's son Zaid is 10.", "The user's dog is 3 years old."
_RELATION_AGE = re.compile(
    r"^the user(?:'s|’s) ((?-i:(?:[a-z-]+ )?[a-z-]+))((?: (?-i:[A-Z])[\w'-]*)*) "
    rf"is (?:\d{{1,3}}|(?:{NUMBER_WORDS})(?:-\w+)?)(?: years? old)?\.?$",
    re.I,
)
SLOT_MAX = 64


def slot_of(fact: str) -> str:
    """The single-valued slot a fact fills, or "" when facts of its kind can coexist. A
    relation's age is a slot of that relation, by its name when the fact gives one: "age of
    daughter", "age of son Zaid"."""
    text = fact.strip()
    for slot, pattern in _SLOTS:
        if pattern.search(text):
            return slot
    match = _RELATION_AGE.match(text)
    if match and match.group(1).split()[-1].lower() in FAMILY:
        return f"age of {match.group(1).lower()}{match.group(2)}"[:SLOT_MAX]
    return ""
