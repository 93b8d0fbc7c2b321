"""The read path: a chat turn's memories, found inside the database. The probe is the turn
alone; the user and `deleted_at IS NULL` are inside every statement; the database does the
top-k; the floors come after the limit (a top-k with no floor always returns k rows)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from pgvector import Vector

from chat.models import Conversation, Turn
from memoryapp import thresholds, user_index
from memoryapp.embeddings import get_embedder
from memoryapp.keys import GROUPS, MAX_KEYS, OTHER_GROUP, group_of
from memoryapp.models import Memory, MemoryKey, MemoryNeed
from memoryapp.read.need import NOT_NEEDED, asks_for_profile, turn_need
from memoryapp.standing import is_standing
from memoryapp.thresholds import recall_floor, sensitive_floor

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class Recalled:
    memory: Memory
    similarity: float  # the best of the memory's text and its keys
    rank: int
    standing: bool = False  # a standing instruction, given to every reply whatever its similarity
    matched_key: str = ""  # the key that matched the turn better than the text did, if one did
    text_similarity: float = 0.0  # by its own words: its text, or the fact asked as a question
    key_similarity: float = -1.0  # by the nearest need of its kind, the key offset taken off; -1 without
    profile: bool = False  # given because the turn asked what is remembered about the user
    plain_similarity: float = 0.0  # by its text alone


_NEAREST_COLUMNS = ", ".join(f"m.{f.column}" for f in Memory._meta.concrete_fields if f.name != "embedding")
_MEMORY = Memory._meta.db_table
_KEY = MemoryKey._meta.db_table
_NEED = MemoryNeed._meta.db_table
# Written out rather than built by the ORM: recall runs on every turn, and compiling the
# equivalent queryset cost more than the database's own work (measured: docs/quality/2026-12-06-constants.md).
# The owner is named in every statement on memories and keys, and every joined table is tied to it.
#
# Two forms. For most users every live memory is scored (`_EVERY`): an exact sort of the user's
# rows found through the B-tree on user, and no approximate index can lose one of them. A user
# with approximate indexes of their own (memoryapp.user_index, partial on their id) has only the
# memories `chosen` scored, by three nearest-first scans of their live rows, CANDIDATES_PER_RESULT
# times k of each, which the planner runs on those indexes by their predicate:
# - by their own words: the fact asked, and the text of a memory that has none (`asked`: a
#   memory's text and its fact asked say the same thing, so one of them is searched), each
#   compared at half precision (the indexes' form: IVFFlat lists of half-precision vectors,
#   searched MEMORY_USER_INDEX_PROBES lists deep);
# - by need: the nearest wordings of needs (MemoryNeed, once per wording, on an HNSW graph), and
#   for each the k first memories in id order that have it, which is how the exact sort breaks
#   the tie between memories that share a need (thousands share "Where do I live?").
# The probe is written into each scan's order so that an index can order by it. Without the
# indexes the scans are exact sorts, and the chosen memories hold the exact top k (a memory
# outranked in a scan by that many rows is outranked by at least k memories, since no memory has
# more keys than that), but for two cases: rows that half precision cannot tell apart (the chosen
# are then scored at full precision), and a memory with a fact asked whose text is so much nearer
# the turn than its fact asked that it is a top k memory outranked by that many facts asked
# (measured: never, on the heavy user's probes; docs/benchmarks.md, "Heavy users").
_LIVE_KEY = """EXISTS (
              SELECT 1 FROM {memory} km
              WHERE km.id = mk.memory_id AND km.user_id = mk.user_id AND km.deleted_at IS NULL
          )"""
_CHOSEN = """
    text_near AS (
        SELECT m.id FROM {memory} m
        WHERE m.user_id = %(user)s AND m.embedding_model = %(model)s AND m.deleted_at IS NULL AND NOT m.asked
        ORDER BY m.embedding::halfvec({dims}) <=> %(vector)s::halfvec({dims})
        LIMIT %(candidates)s
    ),
    question_near AS (
        SELECT mk.memory_id AS id FROM {key} mk
        WHERE mk.user_id = %(user)s AND mk.embedding_model = %(model)s AND mk.kind = 'question'
          AND {live_key}
        ORDER BY mk.embedding::halfvec({dims}) <=> %(vector)s::halfvec({dims})
        LIMIT %(candidates)s
    ),
    need_near AS (
        SELECT n.text FROM {need} n
        WHERE n.user_id = %(user)s AND n.embedding_model = %(model)s
          AND EXISTS (
              SELECT 1 FROM {key} mk
              WHERE mk.user_id = n.user_id AND mk.embedding_model = n.embedding_model AND mk.text = n.text
                AND mk.kind <> 'question' AND {live_key}
          )
        ORDER BY n.embedding::vector({dims}) <=> %(vector)s::vector({dims})
        LIMIT %(candidates)s
    ),
    need_memories AS (
        SELECT first.id FROM need_near, LATERAL (
            SELECT mk.memory_id AS id FROM {key} mk
            WHERE mk.user_id = %(user)s AND mk.embedding_model = %(model)s AND mk.kind <> 'question'
              AND mk.text = need_near.text AND {live_key}
            ORDER BY mk.memory_id
            LIMIT %(k)s
        ) first
    ),
    chosen AS (SELECT id FROM text_near UNION SELECT id FROM question_near UNION SELECT id FROM need_memories)"""
# `live`: the chosen memories, each with its distances to the probe: by its own words (its text,
# or the fact asked as a question, counted `question_offset` further off: memoryapp.keys), by the
# nearest need of its kind, counted `key_offset` further off (a key is worded like every other
# turn that asks something of the same form), and the nearer of the two; its source
# conversation and turn joined in. `_NEAREST` and `_PROFILE` add their own choice, order and limit.
_LIVE = f"""
    probe AS (SELECT %(vector)s::vector AS v, %(key_offset)s::float8 AS key_offset,
                     %(question_offset)s::float8 AS question_offset),
    keyed AS {{materialized}}(
        SELECT memory_id,
               min(d) FILTER (WHERE kind = 'question') AS question_distance,
               min(d) FILTER (WHERE kind <> 'question') AS need_distance
        FROM (
            SELECT mk.memory_id, mk.kind, mk.embedding <=> probe.v AS d
            FROM probe, {_KEY} mk
            WHERE mk.user_id = %(user)s AND mk.embedding_model = %(model)s{{chosen_keys}}
        ) scored
        GROUP BY memory_id
    ),
    live AS (
        SELECT {_NEAREST_COLUMNS}, c.public_id AS source_public_id, t.seq AS source_seq,
               k.need_distance + probe.key_offset AS key_distance,
               m.embedding <=> probe.v AS plain_distance,
               LEAST(m.embedding <=> probe.v,
                     COALESCE(k.question_distance + probe.question_offset, 2)) AS text_distance,
               COALESCE(k.question_distance + probe.question_offset < m.embedding <=> probe.v, FALSE) AS by_question,
               LEAST(m.embedding <=> probe.v, COALESCE(k.question_distance + probe.question_offset, 2),
                     COALESCE(k.need_distance + probe.key_offset, 2)) AS distance
        FROM probe, {_MEMORY} m
        LEFT JOIN keyed k ON k.memory_id = m.id
        LEFT JOIN chat_conversation c ON c.id = m.source_conversation_id AND c.user_id = m.user_id
        LEFT JOIN chat_turn t ON t.id = m.source_turn_id AND t.user_id = m.user_id
        WHERE m.user_id = %(user)s AND m.deleted_at IS NULL AND m.embedding_model = %(model)s{{chosen_memories}}
    )"""
# Every live memory of the user scored (an exact sort), or only the chosen ones.
_EVERY = _LIVE.format(materialized="", chosen_keys="", chosen_memories="")
_ONLY_CHOSEN = _LIVE.format(
    materialized="MATERIALIZED ",  # scored once, not again for each chosen memory
    chosen_keys=" AND mk.memory_id IN (SELECT id FROM chosen)",
    chosen_memories="\n          AND m.id IN (SELECT id FROM chosen)",
)
# The key that matched is named for the k memories given only: aggregating every key's text to
# find it cost the statement about half its time. The owner is named as a value, not taken from
# `top`, so that on tables partitioned by owner the planner reads one partition.
_NEAREST_KEY = f"""(
    SELECT mk.text FROM {_KEY} mk
    WHERE mk.memory_id = top.id AND mk.user_id = %(user)s AND mk.embedding_model = top.embedding_model
      AND mk.kind {{}} 'question'
    ORDER BY mk.embedding <=> probe.v, mk.id
    LIMIT 1
)"""
_TOP = """
    top AS (SELECT * FROM live ORDER BY distance, id LIMIT %(k)s)"""
_TOP_COLUMNS = f"""top.*, {_NEAREST_KEY.format("<>")} AS key_text,
           CASE WHEN top.by_question THEN {_NEAREST_KEY.format("=")} END AS question_text"""
_NEAREST = f"""
    WITH {{live}}, {_TOP}
    SELECT {_TOP_COLUMNS}
    FROM top, probe
    ORDER BY top.distance, top.id
