"""A rule-based fact extractor for the offline default.

It recognises common first-person self-disclosures (name, timezone, location, work,
preferences and dislikes, family, diet and allergies, languages, tools and devices)
and states each as a standalone third-person sentence about "the user". Everything
else writes nothing: pleasantries, questions, hypotheticals, remarks about the
assistant, and statements whose subject is someone other than the user.

The patterns are data, in `rules.toml`: each with what it recognises, how its fact is
written, and the sentences it must and must not state a fact from
(`tests/memoryapp/test_rule_patterns.py` runs them all).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from string import Template

from memoryapp import lexicon, timewords
from memoryapp.attribution import sentences

PATH = Path(__file__).with_name("rules.toml")

_QUESTION_START = re.compile(
    r"^\s*(?:"
    + "|".join(map(re.escape, sorted(lexicon.words("question_words") | lexicon.words("question_auxiliaries"))))
    + r")\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|wish|might|maybe|perhaps|imagine|pretend|hypothetically|suppose|someday|"
    r"i'd|i’d|wanna|want to|going to|planning to|thinking about|considering)\b",
    re.IGNORECASE,
)
# The parts of the patterns that are built from other data.
_BUILT_PARTS = {
    "instrument": "(?:" + "|".join(map(re.escape, lexicon.ordered("instruments"))) + ")",
    "sport": "(?:" + "|".join(map(re.escape, lexicon.ordered("sports_played"))) + ")",
    "timezone": rf"(?P<v>{timewords.TIMEZONE})",
}

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
# When a fact started is not part of it: "moved to Porto last month" -> "Porto".
_SINCE_WHEN = re.compile(
    r"\s+(?:(?:last|this|next)\s+(?:week|month|year|summer|winter|spring|autumn|fall)|"
    r"(?:in|since)\s+(?:"
    + _MONTH
    + r"|\d{4})|yesterday|recently|(?:a|one|two|three|\d+)\s+(?:weeks?|months?|years?)\s+ago)$",
    re.I,
)
# First person inside a value becomes third person: "on all my machines" -> "on all their machines".
_FIRST_PERSON = {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves"}


def _clean(value: str) -> str:
    value = re.sub(r"\s+", " ", value).strip(" '\"“”‘’")
    value = re.sub(r"\s+(?:too|as well|though|anyway|now|these days|nowadays|lately|really)$", "", value, flags=re.I)
    value = _SINCE_WHEN.sub("", value)
    return value


def _third_person(value: str) -> str:
    return re.sub(r"\b(?:my|me|mine|myself)\b", lambda m: _FIRST_PERSON[m.group(0).lower()], value, flags=re.I)


_NOT_THE_USER_ALONE = re.compile(r"\b(?:you|your|yours|yourself|he|she|they|him|her|them|his|their|i|we|our)\b", re.I)


def _phrase(match: re.Match[str], rule: Rule) -> str | None:
    """The rule's template filled with the value, trimmed (`_clean`) and in the third person;
    None for a value longer than the rule allows or that speaks of anyone but the user alone."""
    value = _clean(match.group("v"))
    if not value or len(value.split()) > rule.max_words:
        return None
    if _NOT_THE_USER_ALONE.search(value):
        return None  # about the assistant, someone else or a group, not about the user alone
    return _fill(match, rule, _third_person(value))


def _verbatim(match: re.Match[str], rule: Rule) -> str | None:
    """The rule's template filled with the value as written."""
    return _fill(match, rule, match.group("v"))


def _fill(match: re.Match[str], rule: Rule, value: str) -> str:
    others = {name: (found or "").lower() for name, found in match.groupdict().items() if name != "v"}
    return rule.template.format(**others, v=value.lower() if rule.lower else value)


def _name(match: re.Match[str], rule: Rule) -> str | None:
    value = _clean(match.group("v"))
    first = value.split()[0]
    if first in lexicon.words("name_stop"):
        return None
    return f"The user's name is {value}."


# Facts are English sentences, so a place named in another language gets its English name;
# otherwise "Abito a Milano" and "I live in Milan" would store the same fact twice.
_ENGLISH_PLACE_NAMES = {
    "milano": "Milan",
    "roma": "Rome",
    "firenze": "Florence",
    "napoli": "Naples",
    "venezia": "Venice",
    "torino": "Turin",
    "genova": "Genoa",
    "lisboa": "Lisbon",
    "sevilla": "Seville",
    "zaragoza": "Saragossa",
    "münchen": "Munich",
    "köln": "Cologne",
    "wien": "Vienna",
    "praha": "Prague",
    "warszawa": "Warsaw",
    "bruxelles": "Brussels",
    "brussel": "Brussels",
    "antwerpen": "Antwerp",
    "genève": "Geneva",
    "den haag": "The Hague",
    "københavn": "Copenhagen",
    "göteborg": "Gothenburg",
    "moskva": "Moscow",
    "athína": "Athens",
    "kraków": "Krakow",
}


