"""The write gate: which of a turn's candidate facts may be kept, and why the others may not.

A fact is weighed against its own turn (an invented fact scores low against its source), read
for whose fact it is, and checked for what no memory may be.

A fact is kept when
0. its turn neither asks to forget nor carries a secret (`declined`), and is more than a
   pleasantry (memoryapp.smalltalk); it carries no secret
   (a password, key, card, bank or id number) and no contact detail the user did not ask to
   be remembered (see memoryapp.sensitive); and it is an English sentence about the user,
   not about the assistant or someone the user knows (see memoryapp.grammar.fact_problems),
   nor what a turn that only asks, and never speaks of the user, was guessed to presume; and
   if it is a standing instruction, it sends no data anywhere, carries no link or address,
   and reveals no memory and none of the assistant's instructions (memoryapp.orders);
1. its cosine similarity to the turn, or to one clause of it, is at or above the write
   gate: a fact the extractor invented scores low against its own source; and
2. the clause that supports it best is the user speaking about themselves: similarity
   measures topic, not subject, so a colleague's name or a sister's city put on the
   user would pass step 1 (see memoryapp.attribution); and
3. it does not restate the turn's question, nor state a value the turn says is not or no
   longer the user's ("moved from Berlin", "a Model Y, not a Model 3"), nor claim more than
   the turn ("learning flamenco guitar" -> "a professional guitarist"), nor turn a
   comparison round ("he's older than me" -> "The user is older than Gus."), nor name what
   the English turn never writes ("... at the University of Jordan."); and the
   turn's own clause closest to it, in another language, says neither "no longer" nor
   "before that" ("Ya no trabajo en el banco" -> "The user works at a bank.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

import numpy as np
from django.conf import settings

from memoryapp import attribution, grammar, sensitive, smalltalk, thresholds, timewords
from memoryapp.embeddings import Embedder, get_embedder, get_multilingual_embedder
from memoryapp.extraction import declined
from memoryapp.keys import keys_of
from memoryapp.orders import orders_problem
from memoryapp.wording import INSTRUCTION, as_said

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


def gate_facts(
    content: str,
    facts: list[str],
    *,
    content_vector: np.ndarray | None = None,
    reading: str | None = None,
    said_on: date | None = None,
) -> tuple[str, list[GatedFact], list[GatedFact]]:
    """Embed the turn, its clauses and the candidate facts in one batch; split the facts into
    kept and rejected. `content_vector`, the turn's own embedding by the configured model when
    the read path already made it, is used instead of embedding the turn again. `reading`, the
    model's English reading of a turn in another language, adds its clauses to the turn's when
    the multilingual encoder finds it close to the turn (MEMORY_READING_FLOOR): a clause of it
    can then support a fact, and be read for whose fact it is, as an English clause is.
    `said_on`, the day the turn was said, lets a fact dated from one of the turn's relative time
    words be compared in the turn's words ("on 11 August 2023" as "last Friday").
    The steps a fact must pass are in this module's docstring.
    """
    embedder = get_embedder()
    sources = _Sources.of(content, reading)
    batch = _embed_batch(embedder, sources, facts, content, content_vector, said_on)
    gate = thresholds.write_gate(embedder.name)
    kept: list[GatedFact] = []
    rejected: list[GatedFact] = []
    problems = grammar.fact_problems(facts, content)
    across = _across_languages(content, facts, [part.text for part in sources.parts[: sources.own]])
    turn_refused = _turn_refusal(content)
    literal = set(grammar.aged_relations(content)) if across is None else set()
    faithful_reading = reading if sources.read else None
    for i, (text, vector, problem) in enumerate(zip(facts, batch.facts, problems, strict=True)):
        refused = turn_refused or _form_refusal(text, content, faithful_reading, problem)
        if refused:
            rejected.append(GatedFact(text, 0.0, vector, refused))
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
            rejected.append(GatedFact(text, similarity, vector, "too far from the turn"))
            continue
        by_own_clause = across.by_clause[i] if across is not None else None
        reason = _support_refusal(text, sources, similarities, by_own_clause, faithful_reading)
        (rejected if reason else kept).append(GatedFact(text, similarity, vector, reason or "", batch.keyed[i]))
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
    def of(cls, content: str, reading: str | None) -> _Sources:
        parts = attribution.clauses(content)[:_MAX_GATE_CLAUSES] or [attribution.Clause(content, "unknown")]
        own = len(parts)
        read = attribution.clauses(reading)[:_MAX_GATE_CLAUSES] if reading and _faithful(content, reading) else []
        parts = [*parts, *read]
        return cls([content, *(part.text for part in parts)], parts, own, read)


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
    content: str,
    content_vector: np.ndarray | None,
    said_on: date | None,
) -> _Batch:
    """Embed the turn (unless its vector is given), its clauses, the facts, their other wordings
    and their keys in one call."""
    worded = {i: text for i, fact in enumerate(facts) if (text := timewords.as_worded(fact, content, said_on)) != fact}
    said = {i: spoken for i, fact in enumerate(facts) if (spoken := as_said(worded.get(i, fact)))}
    fact_keys = [keys_of(fact) for fact in facts]
    extra = [*facts, *worded.values(), *said.values(), *(key for keys in fact_keys for key in keys)]
    if content_vector is not None:
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


def _form_refusal(text: str, content: str, reading: str | None, problem: str | None) -> str | None:
    """Step 0 for one fact, whatever its similarity: what no memory may be (a secret, contact
    details not asked to be kept, a standing instruction with orders), a fact that is not an
    English sentence about the user (`problem`, from grammar.fact_problems), a request asked once,
    a guess at what a question presumes, a fact about code the turn only showed."""
    return (
        sensitive.refusal(content, text)
        or problem
        or _asked_once(text, content)
        or _presumed(text, content, reading)
        or grammar.about_shown_code(text, content)
        or orders_problem(text, content)
    )


def _support_refusal(
    text: str,
    sources: _Sources,
    similarities: np.ndarray,
    by_own_clause: np.ndarray | None,
    reading: str | None,
) -> str | None:
    """Steps 2 and 3: whose fact it is, by the clause that supports it best, and whether it says
    what the turn says. For a turn in another language that has a faithful reading, only the
    reading's clauses can say whose it is: the turn's own are not read for their subject, so
    "ابني ... عمره عشر سنوات" ("My son is ten") would pass "The user is 10 years old." on its
    Arabic clause. The turn's own clause closest to the fact is read for a "no longer" in the
    turn's language."""
    first = len(sources.parts) - len(sources.read) if sources.read else 0
    support = sources.parts[first + int(np.argmax(similarities[1 + first :]))]
    told = reading or sources.texts[0]  # the reading's words are English, as the fact's are
    own = by_own_clause if by_own_clause is not None else similarities[1 : 1 + sources.own]
    nearest = sources.parts[int(np.argmax(own))]
    return (
        grammar.restated_question(text, support.text)
        or attribution.misattribution(text, support, told)
        or grammar.no_longer_abroad(text, nearest.text)
        or grammar.stale_value(text, told)
        or grammar.says_more(text, told)
        or grammar.unsaid_name(text, told)
        or grammar.reversed_comparison(text, told)
    )


