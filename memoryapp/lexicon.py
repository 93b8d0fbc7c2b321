"""The word lists the rules read, kept as data in `lexicon.toml`: one entry per concept, each
saying what its words are for and which modules read it. A list is defined once; a rule that
needs it asks for it by the entry's name (`lexicon.words`), and a concept made of others names
them (`with`). `tests/memoryapp/test_lexicon.py` checks every entry and that no module writes a
word list of its own.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

PATH = Path(__file__).with_name("lexicon.toml")


@functools.cache
def entries() -> dict[str, dict]:
    """Every entry of the lexicon, by concept."""
    with PATH.open("rb") as handle:
        return tomllib.load(handle)


@functools.cache
def words(concept: str) -> frozenset[str]:
    """The words of one concept: its own and those of the concepts it is made `with`."""
    entry = entries()[concept]
    found = set(ordered(concept))
    for part in entry.get("with", []):
        found |= words(part)
    return frozenset(found)


@functools.cache
def ordered(concept: str) -> tuple[str, ...]:
    """The concept's own words in the order the file gives them, for a pattern built from them.
    `words` is a string of words split on spaces, or a list of such strings (a line each, with
    comments between them in the file); `items` is a list of phrases kept whole."""
    entry = entries()[concept]
    lines = entry.get("words", [])
    said = [word for line in ([lines] if isinstance(lines, str) else lines) for word in line.split()]
    return (*said, *entry.get("items", []))
