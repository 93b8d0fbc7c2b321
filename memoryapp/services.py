"""Writes to the durable memory tier. `remember` is the write path."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone
from pgvector import Vector

from chat.models import Turn
from memoryapp import attribution, grammar, sensitive, smalltalk, thresholds, timewords
from memoryapp.embeddings import Embedder, get_embedder, get_multilingual_embedder
from memoryapp.extraction import clean_fact, declined, english_reading, extract_facts
from memoryapp.forgetting import forget_request
from memoryapp.hashing import content_hash
from memoryapp.keys import category_of, keyed, keys_of
from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryKey, MemoryRecall, MemorySettings
from memoryapp.orders import obeyed, orders_problem
from memoryapp.slots import slot_of
from memoryapp.wording import INSTRUCTION, as_said

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# The clauses of a turn are gate sources too, so a true fact stated in one clause of a
# long message is not diluted away by the rest of it (measured: "The user works at Acme."
# scores 0.27 against a three-clause turn and 0.58 against its own clause, while an
# invented fact stays under 0.21 against every clause). Bounded to keep the batch small.
_MAX_GATE_CLAUSES = 15

# The first-person form shares the turn's wording whether or not the fact is true ("I am a
# board-certified cardiologist" scores 0.54 against "I work as a nurse at St Thomas' Hospital"),
# so it must clear the gate by this much more. On the suite, every margin from 0.10 to 0.35
# keeps all 60 invented facts out and gains the same true ones; this is the middle.
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
    embedder = get_embedder()
    parts = attribution.clauses(content)[:_MAX_GATE_CLAUSES]
    if not parts:
        parts = [attribution.Clause(content, "unknown")]
    own = len(parts)
    read = attribution.clauses(reading)[:_MAX_GATE_CLAUSES] if reading and _faithful(content, reading) else []
    parts += read
    sources = [content, *(part.text for part in parts)]
    worded = {i: text for i, fact in enumerate(facts) if (text := timewords.as_worded(fact, content, said_on)) != fact}
    said = {i: spoken for i, fact in enumerate(facts) if (spoken := as_said(worded.get(i, fact)))}
    fact_keys = [keys_of(fact) for fact in facts]
    key_texts = [key for keys in fact_keys for key in keys]
    extra = [*facts, *worded.values(), *said.values(), *key_texts]
    if content_vector is not None:
        vectors = embedder.embed([*sources[1:], *extra])
        vectors = np.vstack([np.asarray(content_vector, dtype=vectors.dtype)[None, :], vectors])
    else:
        vectors = embedder.embed([*sources, *extra])
    source_vectors = vectors[: len(sources)]
    after = len(sources) + len(facts)
    fact_vectors = vectors[len(sources) : after]
    worded_vectors = dict(zip(worded, vectors[after : after + len(worded)], strict=True))
    after_said = after + len(worded) + len(said)
    said_vectors = dict(zip(said, vectors[after + len(worded) : after_said], strict=True))
    key_vectors = iter(vectors[after_said:])
    keyed = [{key: next(key_vectors) for key in keys} for keys in fact_keys]
    gate = thresholds.write_gate(embedder.name)
    kept: list[GatedFact] = []
    rejected: list[GatedFact] = []
    problems = grammar.fact_problems(facts, content)
    across = _across_languages(content, facts, [part.text for part in parts[:own]])
    turn_refused = _turn_refusal(content)
    literal = set(grammar.aged_relations(content)) if across is None else set()
    for i, (text, vector, problem) in enumerate(zip(facts, fact_vectors, problems, strict=True)):
        refused = (
            turn_refused
            or sensitive.refusal(content, text)
            or problem
            or _asked_once(text, content)
            or _presumed(text, content, reading if read else None)
            or grammar.about_shown_code(text, content)
            or orders_problem(text, content)
        )
        if refused:
            rejected.append(GatedFact(text, 0.0, vector, refused))
            continue
        similarities = source_vectors @ vector
        if i in worded_vectors:
            similarities = np.maximum(similarities, source_vectors @ worded_vectors[i])
        if i in said_vectors:
            margin = 0.0 if INSTRUCTION.match(text) else FIRST_PERSON_MARGIN
            similarities = np.maximum(similarities, source_vectors @ said_vectors[i] - margin)
        similarity = float(np.max(similarities))
        if across is not None:
            # English facts from a turn in another language: the multilingual encoder decides,
            # or the configured encoder against the English reading's clauses
            read_best = float(np.max(similarities[len(sources) - len(read) :])) if read else -1.0
            similarity = max(float(across.by_turn[i]), read_best)
            passed = float(across.by_turn[i]) >= across.gate or read_best >= gate
        else:
            passed = similarity >= gate or text in literal
        if not passed:
            rejected.append(GatedFact(text, similarity, vector, "too far from the turn"))
            continue
        # Whose fact it is: the clause that supports it best. For a turn in another language that
        # has a faithful reading, only the reading's clauses can say: the turn's own are not
        # read for their subject, so "ابني ... عمره عشر سنوات" ("My son is ten") would pass
        # "The user is 10 years old." on its Arabic clause.
        first = len(parts) - len(read) if read else 0
        best = first + int(np.argmax(similarities[1 + first :]))
        support = parts[best]
        # That clause, the reading's then, is weighed against the reading: its names and values are English
        told = reading if read and reading else content
        # and the turn's own clause that is closest to it, for a "no longer" in the turn's language
        own_similarities = across.by_clause[i] if across is not None else similarities[1 : 1 + own]
        nearest = parts[int(np.argmax(own_similarities))]
        reason = (
            grammar.restated_question(text, support.text)
            or attribution.misattribution(text, support, told)
            or grammar.no_longer_abroad(text, nearest.text)
            or grammar.stale_value(text, told)
            or grammar.says_more(text, told)
            or grammar.unsaid_name(text, told)
            or grammar.reversed_comparison(text, told)
        )
        (rejected if reason else kept).append(GatedFact(text, similarity, vector, reason or "", keyed[i]))
    return embedder.name, kept, rejected


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


_UPSERT_MEMORY = f"""
    INSERT INTO {Memory._meta.db_table}
        (user_id, text, embedding, embedding_model, content_hash, slot, sensitive, standing,
         source_conversation_id, source_turn_id, times_seen, created_at, last_seen, updated_at)
    VALUES (%s, %s, %s::vector, %s, %s, %s, %s, %s, %s, %s, 1, statement_timestamp(), statement_timestamp(),
            statement_timestamp())
    ON CONFLICT (user_id, content_hash) WHERE deleted_at IS NULL
    DO UPDATE SET embedding = EXCLUDED.embedding,
                  embedding_model = EXCLUDED.embedding_model,
                  last_seen = EXCLUDED.last_seen,
                  updated_at = EXCLUDED.updated_at
    RETURNING id, (xmax = 0) AS created