"""
# How many memories each scan of `_CHOSEN` yields for each one asked for: the most keys a memory has.
CANDIDATES_PER_RESULT = MAX_KEYS


@functools.cache
def _sql(template: str, dims: int | None) -> str:
    """A statement that scores every live memory of the user (`dims` None), or the memories its
    `chosen` scans find for probes of `dims` dimensions (a user with approximate indexes)."""
    if dims is None:
        return template.format(live=_EVERY)

    live_key = _LIVE_KEY.format(memory=_MEMORY)
    chosen = _CHOSEN.format(memory=_MEMORY, key=_KEY, need=_NEED, dims=int(dims), live_key=live_key)
    return template.format(live=f"{chosen}, {_ONLY_CHOSEN}")


def _scans(user: User, vector: Sequence[float], embedding_model: str, approximate: bool | None) -> int | None:
    """The dimensions of the `chosen` scans when the user has approximate indexes of the model
    (`approximate`, looked up when None and the indexes are on), else None: every live memory
    is scored."""
    if approximate is None:
        approximate = user_index.enabled() and user_index.indexed_model(user.pk) == embedding_model
    return len(vector) if approximate else None


def _rows(template: str, params: dict[str, Any], dims: int | None) -> list[Memory]:
    """A statement's rows; through the user's approximate indexes (`dims` given), in a
    transaction that sets how far their graphs are searched (memoryapp.user_index)."""
    if dims is None:
        return list(Memory.objects.raw(_sql(template, None), params))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(user_index.SEARCH_SETTINGS, user_index.search_settings())
        return list(Memory.objects.raw(_sql(template, dims), params))


def _params(user: User, vector: Sequence[float], embedding_model: str, key_offset: float | None = None, **more):
    """A statement's parameters: the probe, the offsets, the owner and the model, and `more`."""
    offset, question = _offsets(embedding_model, key_offset)
    return {
        "vector": vector_literal(vector),
        "key_offset": offset,
        "question_offset": question,
        "user": user.pk,
        "model": embedding_model,
        **more,
    }