# `remember` never extracts from a declined turn; the gate refuses its facts all the same, so a
# fact proposed for it by any other path (an import, a custom extractor) is not stored either.
_DECLINED = {
    "secret": "the turn carries a secret",
    "forget": "the turn asks not to be remembered",
}


def _turn_refusal(content: str) -> str | None:
    """Why no fact from this turn may be kept, whatever the fact: the turn is declined, or it is
    only a pleasantry. None for an ordinary turn."""
    reason = declined(content)
    if reason:
        return _DECLINED[reason]
    if smalltalk.is_pleasantry(content):
        return "the turn is only a greeting, thanks or acknowledgement"
    return None


def _numbers(text: str) -> set[int]:
    return {int(digits) for digits in re.findall(r"\d+", text)}  # "٢٥" and "２５" are 25 too


def _faithful(content: str, reading: str) -> bool:
    """Whether an English reading says what the turn says, by the multilingual encoder: a
    translation that drifts or garbles ("Vivo en Nápoles y trabajo como enfermera." -> "I am a
    pilot in Dubai.", 0.30),
    or a turn in a language the encoder does not read, scores low against it. A number the turn
    does not write is an invention of the reading ("I am 25 years old and ..."), and so is a
    reading that drops the relative or colleague a clause is about, however close the rest is."""
    if _numbers(reading) - _numbers(content) or attribution.lost_relation(content, reading):
        return False
    vectors = get_multilingual_embedder().embed([content, reading])
    return float(vectors[0] @ vectors[1]) >= settings.MEMORY_READING_FLOOR