"""

_INSERT_EVIDENCE = f"""
    INSERT INTO {MemoryEvidence._meta.db_table}
        (memory_id, user_id, conversation_id, turn_id, created, gate_similarity, text, created_at)
    VALUES (%s, %s, %s, %s, %s, %s,
            (SELECT text FROM {Memory._meta.db_table} WHERE id = %s AND user_id = %s), statement_timestamp())
    ON CONFLICT (memory_id, turn_id) DO NOTHING
    RETURNING id
"""

_COUNT_RESTATEMENT = f"""
    UPDATE {Memory._meta.db_table} SET times_seen = times_seen + 1
    WHERE id = %s AND user_id = %s
"""


def remember(user: User, turn: Turn, *, turn_vector: np.ndarray | None = None) -> int:
    """Extract, gate, embed and upsert the durable facts in one user turn. `turn_vector` is the
    turn's embedding by the configured model, when the read path of the chat turn made it.

    Returns how many facts were written or refreshed; small talk writes nothing.
    - Facts come only from the user's own turns, at most two per turn; a turn that carries a
      secret (memoryapp.sensitive) or asks to forget writes nothing (see `declined`).
    - The gate runs before anything is stored, so an invented fact never reaches the table.
    - Turn, facts and gate sources are embedded in one batched call.
    - The upsert keys on (user, content_hash) among live rows: a restatement refreshes
      `last_seen` and the embedding instead of adding a twin, and is recorded as evidence.
    - A fact that says an existing memory in other words (similarity at or above the model's
      paraphrase threshold, same numbers, same polarity) is a restatement of it, not a twin.
    - A fact that fills a single-valued slot (home, name, timezone, ...) retires the user's
      older fact in that slot, recorded as superseded: the latest statement wins.
    - Everything for one turn commits together or not at all; re-running it for the same
      turn is safe (evidence is unique per memory and turn, so nothing is counted twice).
    Raises ModelUnavailable when the extraction or embedding endpoint fails.
    """
    if turn.user_id != user.pk:
        raise PermissionError("remember() was given a turn that belongs to another user")
    if turn.role != Turn.Role.USER or not turn.content.strip():
        return 0
    reason = declined(turn.content)
    if reason:
        # Not even sent to an extractor: a turn that carries a secret, or that asks to forget,
        # writes and refreshes nothing.
        logger.info("turn %s declined (%s); nothing from it is remembered", turn.pk, reason)
        return 0

    reading = english_reading(turn.content)
    facts = extract_facts(turn.content, said=turn.created_at.date(), reading=reading)
    if not facts:
        return 0
    model_name, kept, rejected = gate_facts(
        turn.content, facts, content_vector=turn_vector, reading=reading, said_on=turn.created_at.date()
    )
    for fact in rejected:
        logger.debug(
            "write gate rejected a fact from turn %s: %s (similarity %.3f)",
            turn.pk,
            fact.rejected_because,
            fact.similarity,
        )
    return store_facts(user, turn, kept, model_name=model_name)


def store_facts(user: User, turn: Turn, kept: list[GatedFact], *, model_name: str) -> int:
    """Upsert facts that passed the gate, with `turn` as their evidence, in one transaction:
    the second half of `remember` (see there). Returns how many were written or refreshed."""
    if turn.user_id != user.pk:
        raise PermissionError("store_facts() was given a turn that belongs to another user")
    if not kept:
        return 0
    kept = _with_keys(kept)

    with transaction.atomic(), connection.cursor() as cursor:
        # One writer per user at a time, so the paraphrase check below cannot race an insert.
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_WRITE_LOCK, user.pk])
        for fact in kept:
            vector = Vector(fact.vector).to_text()
            twin = _paraphrased_memory(cursor, user=user, fact=fact.text, vector=vector, model_name=model_name)
            if twin is not None:
                (memory_id, old_text, says_more), created = twin, False
                if not (
                    says_more
                    and _extend(
                        cursor,
                        user=user,
                        memory_id=memory_id,
                        old_text=old_text,
                        fact=fact.text,
                        vector=vector,
                        model_name=model_name,
                    )
                ):
                    cursor.execute(_REFRESH, [model_name, memory_id, user.pk])
            else:
                cursor.execute(
                    _UPSERT_MEMORY,
                    [
                        user.pk,
                        fact.text,
                        vector,
                        model_name,
                        content_hash(fact.text),
                        slot_of(fact.text),
                        category_of(fact.text),
                        obeyed(fact.text),
                        turn.conversation_id,
                        turn.pk,
                    ],
                )
                memory_id, created = cursor.fetchone()
            _write_keys(cursor, user=user, memory_id=memory_id, model_name=model_name, known=fact.keys)
            cursor.execute(
                _INSERT_EVIDENCE,
                [memory_id, user.pk, turn.conversation_id, turn.pk, created, fact.similarity, memory_id, user.pk],
            )
            if cursor.fetchone() is not None and not created:
                cursor.execute(_COUNT_RESTATEMENT, [memory_id, user.pk])
            _supersede(user=user, memory_id=memory_id, text=fact.text, actor=user)
    return len(kept)


_WRITE_LOCK = 0x6D656D  # advisory-lock namespace of the memory write path ("mem")

_MEMORY_TEXT = f"SELECT text, keys_model FROM {Memory._meta.db_table} WHERE id = %s AND user_id = %s"
_KEYS_OF = f"SELECT text FROM {MemoryKey._meta.db_table} WHERE memory_id = %s AND user_id = %s AND embedding_model = %s"
_DROP_KEYS = f"""
    DELETE FROM {MemoryKey._meta.db_table}
    WHERE memory_id = %s AND user_id = %s AND NOT (embedding_model = %s AND text = ANY(%s::text[]))