def memory_nearest(
    *,
    user: User,
    vector: Sequence[float],
    embedding_model: str,
    k: int,
    min_sim: float,
    sensitive_sim: float | None = None,
    key_offset: float | None = None,
    gap: float | None = None,
    approximate: bool | None = None,
) -> list[Recalled]:
    """The user's k nearest live memories, each scored by the best of its text and its keys,
    then the floor.

    One statement: the owner predicate, `deleted_at IS NULL` and the model name are inside
    it, and the sort is exact over the user's rows (B-tree on user), so the result is the user's
    true top-k; for a user with approximate indexes of the model (`approximate`, looked up when
    None) the memories scored are those the indexes find nearest (see `_CHOSEN`). The floor is
    applied after the limit: top-k alone always returns k rows, however unrelated. A memory of a
    special category
    (`Memory.sensitive`) must clear more: one of the needs of its kind, which are all on its
    topic, at the floor, or its own words at `sensitive_sim`; it is never given as a near miss.
    With `gap`, a memory that clears the floor only through a key, and scores more than the gap
    under the first memory given, is left out too: a need's memory comes first, and other
    memories whose keys merely share its form ("What do I do for a living?" also meets "What are
    my hobbies?", "Do I live in Porto?" meets "Am I vegetarian?") are no help beside it. The source
    conversation and turn ride along (the request's memory note and the pages name them)
    without further queries.
    """
    params = _params(user, vector, embedding_model, key_offset, k=k, candidates=k * CANDIDATES_PER_RESULT)
    rows = _rows(_NEAREST, params, _scans(user, vector, embedding_model, approximate))
    return _floored(rows, min_sim=min_sim, sensitive_sim=sensitive_sim, gap=gap)