def _asked_once(fact: str, content: str) -> str | None:
    """A model words a one-off request as a standing instruction ("Che ore sono a New York?" ->
    "The user wants the assistant to tell the current time in New York."): an instruction fact
    from a turn that only asks is refused."""
    if INSTRUCTION.match(fact) and grammar.only_asks(content):
        return "the fact makes a question asked once a standing instruction"
    return None


def _presumed(fact: str, content: str, reading: str | None) -> str | None:
    """A fact from a turn that only asks and never speaks of the user ("Is `git rebase -i` safe
    on a shared branch?" -> "The user is using `git rebase -i` on a shared branch.", "Remind me
    what a REST API is?" -> "The user is learning about REST APIs.") is what the question was
    guessed to presume. The turn, or its faithful English `reading`, must read as English, and
    each sentence must be a question that opens with a question word ("Vim user here, what's
    ...?" says who asks) or a request of the assistant, for its lack of "I" and "my" to mean
    anything. A turn in another language without a reading is read in its own words: each
    sentence a question or a request ("¿Puedes darme una receta de paella?"), with no "I", "my"
    or "we" of its language (`grammar.only_asks_abroad`), or the fact copies its code. A turn
    that speaks to "you" is left to the rules on the listener and on questions asked of the
    assistant."""
    english = reading or content
    if grammar.looks_english(grammar.analyse(english)):
        if grammar.only_asks_for_something(english):
            return "the turn only asks, and says nothing of the user"
    elif grammar.only_asks_abroad(content):
        return "the turn only asks, and says nothing of the user"
    if (
        grammar.only_asks(content)
        and not grammar.speaks_of_anyone(content)
        and any(code in fact for code in grammar.code_spans(content))
    ):
        return "the turn only asks, and says nothing of the user"
    return None


@dataclass(frozen=True)
class _Across:
    by_turn: np.ndarray  # each fact's similarity to the turn
    by_clause: np.ndarray  # each fact's similarity to each of the turn's clauses (facts x clauses)
    gate: float


def _across_languages(content: str, facts: list[str], clauses: list[str]) -> _Across | None:
    """For a turn that is not English, each fact's similarity to it and to each of its `clauses`
    by the multilingual encoder, and that encoder's gate: an English-only embedder scores a
    correct English fact 0.07-0.22 against a Spanish or Japanese turn. None for an English turn,
    or when the configured embedder is itself multilingual (its own similarities already hold)."""
    if not facts or grammar.looks_english(grammar.analyse(content)):
        return None
    encoder = get_multilingual_embedder()
    if encoder is get_embedder():
        return None
    vectors = encoder.embed([content, *clauses, *facts])
    fact_vectors = vectors[1 + len(clauses) :]
    return _Across(
        by_turn=fact_vectors @ vectors[0],
        by_clause=fact_vectors @ vectors[1 : 1 + len(clauses)].T,
        gate=thresholds.write_gate(encoder.name),
    )