"""
_INSERT_KEY = f"""
    INSERT INTO {MemoryKey._meta.db_table} (memory_id, user_id, text, kind, embedding, embedding_model, created_at)
    VALUES (%s, %s, %s, %s, %s::vector, %s, statement_timestamp())
    ON CONFLICT (memory_id, embedding_model, text) DO NOTHING
"""
_KEYED = f"UPDATE {Memory._meta.db_table} SET keys_model = %s WHERE id = %s AND user_id = %s"


def _with_keys(facts: list[GatedFact]) -> list[GatedFact]:
    """The facts with every key of theirs embedded, in one call for those the gate's batch did
    not embed (a fact stored by another path than `remember`): no model call is made while the
    write transaction holds its lock."""
    missing = [key for fact in facts for key in keys_of(fact.text) if key not in fact.keys]
    if not missing:
        return facts
    embedded = dict(zip(missing, get_embedder().embed(missing), strict=True))
    return [
        replace(fact, keys={key: fact.keys[key] if key in fact.keys else embedded[key] for key in keys_of(fact.text)})
        for fact in facts
    ]


def _write_keys(
    cursor, *, user: User, memory_id: int, model_name: str, known: dict[str, np.ndarray] | None = None
) -> None:
    """Give a memory the keys of its current text under `model_name` (memoryapp.keys), and only
    those: keys of an older wording or another model go. `known` holds keys already embedded
    (the gate's batch); any other is embedded here, all in one call. Runs in the caller's
    transaction, so a memory and its keys change together."""
    cursor.execute(_MEMORY_TEXT, [memory_id, user.pk])
    text, keys_model = cursor.fetchone()
    kinds = dict(keyed(text))
    wanted = list(kinds)
    cursor.execute(_KEYS_OF, [memory_id, user.pk, model_name])
    have = {row[0] for row in cursor.fetchall()}
    if keys_model == model_name and have == set(wanted):
        return
    cursor.execute(_DROP_KEYS, [memory_id, user.pk, model_name, wanted])
    known = dict(known or {})
    missing = [key for key in wanted if key not in have and key not in known]
    if missing:
        known.update(zip(missing, get_embedder().embed(missing), strict=True))
    cursor.executemany(
        _INSERT_KEY,
        [
            (memory_id, user.pk, key, kinds[key], Vector(known[key]).to_text(), model_name)
            for key in wanted
            if key not in have
        ],
    )
    cursor.execute(_KEYED, [model_name, memory_id, user.pk])


_NEAREST_OTHER = f"""
    SELECT id, text, 1 - (embedding <=> %s::vector)
    FROM {Memory._meta.db_table}
    WHERE user_id = %s AND deleted_at IS NULL AND embedding_model = %s AND content_hash <> %s
    ORDER BY embedding <=> %s::vector
    LIMIT 1
"""

_REFRESH = f"""
    UPDATE {Memory._meta.db_table}
    SET last_seen = statement_timestamp(), updated_at = statement_timestamp(), embedding_model = %s
    WHERE id = %s AND user_id = %s
"""

_NUMBER = re.compile(rf"\d+|\b(?:{grammar.NUMBER_WORDS})\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|dislikes?|hates?|doesn't|does not|can't|cannot|won't)\b", re.I)


def _same_claim(a: str, b: str) -> bool:
    """Guards on top of similarity: numbers and negations decide a fact, and embeddings blur them."""
    return (
        sorted(n.lower() for n in _NUMBER.findall(a)) == sorted(n.lower() for n in _NUMBER.findall(b))
        and bool(_NEGATION.search(a)) == bool(_NEGATION.search(b))
        and slot_of(a) == slot_of(b)
    )


def _paraphrased_memory(cursor, *, user: User, fact: str, vector: str, model_name: str) -> tuple[int, str, bool] | None:
    """The user's live memory that says `fact` in other words, if any, as (id, text, whether
    `fact` says all it says and more).

    The content hash catches a restatement word for word; a model extractor also rephrases
    ("lives in Milan" / "resides in Milan"), which would otherwise pile up as near-twins.
    """
    cursor.execute(_NEAREST_OTHER, [vector, user.pk, model_name, content_hash(fact), vector])
    row = cursor.fetchone()
    if row is None:
        return None
    memory_id, text, similarity = row
    if _same_claim(fact, text):
        new, old = _words(fact), _words(text)
        if similarity >= thresholds.paraphrase(model_name) or new <= old or old <= new:
            # In other words, in fewer or in more: "The user is a product manager." and "The user is
            # a product manager at a logistics startup." state one fact.
            return memory_id, text, old < new
    if slot_of(fact) != slot_of(text):
        return None
    (new_claim, new_held), (old_claim, old_held) = grammar.claim(fact), grammar.claim(text)
    if new_claim == old_claim:
        # One claim, with and without how long it has held: "The user has been vegan for three
        # years." is said again by "The user is vegan.", and with more the other way round.
        return memory_id, text, bool(new_held) and not old_held
    return None


_EXTEND = f"""
    UPDATE {Memory._meta.db_table} m
    SET text = %s, content_hash = %s, slot = %s, sensitive = %s, standing = %s, embedding = %s::vector,
        embedding_model = %s,
        last_seen = statement_timestamp(), updated_at = statement_timestamp()
    WHERE m.id = %s AND m.user_id = %s
      AND NOT EXISTS (SELECT 1 FROM {Memory._meta.db_table} o
                      WHERE o.user_id = m.user_id AND o.content_hash = %s AND o.deleted_at IS NULL)
      AND NOT EXISTS (SELECT 1 FROM {MemoryEvent._meta.db_table} e
                      WHERE e.memory_id = m.id AND e.user_id = m.user_id AND e.action = %s)