def _lives_in_place(match: re.Match[str], rule: Rule) -> str | None:
    value = _clean(match.group("v"))
    return f"The user lives in {_ENGLISH_PLACE_NAMES.get(value.casefold(), value)}."


def _occupation(match: re.Match[str], rule: Rule) -> str | None:
    value = _clean(match.group("v"))
    if value.split()[-1].lower() in lexicon.words("not_occupation") or len(value.split()) > 5:
        return None
    return f"The user is {match.group('art').lower()} {value}."


def _family(match: re.Match[str], rule: Rule) -> str | None:
    count = match.group("n").lower()
    noun = match.group("noun").lower()
    named = match.group("named")
    text = f"The user has {count} {noun}"
    if named:
        text += f" named {_clean(named)}"
    return text + "."


def _relative_name(match: re.Match[str], rule: Rule) -> str | None:
    return f"The user's {match.group('rel').lower()} is named {_clean(match.group('v'))}."


_BUILDERS: dict[str, Callable[[re.Match[str], Rule], str | None]] = {
    "phrase": _phrase,
    "verbatim": _verbatim,
    "name": _name,
    "place": _lives_in_place,
    "occupation": _occupation,
    "family": _family,
    "relative_name": _relative_name,
}


@dataclass(frozen=True)
class Rule:
    """One pattern of `rules.toml` and how its fact is written."""

    kind: str
    pattern: re.Pattern[str]
    builds: str = "phrase"
    template: str = ""
    max_words: int = 8
    lower: bool = False
    matches: tuple[tuple[str, str], ...] = ()
    misses: tuple[str, ...] = ()

    def fact(self, match: re.Match[str]) -> str | None:
        return _BUILDERS[self.builds](match, self)

    def facts(self, sentence: str) -> list[str]:
        """What this rule alone states from a sentence."""
        return [fact for match in self.pattern.finditer(sentence) if (fact := self.fact(match))]


@functools.cache
def rules() -> tuple[Rule, ...]:
    """The rules of `rules.toml`, in order."""
    return load(PATH)


def load(path: Path) -> tuple[Rule, ...]:
    """The rules of a file like `rules.toml`, their patterns compiled with the shared parts; a
    ValueError for a pattern that names a part there is not."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    parts = {**data["parts"], **_BUILT_PARTS}
    found = []
    for entry in data["rule"]:
        source = Template(entry.pop("pattern")).safe_substitute(parts)
        unknown = re.search(r"\$[a-z_]+", source)
        if unknown:
            raise ValueError(f"rules.toml: {entry['kind']!r} names no part {unknown.group(0)!r}")
        flags = re.IGNORECASE if entry.pop("ignore_case", True) else 0
        matches = tuple(tuple(pair) for pair in entry.pop("matches", ()))
        misses = tuple(entry.pop("misses", ()))
        found.append(Rule(pattern=re.compile(source, flags), matches=matches, misses=misses, **entry))
    return tuple(found)


_NEGATED_BEFORE = re.compile(r"\b(?:not|never|no longer|don't|do not|didn't|won't)\s*$", re.I)


def _is_candidate_sentence(sentence: str) -> bool:
    if sentence.endswith("?") or _QUESTION_START.match(sentence):
        return False
    if _HYPOTHETICAL.search(sentence):
        return False
    return True


def extract_facts_by_rules(text: str, *, limit: int = 2) -> list[str]:
    """Durable facts the user states about themselves in `text`, at most `limit`."""
    facts: list[str] = []
    # Not cut after a title: "Call me Dr. Alvarez." is one sentence.
    for sentence in sentences(text):
        if not _is_candidate_sentence(sentence):
            continue
        for rule in rules():
            for match in rule.pattern.finditer(sentence):
                if _NEGATED_BEFORE.search(sentence[: match.start()]):
                    continue
                fact = rule.fact(match)
                if fact and fact not in facts:
                    facts.append(fact)
                    if len(facts) >= limit:
                        return facts
    return facts
