"""The write gate: which of a turn's candidate facts may be kept, and why the others may not.

A fact is weighed against its own turn (an invented fact scores low against its source), read
for whose fact it is, and checked for what no memory may be. The checks are named entries of
memoryapp.write.checks, asked in their stages around the similarity step:
1. the turn's and each fact's form (`TURN`, `FORM`), whatever the similarity;
2. the similarity step (`FAR`): the fact's cosine similarity to the turn, or to one of its
   clauses, is at or above the write gate, so a true fact stated in one clause of a long message
   is not diluted by the rest, while an invented fact stays low against every clause;
3. the clause that supports it best (`SUPPORT`): whose fact it is (similarity measures topic,
   not subject) and whether it says what the turn says.
A refused fact carries the code of the check that refused it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
from django.conf import settings

from memoryapp import attribution, grammar, thresholds, timewords
from memoryapp.embeddings import Embedder, get_embedder, get_multilingual_embedder
from memoryapp.keys import keys_of
from memoryapp.parsed import ParsedTurn
from memoryapp.wording import INSTRUCTION, as_said
from memoryapp.write.checks import FAR, FORM, SUPPORT, TURN, Candidate, first_refusal

# The clauses of a turn are gate sources too, so a true fact stated in one clause of a
# long message is not diluted away by the rest of it, while an invented fact stays low against
# every clause (measured: docs/quality/2026-12-06-constants.md). Bounded to keep the batch small.
_MAX_GATE_CLAUSES = 15

# The first-person form shares the turn's wording whether or not the fact is true, so it must
# clear the gate by this much more: the middle of the margins that, on the suite, keep every
# invented fact out and gain the same true ones (measured: docs/quality/2026-12-06-constants.md).
FIRST_PERSON_MARGIN = 0.22


@dataclass(frozen=True)
class GatedFact:
    text: str
    similarity: float
    vector: np.ndarray
    rejected_because: str = ""
    # the needs the fact answers (memoryapp.keys), embedded in the gate's batch
    keys: dict[str, np.ndarray] = field(default_factory=dict)
    check: str = ""  # the code of the check that refused it (memoryapp.write.checks)


def gate_facts(
    said: ParsedTurn, facts: list[str], *, content_vector: np.ndarray | None = None
) -> tuple[str, list[GatedFact], list[GatedFact]]:
    """Embed the turn, its clauses and the candidate facts in one batch; split the facts into
    kept and rejected. `content_vector`, the turn's own embedding by the configured model when
    the read path already made it, is used instead of embedding the turn again. The turn's
    English reading by the model, when it has one, adds its clauses to the turn's when the
    multilingual encoder finds it close to the turn (MEMORY_READING_FLOOR): a clause of it can
    then support a fact, and be read for whose fact it is, as an English clause is. The day the
    turn was said lets a fact dated from one of the turn's relative time words be compared in the
    turn's words ("on 11 August 2023" as "last Friday").
    The steps a fact must pass are in this module's docstring.
    """
    embedder = get_embedder()
    sources = _Sources.of(said)
    batch = _embed_batch(embedder, sources, facts, said, content_vector)
    gate = thresholds.write_gate(embedder.name)
    kept: list[GatedFact] = []
    rejected: list[GatedFact] = []
    problems = grammar.fact_problems(facts, said.text)
    across = _across_languages(said, facts, [part.text for part in sources.parts[: sources.own]])
    literal = set(grammar.aged_relations(said.doc)) if across is None else set()
    # Only a faithful reading speaks for the turn (`_faithful`).
    told = said if sources.read or said.reading is None else replace(said, reading=None)
    # The turn's own checks are asked once: they read the turn alone, whatever the fact.
    turn_refused = first_refusal(TURN, Candidate("", told)) if facts else None
    for i, (text, vector, problem) in enumerate(zip(facts, batch.facts, problems, strict=True)):
        candidate = Candidate(text, told, problem)
        refused = turn_refused or first_refusal(FORM, candidate)
        if refused:
            rejected.append(GatedFact(text, 0.0, vector, refused[1], check=refused[0]))
            continue
        similarities = _similarities(batch, i, text)
        if across is not None:
            # English facts from a turn in another language: the multilingual encoder decides,
            # or the configured encoder against the English reading's clauses
            reading_best = float(np.max(similarities[-len(sources.read) :])) if sources.read else -1.0
            similarity = max(float(across.by_turn[i]), reading_best)
            passed = float(across.by_turn[i]) >= across.gate or reading_best >= gate
        else:
            similarity = float(np.max(similarities))
            passed = similarity >= gate or text in literal
        if not passed:
            rejected.append(GatedFact(text, similarity, vector, "too far from the turn", check=FAR))
            continue
        by_own_clause = across.by_clause[i] if across is not None else None
        refused = first_refusal(SUPPORT, _supported(candidate, sources, similarities, by_own_clause))
        if refused:
            rejected.append(GatedFact(text, similarity, vector, refused[1], batch.keyed[i], check=refused[0]))
        else:
            kept.append(GatedFact(text, similarity, vector, "", batch.keyed[i]))
    return embedder.name, kept, rejected


@dataclass(frozen=True)
class _Sources:
    """What a fact is weighed against: the turn, its clauses (`own` of them), then the clauses of
    its faithful English reading (`read`)."""

    texts: list[str]  # the turn, then each clause's text
    parts: list[attribution.Clause]
    own: int
    read: list[attribution.Clause]

    @classmethod
    def of(cls, said: ParsedTurn) -> _Sources:
        parts = list(said.clauses[:_MAX_GATE_CLAUSES]) or [attribution.Clause(said.text, "unknown")]
        own = len(parts)
        reading = said.reading
        read = list(reading.clauses[:_MAX_GATE_CLAUSES]) if reading and _faithful(said, reading) else []
        parts = [*parts, *read]
        return cls([said.own_text, *(part.text for part in parts)], parts, own, read)


@dataclass(frozen=True)
class _Batch:
    """The one embedding call of the gate, split back into its parts."""

    sources: np.ndarray  # the turn and its clauses
    facts: np.ndarray
    worded: dict[int, np.ndarray]  # a dated fact in the turn's own time words
    said: dict[int, np.ndarray]  # a fact as the user would have said it
    keyed: list[dict[str, np.ndarray]]  # each fact's keys (memoryapp.keys)


def _embed_batch(
    embedder: Embedder,
    sources: _Sources,
    facts: list[str],
    turn: ParsedTurn,
    content_vector: np.ndarray | None,
) -> _Batch:
    """Embed the turn (unless its vector is given), its clauses, the facts, their other wordings
    and their keys in one call."""
    worded = {
        i: text for i, fact in enumerate(facts) if (text := timewords.as_worded(fact, turn.text, turn.said_on)) != fact
    }
    said = {i: spoken for i, fact in enumerate(facts) if (spoken := as_said(worded.get(i, fact)))}
    fact_keys = [keys_of(fact) for fact in facts]
    extra = [*facts, *worded.values(), *said.values(), *(key for keys in fact_keys for key in keys)]
    if content_vector is not None and not turn.quotes:  # the read path embedded the whole turn
        vectors = embedder.embed([*sources.texts[1:], *extra])
        vectors = np.vstack([np.asarray(content_vector, dtype=vectors.dtype)[None, :], vectors])
    else:
        vectors = embedder.embed([*sources.texts, *extra])
    after = len(sources.texts) + len(facts)
    after_said = after + len(worded) + len(said)
    key_vectors = iter(vectors[after_said:])
    return _Batch(
        sources=vectors[: len(sources.texts)],
        facts=vectors[len(sources.texts) : after],
        worded=dict(zip(worded, vectors[after : after + len(worded)], strict=True)),
        said=dict(zip(said, vectors[after + len(worded) : after_said], strict=True)),
        keyed=[{key: next(key_vectors) for key in keys} for keys in fact_keys],
    )


def _similarities(batch: _Batch, i: int, text: str) -> np.ndarray:
    """Fact i against each source: the best of its own words, its words in the turn's time words,
    and its first-person form (held FIRST_PERSON_MARGIN lower, except an instruction's)."""
    similarities = batch.sources @ batch.facts[i]
    if i in batch.worded:
        similarities = np.maximum(similarities, batch.sources @ batch.worded[i])
    if i in batch.said:
        margin = 0.0 if INSTRUCTION.match(text) else FIRST_PERSON_MARGIN
        similarities = np.maximum(similarities, batch.sources @ batch.said[i] - margin)
    return similarities


def _supported(
    candidate: Candidate, sources: _Sources, similarities: np.ndarray, by_own_clause: np.ndarray | None
) -> Candidate:
    """The candidate with the clause that supports it best and the turn's own clause nearest it.
    For a turn in another language that has a faithful reading, only the reading's clauses can
    say whose the fact is: the turn's own are not read for their subject, so "ابني ... عمره عشر
    سنوات" ("My son is ten") would pass "The user is 10 years old." on its Arabic clause. The
    turn's own clause closest to the fact is read for a "no longer" in the turn's language."""
    first = len(sources.parts) - len(sources.read) if sources.read else 0
    support = sources.parts[first + int(np.argmax(similarities[1 + first :]))]
    own = by_own_clause if by_own_clause is not None else similarities[1 : 1 + sources.own]
    nearest = sources.parts[int(np.argmax(own))]
    return replace(candidate, support=support, nearest=nearest.text)


def _numbers(text: str) -> set[int]:
    return {int(digits) for digits in re.findall(r"\d+", text)}  # "٢٥" and "２５" are 25 too


def _faithful(said: ParsedTurn, read: ParsedTurn) -> bool:
    """Whether an English reading says what the turn says, by the multilingual encoder: a
    translation that drifts or garbles ("Vivo en Nápoles y trabajo como enfermera." -> "I am a
    pilot in Dubai.", 0.30),
    or a turn in a language the encoder does not read, scores low against it. A number the turn
    does not write is an invention of the reading ("I am 25 years old and ..."), and so is a
    reading that drops the relative or colleague a clause is about, however close the rest is.
    A reading that loses the turn's quotation marks has taken quoted words for the user's own
    (or, asked to translate a sentence, translated only that sentence)."""
    content, reading = said.text, read.text
    if said.quotes and not read.quotes:
        return False
    if _numbers(reading) - _numbers(content) or attribution.lost_relation(content, reading):
        return False
    return _closeness(content, reading) >= settings.MEMORY_READING_FLOOR


@lru_cache(maxsize=64)
def _closeness(content: str, reading: str) -> float:
    """The multilingual encoder's similarity of a turn and its reading: asked by the write path
    before extraction (`faithful_reading`) and again by the gate, for the same two texts."""
    vectors = get_multilingual_embedder().embed([content, reading])
    return float(vectors[0] @ vectors[1])


def faithful_reading(said: ParsedTurn) -> ParsedTurn:
    """The turn with its English reading when the reading says what the turn says (`_faithful`),
    and without it otherwise. A reading that drifts, by a changed relative ("Mój syn" read as "my
    brother"), an invented number or a lost quotation, then neither states the turn's facts (the
    model reads the turn itself) nor supports them."""
    if said.reading is None or _faithful(said, said.reading):
        return said
    return replace(said, reading=None)


@dataclass(frozen=True)
class _Across:
    by_turn: np.ndarray  # each fact's similarity to the turn
    by_clause: np.ndarray  # each fact's similarity to each of the turn's clauses (facts x clauses)
    gate: float


def _across_languages(said: ParsedTurn, facts: list[str], clauses: list[str]) -> _Across | None:
    """For a turn that is not English, each fact's similarity to it and to each of its `clauses`
    by the multilingual encoder, and that encoder's gate: an English-only embedder scores a
    correct English fact 0.07-0.22 against a Spanish or Japanese turn. None for an English turn,
    or when the configured embedder is itself multilingual (its own similarities already hold)."""
    if not facts or said.english:
        return None
    encoder = get_multilingual_embedder()
    if encoder is get_embedder():
        return None
    vectors = encoder.embed([said.own_text, *clauses, *facts])
    fact_vectors = vectors[1 + len(clauses) :]
    return _Across(
        by_turn=fact_vectors @ vectors[0],
        by_clause=fact_vectors @ vectors[1 : 1 + len(clauses)].T,
        gate=thresholds.write_gate(encoder.name),
    )