"""


def _extend(cursor, *, user: User, memory_id: int, old_text: str, fact: str, vector: str, model_name: str) -> bool:
    """Give a memory the wording of a restatement that says all it says and more ("The user
    speaks Mandarin." restated as "The user speaks Mandarin and Cantonese."), recorded as an
    event with both texts. A memory the user has corrected keeps the user's words, and a
    wording another live memory already has is not made twice; both return False."""
    new_hash = content_hash(fact)
    cursor.execute(
        _EXTEND,
        [
            fact,
            new_hash,
            slot_of(fact),
            category_of(fact),
            obeyed(fact),
            vector,
            model_name,
            memory_id,
            user.pk,
            new_hash,
            MemoryEvent.Action.CORRECTED,
        ],
    )
    if cursor.rowcount != 1:
        return False
    MemoryEvent.objects.create(
        memory_id=memory_id, user=user, actor=user, action=MemoryEvent.Action.EXTENDED, old_text=old_text, new_text=fact
    )
    return True


# Words that do not change what a fact claims: "The user can speak Mandarin." is said again,
# with more, by "The user speaks Mandarin and English.".
_CLAIMLESS = {"the", "a", "an", "can", "and"}


def _words(fact: str) -> set[str]:
    """The words a fact is compared by, each with a final "-s" off ("speaks" is "speak", "cats" "cat")."""
    words = re.findall(r"[\w'’]+", fact.casefold())
    return {
        w[:-1] if len(w) > 3 and w.isalpha() and w.endswith("s") and not w.endswith("ss") else w for w in words
    } - _CLAIMLESS


_SUPERSEDE = f"""
    UPDATE {Memory._meta.db_table}
    SET deleted_at = statement_timestamp(), updated_at = statement_timestamp()
    WHERE user_id = %s AND slot = %s AND deleted_at IS NULL AND id <> %s
    RETURNING id, text
"""


def _supersede(*, user: User, memory_id: int, text: str, actor: User) -> list[int]:
    """Retire the user's other live facts in the slot this fact fills (see memoryapp.slots),
    recording each as superseded by it. Runs inside the caller's transaction."""
    slot = slot_of(text)
    if not slot:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_SUPERSEDE, [user.pk, slot, memory_id])
        retired = cursor.fetchall()
    MemoryEvent.objects.bulk_create(
        MemoryEvent(
            memory_id=old_id,
            user=user,
            actor=actor,
            action=MemoryEvent.Action.SUPERSEDED,
            old_text=old_text,
            new_text=text,
            replaced_by_id=memory_id,
        )
        for old_id, old_text in retired
    )
    return [old_id for old_id, _ in retired]


