"""The store of the write path: kept facts upserted with their evidence, keys and history.

One transaction per turn, one writer per user at a time (an advisory lock), and every statement
names the owner. A restatement refreshes its memory instead of adding a twin; a fact that says
an existing memory in other words is a restatement of it; a newer fact in a single-valued slot
retires the older one.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from django.db import connection, transaction
from pgvector import Vector

from memoryapp import grammar, lexicon, thresholds
from memoryapp.embeddings import get_embedder
from memoryapp.hashing import content_hash
from memoryapp.keys import category_of, keyed, keys_of
from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryKey, MemoryNeed
from memoryapp.orders import obeyed
from memoryapp.slots import slot_of
from memoryapp.write.gate import GatedFact

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from chat.models import Turn


# A fact stored, or the live memory of the same text refreshed. Whether it was new is read from
# the statement's own snapshot of the live memory (taken before the insert), not from the
# row's xmax, which a partitioned table cannot return. The user's write lock (below) keeps
# another writer from inserting between the two.
_UPSERT_MEMORY = f"""
    WITH live AS (
        SELECT id FROM {Memory._meta.db_table}
        WHERE user_id = %(user)s AND content_hash = %(hash)s AND deleted_at IS NULL
    )
    INSERT INTO {Memory._meta.db_table}
        (user_id, text, embedding, embedding_model, content_hash, slot, sensitive, standing,
         source_conversation_id, source_turn_id, times_seen, created_at, last_seen, updated_at)
    VALUES (%(user)s, %(text)s, %(vector)s::vector, %(model)s, %(hash)s, %(slot)s, %(sensitive)s, %(standing)s,
            %(conversation)s, %(turn)s, 1, statement_timestamp(), statement_timestamp(), statement_timestamp())
    ON CONFLICT (user_id, content_hash) WHERE deleted_at IS NULL
    DO UPDATE SET embedding = EXCLUDED.embedding,
                  embedding_model = EXCLUDED.embedding_model,
                  last_seen = EXCLUDED.last_seen,
                  updated_at = EXCLUDED.updated_at
    RETURNING id, NOT EXISTS (SELECT FROM live) AS created
"""

_INSERT_EVIDENCE = f"""
    INSERT INTO {MemoryEvidence._meta.db_table}
        (memory_id, user_id, conversation_id, turn_id, created, gate_similarity, text, created_at)
    VALUES (%s, %s, %s, %s, %s, %s,
            (SELECT text FROM {Memory._meta.db_table} WHERE id = %s AND user_id = %s), statement_timestamp())
    ON CONFLICT (user_id, memory_id, turn_id) DO NOTHING
    RETURNING id
"""

_COUNT_RESTATEMENT = f"""
    UPDATE {Memory._meta.db_table} SET times_seen = times_seen + 1
    WHERE id = %s AND user_id = %s
"""


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
        _lock_writes(cursor, user.pk)
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
                    {
                        "user": user.pk,
                        "text": fact.text,
                        "vector": vector,
                        "model": model_name,
                        "hash": content_hash(fact.text),
                        "slot": slot_of(fact.text),
                        "sensitive": category_of(fact.text),
                        "standing": obeyed(fact.text),
                        "conversation": turn.conversation_id,
                        "turn": turn.pk,
                    },
                )
                memory_id, created = cursor.fetchone()
            write_keys(cursor, user=user, memory_id=memory_id, model_name=model_name, known=fact.keys)
            cursor.execute(
                _INSERT_EVIDENCE,
                [memory_id, user.pk, turn.conversation_id, turn.pk, created, fact.similarity, memory_id, user.pk],
            )
            if cursor.fetchone() is not None and not created:
                cursor.execute(_COUNT_RESTATEMENT, [memory_id, user.pk])
            supersede(user=user, memory_id=memory_id, text=fact.text, actor=user)
    return len(kept)


_WRITE_LOCK = 0x6D656D  # advisory-lock namespace of the memory write path ("mem")


def _lock_writes(cursor, user_id: int) -> None:
    """Take the user's write lock, held until the transaction ends: one writer per user."""
    cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_WRITE_LOCK, user_id])


