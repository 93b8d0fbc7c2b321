"""The labelled suite: its file format, loading and validation.

The suite (`eval/suite.json`, format in `eval/README.md`) lists, per user, the turns they
say, the facts a careful extractor should store from each turn, and probes with the facts
they should recall. Stored facts are matched to labels by keywords, not by exact text, so
the same suite scores the rule-based extractor and any model behind the endpoint: a memory
matches a labelled fact when every keyword of one of the fact's alternatives starts a word
of the memory's normalised text.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SUITE = Path(__file__).resolve().parent / "suite.json"  # rules, prompts and thresholds are tuned on it
UNSEEN = Path(__file__).resolve().parent / "unseen.json"  # never tuned on: the figures that count
CHATS = Path(__file__).resolve().parent / "chats.json"  # never tuned on: how people write in a long chat
SUITE_FORMAT = 1


class SuiteError(ValueError):
    """The suite file does not follow the documented format."""


def normalise(text: str) -> str:
    """Case- and accent-folded words separated by single spaces ("Lucía's" -> "lucia s")."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return " ".join(re.sub(r"[^\w+/-]+", " ", stripped).split())


@dataclass(frozen=True)
class ExpectedFact:
    key: str
    text: str
    alternatives: tuple[tuple[str, ...], ...]
    optional: bool = False  # true and durable, but a careful extractor may leave it out
    sensitive: bool = False  # of a special category (health, a child, faith, money...): only for a turn on its topic

    def match_strength(self, memory_text: str) -> int:
        """How many keywords of the best matching alternative the memory has; 0 if none matches."""
        words = normalise(memory_text).split()
        best = 0
        for keywords in self.alternatives:
            if all(any(word.startswith(k) for word in words) for k in keywords):
                best = max(best, len(keywords))
        return best


@dataclass(frozen=True)
class SuiteTurn:
    text: str
    facts: tuple[str, ...]
    kind: str = ""  # what sort of turn it is; unlabelled: "stated" or "nothing"
    lang: str = "en"
    optional: tuple[str, ...] = ()  # facts it also states that it may or may not write

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", "stated" if self.facts else "nothing")


@dataclass(frozen=True)
class Probe:
    text: str
    expect: tuple[str, ...]
    kind: str = ""  # what sort of probe it is; unlabelled: "expects" or "null"
    lang: str = "en"

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", "expects" if self.expect else "null")


@dataclass(frozen=True)
class PastTurn:
    """A turn for the chat history reference alone: an event of the user's life that is no durable
    fact ("The plumber said the boiler's valve needs replacing."), named by `events`."""

    text: str
    events: tuple[str, ...]
    lang: str = "en"


@dataclass(frozen=True)
class SuiteUser:
    name: str
    facts: dict[str, ExpectedFact]
    turns: tuple[SuiteTurn, ...]
    probes: tuple[Probe, ...]
    # The chat history reference's cases (eval/history.py): past turns, said after `turns`, and
    # probes whose evidence is a past turn (an event, or a fact's turn) or, for `expect: []`, none.
    past: tuple[PastTurn, ...] = ()
    recollections: tuple[Probe, ...] = ()

    def classify(self, memory_text: str) -> str | None:
        """The labelled fact a stored memory states, or None when it states none of them.

        An optional fact is only the answer when no expected fact matches, so it never takes a
        memory away from the fact a turn should write."""
        for optional in (False, True):
            best_key, best = None, 0
            for key, fact in self.facts.items():
                if fact.optional != optional:
                    continue
                strength = fact.match_strength(memory_text)
                if strength > best:
                    best_key, best = key, strength
            if best_key is not None:
                return best_key
        return None


@dataclass(frozen=True)
class InventedFact:
    kind: str
    turn: str
    fact: str


@dataclass(frozen=True)
class Suite:
    users: tuple[SuiteUser, ...]
    invented: tuple[InventedFact, ...]
    misattributed: tuple[InventedFact, ...] = ()

    @property
    def turn_count(self) -> int:
        return sum(len(u.turns) for u in self.users)

    @property
    def probe_count(self) -> int:
        return sum(len(u.probes) for u in self.users)


def _keys(raw: object, known: Collection[str], where: str, noun: str = "expected facts") -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
        raise SuiteError(f"{where}: expected a list of fact keys")
    unknown = [k for k in raw if k not in known]
    if unknown:
        raise SuiteError(f"{where}: keys that are not {noun}: {unknown}")
    return tuple(raw)