class MemoryConflict(Exception):
    """The change would make a second live memory with the same text."""


class UndoExpired(Http404):
    """The undo period for a deleted memory has passed (a 404 to anything that does not ask)."""


def _live_or_404(user: User, memory_id: int, *, deleted: bool = False) -> Memory:
    return get_object_or_404(
        Memory.objects.select_for_update().defer("embedding"),
        pk=memory_id,
        user=user,
        deleted_at__isnull=not deleted,
    )


@transaction.atomic
def memory_soft_delete(*, user: User, memory_id: int, actor: User | None = None, turn: Turn | None = None) -> Memory:
    """Hide a memory from recall from the very next request on; the row stays for incident review.
    `turn`: the chat turn that asked for it ("Forget that I'm a nurse")."""
    memory = _live_or_404(user, memory_id)
    memory.deleted_at = memory.updated_at = timezone.now()
    Memory.objects.filter(pk=memory.pk, user=user).update(deleted_at=memory.deleted_at, updated_at=memory.updated_at)
    MemoryEvent.objects.create(
        memory=memory,
        user=user,
        actor=actor or user,
        action=MemoryEvent.Action.DELETED,
        turn=turn,
        old_text=memory.text,
    )
    return memory


FORGET_MAX = 3
FORGET_GAP = 0.05