def _floored(rows, *, min_sim: float, sensitive_sim: float | None, gap: float | None) -> list[Recalled]:
    """The scored rows, nearest first, that clear the floors (see `memory_nearest`)."""
    recalled: list[Recalled] = []
    for row in rows:
        similarity = 1.0 - float(selected(row, "distance"))
        text_similarity = 1.0 - float(row.text_distance)
        key_similarity = 1.0 - float(row.key_distance) if row.key_distance is not None else -1.0
        if similarity < min_sim:
            continue
        if row.sensitive and key_similarity < min_sim and text_similarity < (sensitive_sim or min_sim):
            continue
        if gap is not None and recalled and 1.0 - float(row.plain_distance) < min_sim:
            if similarity < recalled[0].similarity - gap:
                continue
        recalled.append(
            Recalled(
                memory=_with_source(row),
                similarity=similarity,
                rank=len(recalled) + 1,
                matched_key=(row.key_text if key_similarity > text_similarity else row.question_text) or "",
                text_similarity=text_similarity,
                key_similarity=key_similarity,
                plain_similarity=1.0 - float(row.plain_distance),
            )
        )
    return recalled


def vector_literal(vector: Sequence[float] | np.ndarray) -> str:
    """A vector as PostgreSQL reads it. Writing 512 floats out costs about 0.7 ms, and a turn's
    vector goes into more than one statement (its standing instructions, its recall), so the
    last few are kept."""
    return _literal(np.ascontiguousarray(vector, dtype=np.float32).tobytes())


@functools.lru_cache(maxsize=8)
def _literal(raw: bytes) -> str:
    return Vector(np.frombuffer(raw, dtype=np.float32)).to_text()


def _offsets(embedding_model: str, key_offset: float | None = None) -> tuple[float, float]:
    """How much further off a need of the memory's kind, and the fact asked, count than its text."""
    return (
        thresholds.key_offset(embedding_model) if key_offset is None else key_offset,
        thresholds.question_offset(embedding_model),
    )


def selected(row: Memory, name: str) -> Any:
    """A column a raw statement selected beside the model's own fields ("distance")."""
    return vars(row)[name]


def _with_source(row: Memory) -> Memory:
    """The row with its source conversation and turn attached from the joined columns."""
    if row.source_conversation_id is not None and selected(row, "source_public_id") is not None:
        row.source_conversation = Conversation.from_db(
            "default",
            ["id", "user_id", "public_id"],
            [row.source_conversation_id, row.user_id, selected(row, "source_public_id")],
        )
    if row.source_turn_id is not None and selected(row, "source_seq") is not None:
        row.source_turn = Turn.from_db(
            "default",
            ["id", "user_id", "conversation_id", "seq"],
            [row.source_turn_id, row.user_id, row.source_conversation_id, selected(row, "source_seq")],
        )
    return row


MAX_STANDING = 5
# The user's standing instructions, most recently stated first, in the columns of `live`. A
# standing instruction has no keys (memoryapp.keys), so its similarity is its text's, as the
# scored statement would give it.
_STANDING_ROWS = f"""
    standing AS (
        SELECT {_NEAREST_COLUMNS}, c.public_id AS source_public_id, t.seq AS source_seq,
               NULL::float8 AS key_distance, m.embedding <=> probe.v AS plain_distance,
               m.embedding <=> probe.v AS text_distance, FALSE AS by_question, m.embedding <=> probe.v AS distance
        FROM probe, {_MEMORY} m
        LEFT JOIN chat_conversation c ON c.id = m.source_conversation_id AND c.user_id = m.user_id
        LEFT JOIN chat_turn t ON t.id = m.source_turn_id AND t.user_id = m.user_id
        WHERE m.user_id = %(user)s AND m.deleted_at IS NULL AND m.standing AND m.embedding_model = %(model)s
        ORDER BY m.last_seen DESC, m.id DESC
        LIMIT %(standing)s
    )"""