def _label(raw: dict, key: str, where: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise SuiteError(f"{where}: {key} must be a string")
    return value


def _history(raw: object, facts: dict[str, ExpectedFact], name: str) -> tuple[tuple[PastTurn, ...], tuple[Probe, ...]]:
    """A user's `history` section: past turns naming their events, and probes expecting events or facts."""
    if not isinstance(raw, dict):
        raise SuiteError(f"{name}: history must be an object")
    past = []
    for n, t in enumerate(raw.get("turns", []), start=1):
        events = t.get("events", [])
        if not isinstance(events, list) or not events or not all(isinstance(e, str) and e for e in events):
            raise SuiteError(f"{name} past turn {n}: events must be a non-empty list of ids")
        clash = [e for e in events if e in facts]
        if clash:
            raise SuiteError(f"{name} past turn {n}: events that are also fact ids: {clash}")
        past.append(
            PastTurn(text=t["text"], events=tuple(events), lang=_label(t, "lang", f"{name} past turn {n}") or "en")
        )
    known = set(facts) | {e for t in past for e in t.events}
    recollections = tuple(
        Probe(
            text=p["text"],
            expect=_keys(p.get("expect", []), known, f"{name} recollection {n}", "facts or past events"),
            kind=_label(p, "kind", f"{name} recollection {n}"),
            lang=_label(p, "lang", f"{name} recollection {n}") or "en",
        )
        for n, p in enumerate(raw.get("probes", []), start=1)
    )
    return tuple(past), recollections


def load_suite(path: Path | str = DEFAULT_SUITE) -> Suite:
    """Read and validate a suite file; a malformed one raises SuiteError naming the place."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    if data.get("format") != SUITE_FORMAT:
        raise SuiteError(f"{path}: format must be {SUITE_FORMAT}")
    users: list[SuiteUser] = []
    for raw_user in data.get("users", []):
        name = raw_user["user"]
        facts = {}
        for key, raw_fact in raw_user.get("facts", {}).items():
            alternatives = tuple(tuple(normalise(a).split()) for a in raw_fact["match"])
            if not alternatives or not all(alternatives):
                raise SuiteError(f"{name}.{key}: match needs at least one non-empty alternative")
            optional = raw_fact.get("optional", False)
            sensitive = raw_fact.get("sensitive", False)
            for flag, value in (("optional", optional), ("sensitive", sensitive)):
                if not isinstance(value, bool):
                    raise SuiteError(f"{name}.{key}: {flag} must be true or false")
            facts[key] = ExpectedFact(
                key=key, text=raw_fact["text"], alternatives=alternatives, optional=optional, sensitive=sensitive
            )
        expected = {k: f for k, f in facts.items() if not f.optional}
        optional_facts = {k: f for k, f in facts.items() if f.optional}
        turns = tuple(
            SuiteTurn(
                text=t["text"],
                facts=_keys(t.get("facts", []), expected, f"{name} turn {n}"),
                kind=_label(t, "kind", f"{name} turn {n}"),
                lang=_label(t, "lang", f"{name} turn {n}") or "en",
                optional=_keys(t.get("optional", []), optional_facts, f"{name} turn {n}", "optional facts"),
            )
            for n, t in enumerate(raw_user.get("turns", []), start=1)
        )
        probes = tuple(
            Probe(
                text=p["text"],
                expect=_keys(p.get("expect", []), expected, f"{name} probe {n}"),
                kind=_label(p, "kind", f"{name} probe {n}"),
                lang=_label(p, "lang", f"{name} probe {n}") or "en",
            )
            for n, p in enumerate(raw_user.get("probes", []), start=1)
        )
        unstated = set(facts) - {k for t in turns for k in (*t.facts, *t.optional)}
        if unstated:
            raise SuiteError(f"{name}: facts no turn states: {sorted(unstated)}")
        past, recollections = _history(raw_user.get("history", {}), facts, name)
        users.append(
            SuiteUser(name=name, facts=facts, turns=turns, probes=probes, past=past, recollections=recollections)
        )
    if len({u.name for u in users}) != len(users):
        raise SuiteError(f"{path}: user names must be unique")
    invented, misattributed = (
        tuple(InventedFact(kind=i.get("kind", ""), turn=i["turn"], fact=i["fact"]) for i in data.get(name, []))
        for name in ("invented", "misattributed")
    )
    return Suite(users=tuple(users), invented=invented, misattributed=misattributed)