@transaction.atomic
def memory_forget_asked(*, user: User, turn: Turn) -> list[Memory]:
    """Forget what a chat turn asks to forget ("Forget that I'm a nurse", "Delete what I told
    you about my daughter", "Olvida que soy enfermera": memoryapp.forgetting): the live
    memories nearest to what it names, found as the read path
    finds them (their text and keys, over the recall floor), the nearest and any within
    FORGET_GAP of it, at most FORGET_MAX. Each is deleted as on the memory page (with the same
    Undo), the turn recorded on its event. None when the turn names nothing ("Forget it.") or
    nothing clears the floor; the page then says so."""
    from memoryapp.selectors import recall

    named = grammar.forget_object(grammar.analyse(turn.content))
    if named is None:
        # In another language: what the sentence after "olvida", "vergiss", "忘记" names.
        other = forget_request(turn.content)
        named = other.named if other is not None else None
    if named is None:
        return []
    found = recall(user, named)
    if not found:
        return []
    nearest = found[0].similarity
    chosen = [item.memory for item in found if item.similarity >= nearest - FORGET_GAP][:FORGET_MAX]
    return [memory_soft_delete(user=user, memory_id=memory.pk, turn=turn) for memory in chosen]


@transaction.atomic
def memory_restore(*, user: User, memory_id: int, actor: User | None = None, window: bool = True) -> Memory:
    """Undo a delete. Users may restore for MEMORY_RESTORE_DAYS ("Recently deleted"); staff
    (window=False) at any time.

    Raises MemoryConflict when the same fact has been stated again since, as a new live row.
    """
    memory = _live_or_404(user, memory_id, deleted=True)
    deleted_at = memory.deleted_at or timezone.now()  # set: the row was looked up as deleted
    if window and timezone.now() - deleted_at > timedelta(days=settings.MEMORY_RESTORE_DAYS):
        raise UndoExpired(
            f"This memory was deleted more than {settings.MEMORY_RESTORE_DAYS} days ago and can no longer be restored."
        )
    if Memory.objects.filter(user=user, content_hash=memory.content_hash, deleted_at__isnull=True).exists():
        raise MemoryConflict("This fact has been remembered again since it was deleted.")
    memory.deleted_at, memory.updated_at = None, timezone.now()
    Memory.objects.filter(pk=memory.pk, user=user).update(deleted_at=None, updated_at=memory.updated_at)
    _supersede(user=user, memory_id=memory.pk, text=memory.text, actor=actor or user)
    MemoryEvent.objects.create(memory=memory, user=user, actor=actor or user, action=MemoryEvent.Action.RESTORED)
    return memory


def _embedded(text: str) -> tuple[Embedder, np.ndarray, dict[str, np.ndarray]]:
    """A memory text the user wrote, embedded with its keys in one batch, before any transaction
    (no lock is held across the model call): the embedder, the text's vector, each key's."""
    embedder = get_embedder()
    keys = keys_of(text)
    vector, *key_vectors = embedder.embed([text, *keys])
    return embedder, vector, dict(zip(keys, key_vectors, strict=True))


def memory_correct(*, user: User, memory_id: int, text: str, actor: User | None = None) -> Memory:
    """Replace a memory's text with the user's correction and re-embed it.

    Provenance (source conversation and turn, evidence, recalls) stays: the memory is the same
    belief, corrected. The edit is recorded with the text before and after.
    Raises ValueError for unusable text and MemoryConflict when another live memory already says it.
    """
    cleaned = clean_fact(text)
    if cleaned is None:
        raise ValueError(f"A memory must be 1 to {settings.MEMORY_MAX_FACT_CHARS} characters of text.")
    embedder, vector, keyed_vectors = _embedded(cleaned)
    new_hash = content_hash(cleaned)
    with transaction.atomic():
        memory = _live_or_404(user, memory_id)
        if (
            Memory.objects.filter(user=user, content_hash=new_hash, deleted_at__isnull=True)
            .exclude(pk=memory.pk)
            .exists()
        ):
            raise MemoryConflict("Another memory already says this.")
        old_text = memory.text
        Memory.objects.filter(pk=memory.pk, user=user).update(
            text=cleaned,
            content_hash=new_hash,
            slot=slot_of(cleaned),
            sensitive=category_of(cleaned),
            standing=obeyed(cleaned),
            embedding=vector.tolist(),
            embedding_model=embedder.name,
            updated_at=timezone.now(),
        )
        with connection.cursor() as cursor:
            _write_keys(cursor, user=user, memory_id=memory.pk, model_name=embedder.name, known=keyed_vectors)
        MemoryEvent.objects.create(
            memory=memory,
            user=user,
            actor=actor or user,
            action=MemoryEvent.Action.CORRECTED,
            old_text=old_text,
            new_text=cleaned,
        )
        _supersede(user=user, memory_id=memory.pk, text=cleaned, actor=actor or user)
    memory.text, memory.content_hash, memory.embedding_model = cleaned, new_hash, embedder.name
    return memory