_MEMORY_TEXT = f"SELECT text, keys_model FROM {Memory._meta.db_table} WHERE id = %s AND user_id = %s"
_KEYS_OF = f"SELECT text FROM {MemoryKey._meta.db_table} WHERE memory_id = %s AND user_id = %s AND embedding_model = %s"
_DROP_KEYS = f"""
    DELETE FROM {MemoryKey._meta.db_table}
    WHERE memory_id = %s AND user_id = %s AND NOT (embedding_model = %s AND text = ANY(%s::text[]))
"""
# A need's wording is kept once more, for the user and model (MemoryNeed), with its first key.
_INSERT_KEY = f"""
    WITH key AS (
        INSERT INTO {MemoryKey._meta.db_table} (memory_id, user_id, text, kind, embedding, embedding_model, created_at)
        VALUES (%s, %s, %s, %s, %s::vector, %s, statement_timestamp())
        ON CONFLICT (user_id, memory_id, embedding_model, text) DO NOTHING
        RETURNING user_id, embedding_model, text, kind, embedding
    )
    INSERT INTO {MemoryNeed._meta.db_table} (user_id, embedding_model, text, embedding)
    SELECT user_id, embedding_model, text, embedding FROM key WHERE kind <> '{MemoryKey.Kind.QUESTION}'
    ON CONFLICT (user_id, embedding_model, text) DO NOTHING
"""
# Wordings no key of the user's has any more (a memory purged, reworded or re-embedded).
_NO_KEY_HAS_IT = f"""NOT EXISTS (
        SELECT 1 FROM {MemoryKey._meta.db_table} k
        WHERE k.user_id = n.user_id AND k.embedding_model = n.embedding_model AND k.text = n.text
          AND k.kind <> '{MemoryKey.Kind.QUESTION}'
    )"""
_USERS_WITH_UNUSED_NEEDS = f"SELECT DISTINCT n.user_id FROM {MemoryNeed._meta.db_table} n WHERE {_NO_KEY_HAS_IT}"
_DROP_UNUSED_NEEDS = f"DELETE FROM {MemoryNeed._meta.db_table} n WHERE n.user_id = %s AND {_NO_KEY_HAS_IT}"


def drop_unused_needs() -> int:
    """Remove the need wordings (MemoryNeed) no key has any more; how many. Each user's are
    removed under their write lock, so a wording a write is giving a key meanwhile stays."""
    with connection.cursor() as cursor:
        cursor.execute(_USERS_WITH_UNUSED_NEEDS)
        users = [user_id for (user_id,) in cursor.fetchall()]
    dropped = 0
    for user_id in users:
        with transaction.atomic(), connection.cursor() as cursor:
            _lock_writes(cursor, user_id)
            cursor.execute(_DROP_UNUSED_NEEDS, [user_id])
            dropped += cursor.rowcount
    return dropped


_KEYED = f"UPDATE {Memory._meta.db_table} SET keys_model = %s, asked = %s WHERE id = %s AND user_id = %s"


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


def write_keys(
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
    asked = any(kind == MemoryKey.Kind.QUESTION for kind in kinds.values())
    cursor.execute(_KEYED, [model_name, asked, memory_id, user.pk])


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


def _words(fact: str) -> set[str]:
    """The words a fact is compared by, each with a final "-s" off ("speaks" is "speak", "cats" "cat")."""
    words = re.findall(r"[\w'’]+", fact.casefold())
    return {
        w[:-1] if len(w) > 3 and w.isalpha() and w.endswith("s") and not w.endswith("ss") else w for w in words
    } - lexicon.words("claimless")


_SUPERSEDE = f"""
    UPDATE {Memory._meta.db_table}
    SET deleted_at = statement_timestamp(), updated_at = statement_timestamp()
    WHERE user_id = %s AND slot = %s AND deleted_at IS NULL AND id <> %s
    RETURNING id, text
"""


def supersede(*, user: User, memory_id: int, text: str, actor: User) -> list[int]:
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