_STANDING = f"""
    WITH probe AS (SELECT %(vector)s::vector AS v), {_STANDING_ROWS}
    SELECT standing.*, TRUE AS always_given FROM standing
    ORDER BY last_seen DESC, id DESC
"""
# A chat turn's memories in one statement: its k nearest (`_NEAREST`) and its standing
# instructions (`_STANDING`), each row saying which it is.
_TURN = f"""
    WITH {{live}}, {_TOP}, {_STANDING_ROWS}
    SELECT {_TOP_COLUMNS}, FALSE AS always_given
    FROM top, probe
    UNION ALL
    SELECT standing.*, NULL, NULL, TRUE FROM standing
"""


def memory_standing(*, user: User, vector: Sequence[float], embedding_model: str) -> list[Recalled]:
    """The user's standing instructions (memoryapp.standing), most recently stated first (at
    most MAX_STANDING), each with its similarity to the turn for the record."""
    rows = Memory.objects.raw(_STANDING, _params(user, vector, embedding_model, standing=MAX_STANDING))
    return _standing(rows)


def _standing(rows) -> list[Recalled]:
    rows = sorted(rows, key=lambda row: (row.last_seen, row.id), reverse=True)
    return [
        Recalled(memory=_with_source(row), similarity=1.0 - float(selected(row, "distance")), rank=i, standing=True)
        for i, row in enumerate(rows, start=1)
    ]


PROFILE_MAX = 30
# The newest first, then scored: a user with many memories has only PROFILE_MAX of them scored.
_PROFILE = f"""
    WITH chosen AS (
        SELECT m.id FROM {_MEMORY} m
        WHERE m.user_id = %(user)s AND m.embedding_model = %(model)s AND m.deleted_at IS NULL AND NOT m.standing
        ORDER BY m.created_at DESC, m.id DESC
        LIMIT %(k)s
    ),
    {_ONLY_CHOSEN}
    SELECT * FROM live
    ORDER BY live.created_at DESC, live.id DESC
"""


def memory_profile(*, user: User, vector: Sequence[float], embedding_model: str) -> list[Recalled]:
    """Everything remembered about the user, for "What do you know about me?": the user's live
    memories of the model, newest first, at most PROFILE_MAX, standing instructions aside (they
    come with every reply), each with its similarity to the turn for the record."""
    rows = Memory.objects.raw(_PROFILE, _params(user, vector, embedding_model, k=PROFILE_MAX))
    return [
        Recalled(memory=_with_source(row), similarity=1.0 - float(selected(row, "distance")), rank=i, profile=True)
        for i, row in enumerate(rows, start=1)
    ]


def grouped(items: Sequence, *, key) -> list[tuple[str, list]]:
    """Items (memories, or recalled memories) in the profile's groups, in GROUPS order, each
    group in the order given; standing instructions in a group of their own, last."""
    by_group: dict[str, list] = {}
    for item in items:
        text = key(item)
        by_group.setdefault(STANDING_GROUP if is_standing(text) else group_of(text), []).append(item)
    order = [label for label, _ in GROUPS] + [OTHER_GROUP, STANDING_GROUP]
    return [(label, by_group[label]) for label in order if label in by_group]


STANDING_GROUP = "How you like answers"


def recall(user: User, probe: str, k: int | None = None, min_sim: float | None = None) -> list[Recalled]:
    """Memories for a probe, by similarity and the floors alone (no need decision): the probe is
    this text only, embedded once."""
    if not probe or not probe.strip():
        return []
    embedder = get_embedder()
    vector = embedder.embed([probe])[0]
    return memory_nearest(
        user=user,
        vector=vector,
        embedding_model=embedder.name,
        k=k if k is not None else settings.MEMORY_RECALL_K,
        min_sim=min_sim if min_sim is not None else recall_floor(embedder.name),
        sensitive_sim=sensitive_floor(embedder.name) if min_sim is None else None,
        gap=thresholds.recall_gap(embedder.name) if min_sim is None else None,
    )


@dataclass(frozen=True)
class TurnRead:
    """What the read path of a chat turn found, and the turn's embedding for its write path."""

    recalled: list[Recalled]
    vector: np.ndarray | None
    embedding_model: str
    need: str = NOT_NEEDED  # whether the turn needs the user's memory (memoryapp.read.need)
    profile: bool = False  # the turn asked what is remembered about the user


def recall_for_turn(user: User, text: str) -> list[Recalled]:
    """The memories for a chat turn (see `read_turn`)."""
    return read_turn(user, text).recalled