def memory_pause_set(*, user: User, paused: bool) -> bool:
    """Pause memory or turn it back on. While paused, no memory is read into a reply and nothing
    is written from what the user says; turns said meanwhile are marked so and never written
    later (chat.services.chat_user_turn). The user's own actions on the store (add, correct,
    delete, forget in chat) still work. Returns the new state."""
    MemorySettings.objects.update_or_create(user=user, defaults={"paused": paused})
    return paused


class MemoryRefused(ValueError):
    """A memory the user wrote that no memory may be: a secret, or a standing instruction with orders."""


def memory_add(*, user: User, text: str, actor: User | None = None) -> tuple[Memory, bool]:
    """A memory the user writes by hand on the memory page or through the API, stored as written:
    no extraction and no gate, only what no memory may be is refused (a password, key, card,
    bank or id number: memoryapp.sensitive; a standing instruction that carries orders:
    memoryapp.orders). It is embedded with its keys and deduplicated like any memory: the same
    fact again refreshes the live one (`last_seen`, `times_seen`); a newer fact in its slot
    retires the older. Its provenance is "added by hand", with the time (an ADDED event).
    Returns the memory and whether it is new. Raises ValueError for unusable text and
    MemoryRefused for what may not be kept."""
    cleaned = clean_fact(text)
    if cleaned is None:
        raise ValueError(f"A memory must be 1 to {settings.MEMORY_MAX_FACT_CHARS} characters of text.")
    if sensitive.secret_kind(cleaned):
        raise MemoryRefused("This looks like a password, key, card, bank or ID number: those are never stored.")
    problem = orders_problem(cleaned)
    if problem:
        raise MemoryRefused(problem[0].upper() + problem[1:] + ".")
    embedder, vector, keyed_vectors = _embedded(cleaned)
    new_hash = content_hash(cleaned)
    now = timezone.now()
    with transaction.atomic():
        live = Memory.objects.select_for_update().filter(user=user, content_hash=new_hash, deleted_at__isnull=True)
        memory = live.first()
        created = memory is None
        if memory is not None:
            live.update(last_seen=now, updated_at=now, times_seen=F("times_seen") + 1)
        else:
            memory = Memory.objects.create(
                user=user,
                text=cleaned,
                embedding=vector.tolist(),
                embedding_model=embedder.name,
                content_hash=new_hash,
                slot=slot_of(cleaned),
                sensitive=category_of(cleaned),
                standing=obeyed(cleaned),
                added_by_hand=True,
                last_seen=now,
            )
            with connection.cursor() as cursor:
                _write_keys(cursor, user=user, memory_id=memory.pk, model_name=embedder.name, known=keyed_vectors)
            MemoryEvent.objects.create(
                memory=memory, user=user, actor=actor or user, action=MemoryEvent.Action.ADDED, new_text=cleaned
            )
            _supersede(user=user, memory_id=memory.pk, text=cleaned, actor=actor or user)
    return memory, created


def _soft_delete_live(*, user: User, live: QuerySet[Memory], actor: User) -> int:
    """Soft-delete the user's live memories in `live` in three statements however many there
    are (lock, mark, one history row each); runs inside the caller's transaction."""
    now = timezone.now()
    ids = list(live.filter(user=user, deleted_at__isnull=True).select_for_update().values_list("id", flat=True))
    Memory.objects.filter(user=user, pk__in=ids).update(deleted_at=now, updated_at=now)
    MemoryEvent.objects.bulk_create(
        MemoryEvent(memory_id=pk, user=user, actor=actor, action=MemoryEvent.Action.DELETED) for pk in ids
    )
    return len(ids)


@transaction.atomic
def memory_forget_all(*, user: User) -> int:
    """Soft-delete every live memory of the user; returns how many."""
    return _soft_delete_live(user=user, live=Memory.objects.filter(user=user), actor=user)


@transaction.atomic
def memory_detach_conversation(*, user: User, conversation_id: int, forget_learned: bool = False) -> int:
    """Let go of a conversation that is about to be deleted; returns how many memories were forgotten.

    Memories first learned in it stay (they are the user's to keep or delete) but no longer
    point at its turns, and neither do their restatements; the record of which memories its
    replies were given goes with the replies. With `forget_learned`, the memories first
    learned in it are soft-deleted first, in bulk. Every statement names the owner.
    """
    learned = Memory.objects.filter(user=user, source_conversation_id=conversation_id)
    forgotten = _soft_delete_live(user=user, live=learned, actor=user) if forget_learned else 0
    MemoryRecall.objects.filter(user=user, conversation_id=conversation_id).delete()
    MemoryEvidence.objects.filter(user=user, conversation_id=conversation_id).update(conversation=None, turn=None)
    learned.update(source_conversation=None, source_turn=None)
    return forgotten


def recall_log(*, user: User, probe_turn: Turn, reply_turn: Turn, recalled: list) -> None:
    """Record which memories went into a reply, with similarity and rank, for incident review."""
    if reply_turn.user_id != user.pk or probe_turn.user_id != user.pk:
        raise PermissionError("recall_log() was given a turn that belongs to another user")
    MemoryRecall.objects.bulk_create(
        [
            MemoryRecall(
                memory_id=item.memory.pk,
                user=user,
                conversation_id=reply_turn.conversation_id,
                probe_turn=probe_turn,
                reply_turn=reply_turn,
                similarity=item.similarity,
                rank=item.rank,
                standing=item.standing,
                matched_key=item.matched_key,
                profile=item.profile,
            )
            for item in recalled
            if item.memory.user_id == user.pk
        ]
    )


def memory_admin_log_erase(*, user: User) -> int:
    """Delete the admin log entries about the user's memories: each keeps the memory's text."""
    ids = [str(pk) for pk in Memory.objects.filter(user=user).values_list("id", flat=True)]
    memories = ContentType.objects.get_for_model(Memory)
    deleted, _ = LogEntry.objects.filter(content_type=memories, object_id__in=ids).delete()
    return deleted


def memory_purge_deleted(*, older_than: timedelta) -> dict[str, int]:
    """Hard-delete memories soft-deleted more than `older_than` ago, with their evidence,
    recall and history rows (retention). Live memories are never touched."""
    cutoff = timezone.now() - older_than
    with transaction.atomic():
        _, by_model = Memory.objects.filter(deleted_at__isnull=False, deleted_at__lt=cutoff).delete()
    return {label.split(".")[-1]: count for label, count in by_model.items()}


_REEMBED = f"""
    UPDATE {Memory._meta.db_table} SET embedding = %s::vector, embedding_model = %s
    WHERE id = %s AND user_id = %s AND text = %s
"""


def _pending(model: str) -> QuerySet[Memory]:
    """Memories, live or deleted (a deleted one may be restored), whose vector or keys are not
    yet of `model`."""
    return Memory.objects.filter(~Q(embedding_model=model) | ~Q(keys_model=model))


def memory_reembed_batch(*, after_id: int = 0, user_id: int | None = None, batch_size: int = 256) -> tuple[int, int]:
    """Move one batch of memories to the configured embedding model, in id order after
    `after_id`: embed their texts and keys (memoryapp.keys) in one call, then update the rows
    and their keys in one transaction. Returns (rows updated, last id seen; 0 when none are left).

    Recall compares only vectors of one model, so a memory is found under the new model as
    soon as its batch commits, and a run stopped anywhere resumes where it stopped. A row whose
    text changed meanwhile (a correction re-embeds it itself) is left as it is. Memories stored
    before keys existed get theirs the same way.
    """
    embedder = get_embedder()
    pending = _pending(embedder.name).filter(id__gt=after_id)
    if user_id is not None:
        pending = pending.filter(user_id=user_id)
    rows = list(pending.order_by("id").values_list("id", "user_id", "text", "embedding_model")[:batch_size])
    if not rows:
        return 0, 0
    keys = [keys_of(text) for _, _, text, _ in rows]
    vectors = iter(embedder.embed([*(text for _, _, text, _ in rows), *(key for ks in keys for key in ks)]))
    text_vectors = [next(vectors) for _ in rows]
    updated = 0
    owners = {owner: get_user_model()(pk=owner) for _, owner, _, _ in rows}
    with transaction.atomic(), connection.cursor() as cursor:
        for (pk, owner, text, model), vector, memory_keys in zip(rows, text_vectors, keys, strict=True):
            known = {key: next(vectors) for key in memory_keys}
            if model != embedder.name:
                cursor.execute(_REEMBED, [Vector(vector).to_text(), embedder.name, pk, owner, text])
                if cursor.rowcount != 1:
                    continue
            _write_keys(cursor, user=owners[owner], memory_id=pk, model_name=embedder.name, known=known)
            updated += 1
    return updated, rows[-1][0]


def memory_reembed_pending(*, user_id: int | None = None) -> int:
    """How many memories are embedded by another model than the configured one."""
    pending = _pending(get_embedder().name)
    return (pending.filter(user_id=user_id) if user_id is not None else pending).count()