def nearest_for_turn(user: User, text: str, vector: Sequence[float], embedding_model: str, *, k: int) -> list[Recalled]:
    """A turn's k nearest memories as its need decides (see `memories_for_turn`)."""
    return memories_for_turn(user, text, vector, embedding_model, k=k)[0]


def memories_for_turn(
    user: User,
    text: str,
    vector: Sequence[float],
    embedding_model: str,
    *,
    k: int,
    need: str | None = None,
    approximate: bool | None = None,
) -> tuple[list[Recalled], list[Recalled]]:
    """A turn's k nearest memories as its need decides (memoryapp.read.need), and the user's standing
    instructions, in one statement. A turn that needs no memory gets none by similarity; any
    other gets only what clears the floors. A turn about the user and a statement about
    something new are held to the same floor: neither is given "the nearest one"; a real need
    clears it through the memory's keys. `need` is the turn's need when the caller has decided it;
    `approximate`, whether the user has approximate indexes of the model, when the caller knows."""
    params = _params(user, vector, embedding_model, k=k, candidates=k * CANDIDATES_PER_RESULT, standing=MAX_STANDING)
    if (need or turn_need(text, vector, embedding_model)) == NOT_NEEDED:
        return [], _standing(Memory.objects.raw(_STANDING, params))
    rows = _rows(_TURN, params, _scans(user, vector, embedding_model, approximate))
    nearest = sorted(
        (row for row in rows if not selected(row, "always_given")), key=lambda row: (selected(row, "distance"), row.id)
    )
    found = _floored(
        nearest,
        min_sim=recall_floor(embedding_model),
        sensitive_sim=sensitive_floor(embedding_model),
        gap=thresholds.recall_gap(embedding_model),
    )
    return found, _standing(row for row in rows if selected(row, "always_given"))


def read_turn(user: User, text: str, *, indexed_model: str | None = None) -> TurnRead:
    """The read path of a chat turn. A turn that asks what is remembered about the user ("What do
    you know about me?", in any language) gets the user's profile (`memory_profile`). Else: does
    the turn need the user's memory at all? A
    general question ("Who founded Tesla?") gets nothing by similarity, however close a stored
    fact is ("The user drives a Tesla."); any other turn gets the memories whose text or keys
    clear the floor, a sensitive one only on its topic. Then, whatever the turn, the user's
    standing instructions, ranked after the rest. The turn is embedded once; its vector goes on
    to the write path, which needs the same one. `indexed_model` is the model of the user's
    approximate indexes (memoryapp.user_index), when the caller has read it with their switches."""
    embedder = get_embedder()
    if not text or not text.strip():
        return TurnRead([], None, embedder.name)
    vector = embedder.embed([text])[0]
    if asks_for_profile(vector, embedder.name):
        standing = memory_standing(user=user, vector=vector, embedding_model=embedder.name)
        profile = memory_profile(user=user, vector=vector, embedding_model=embedder.name)
        ranked = [
            *(item for _, items in grouped(profile, key=lambda item: item.memory.text) for item in items),
            *standing,
        ]
        return TurnRead(
            [
                Recalled(
                    memory=item.memory,
                    similarity=item.similarity,
                    rank=i,
                    standing=item.standing,
                    profile=item.profile,
                )
                for i, item in enumerate(ranked, start=1)
            ],
            vector,
            embedder.name,
            profile=True,
        )
    need = turn_need(text, vector, embedder.name)
    approximate = None if indexed_model is None else indexed_model == embedder.name
    found, standing = memories_for_turn(
        user, text, vector, embedder.name, k=settings.MEMORY_RECALL_K, need=need, approximate=approximate
    )
    instructions = {item.memory.pk for item in standing}
    # a standing instruction goes after the rest, as one, even when it is also near the turn
    found = [item for item in found if item.memory.pk not in instructions]
    recalled = [
        *(
            Recalled(memory=item.memory, similarity=item.similarity, rank=i, matched_key=item.matched_key)
            for i, item in enumerate(found, start=1)
        ),
        *(
            Recalled(memory=item.memory, similarity=item.similarity, rank=len(found) + i, standing=True)
            for i, item in enumerate(standing, start=1)
        ),
    ]
    return TurnRead(recalled, vector, embedder.name, need=need)
