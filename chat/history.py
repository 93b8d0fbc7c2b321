"""The chat history reference: the second memory. What the fact store leaves out (a restaurant's
name, a plumber's diagnosis, the date of a trip) is still in the user's own past turns, and a
later conversation may quote them.

- **Indexing.** A user turn is indexed once its memory write has run (chat.tasks): its
  embedding, the one its read path made, and its words as a `tsvector` in its language's text
  search configuration where PostgreSQL has one, `simple` otherwise. So a turn the write path
  declined (a secret, a request to forget) and a turn said in a temporary chat or while memory
  was paused are never indexed; redacting a turn drops its index.
- **Finding.** The turn's words as a full-text query (words too common among the indexed turns
  only rank what the others match, as a common-terms query does), then one statement with the
  owner inside each of its parts: the user's nearest turns by embedding (through an approximate index per
  embedding model for a user with many turns, an exact sort for the rest, as the planner judges)
  and their best by full-text rank, fused by reciprocal rank. Left out: the current
  conversation, temporary chats, redacted turns, and a turn that stated a memory the user has
  since deleted (they asked for it to be forgotten).
- **The floor** comes after the limit, as for memories: an excerpt is given only when its own
  similarity to the turn clears its floor; a full-text match alone is a near miss. A turn that
  needs no memory gets no excerpt (memoryapp.read.need), and what it may get depends on what it
  does (`turn_form`, `excerpt_floor`): a question is given a past turn from a lower floor than a
  request, and a turn that only tells something is given none.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import Exists, OuterRef

from chat.models import Conversation, HistoryRecall, Turn
from memoryapp import thresholds
from memoryapp.grammar import asks_how_to, asks_outright, own_words, requests_something
from memoryapp.grammar.parsing import language_identifier
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.read.need import NOT_NEEDED
from memoryapp.read.recall import TurnRead, vector_literal

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# py3langid's language codes for which PostgreSQL ships a snowball configuration; a turn in any
# other language, or one too short to tell, is indexed with `simple` (lower-cased words).
SEARCH_CONFIGS = {
    "ar": "arabic",
    "ca": "catalan",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "eu": "basque",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}
# How sure py3langid must be of a text's language among all it knows (about 100); when it is
# not, its likeliest language among those PostgreSQL has a configuration for, which a short
# English turn ("I'm bored.") clears easily, must be surer.
LANGUAGE_CONFIDENCE = 0.5
AMONG_CONFIGURED_CONFIDENCE = 0.9


def search_config(text: str) -> str:
    """The text search configuration for a text: its language's when the identifier is sure of
    it and PostgreSQL has one, else `simple` (a language with no configuration, or a text too
    short to tell). One ranking by the grammar's identifier, its scores normalised over every
    language and then over the configured ones."""
    if not text.strip():
        return "simple"
    ranked = language_identifier().rank(text)  # (language, log-probability), likeliest first
    scores = np.array([score for _, score in ranked], dtype=np.float64)
    chance = np.exp(scores - scores.max())
    if chance[0] / chance.sum() >= LANGUAGE_CONFIDENCE:
        return SEARCH_CONFIGS.get(ranked[0][0], "simple")
    configured = [(language, p) for (language, _), p in zip(ranked, chance, strict=True) if language in SEARCH_CONFIGS]
    language, p = configured[0]
    return SEARCH_CONFIGS[language] if p / sum(q for _, q in configured) >= AMONG_CONFIGURED_CONFIDENCE else "simple"


# A question mark in any script: Latin and Cyrillic, full-width (CJK), Arabic, and Spanish's opening one.
_QUESTION_MARK = re.compile("[?\uff1f\u061f\u00bf]")


def asks(text: str) -> bool:
    """Does the turn ask a question ("What did the plumber say about the boiler?", "¿Qué hotel
    reservamos?", "横浜での撮影はいつですか？", "what was that place called")? A question mark
    in the user's own words (not in a quotation or code), in any script; or, in English, every
    sentence opening with a question word."""
    return bool(_QUESTION_MARK.search(own_words(text))) or asks_outright(text)


# What a turn does (`turn_form`).
QUESTION = "question"
REQUEST = "request"
STATEMENT = "statement"


def turn_form(text: str) -> str:
    """What a turn does, as the chat history reference reads it: asks a question (`asks`), asks the
    assistant for something (memoryapp.grammar.requests_something; a question of how to do
    something or whether to, memoryapp.grammar.asks_how_to, is a request for advice), or only
    tells. A turn in a language the parser does not read and with no question mark cannot be told
    apart from one that only tells, and is read as one: a missed excerpt costs a detail the
    memories may still give, a wrong one is memory out of turn."""
    if asks(text):
        return REQUEST if asks_how_to(text) else QUESTION
    return REQUEST if requests_something(text) else STATEMENT


def excerpt_floor(text: str, embedding_model: str) -> float | None:
    """The similarity a past turn must reach to be quoted to this turn, or None when nothing is.
    A question asks for something the user said before, and a past turn on its subject is what
    it asks for: the model's `history_question_floor`. A request ("Plan my week around my
    shifts.") is served by what the user said of it: `history_floor`, the higher. A turn that only
    tells something ("I'm cooking dinner for friends tonight.") asks for nothing of the past, and
    a past turn like it (a dinner months ago) is another occasion, memory out of turn: none."""
    form = turn_form(text)
    if form == QUESTION:
        return thresholds.history_question_floor(embedding_model)
    if form == REQUEST:
        return thresholds.history_floor(embedding_model)
    return None


_TURN = Turn._meta.db_table
_CONVERSATION = Conversation._meta.db_table


def vector_index_name(embedding_model: str, dims: int) -> str:
    """The approximate index of one embedding model's turns: a readable part and a digest of the name."""
    slug = re.sub(r"[^a-z0-9]+", "_", embedding_model.lower()).strip("_")[:24]
    digest = hashlib.sha256(f"{embedding_model}:{dims}".encode()).hexdigest()[:8]
    return f"turn_hnsw_{slug}_{int(dims)}_{digest}"


_INDEXED: set[tuple[str, int]] = set()
# How long making a model's index may wait for the table's lock before it is left for the next turn.
INDEX_LOCK_TIMEOUT = "2s"


def vector_index(*, embedding_model: str, dims: int) -> bool:
    """Make sure one embedding model's turns have their approximate (HNSW, cosine) index; says
    whether they have. An HNSW index needs vectors of one dimension, and the column holds any
    model's, so each model has an expression index of its own, partial on its name. It is made in
    a transaction of its own once the model's first turn is indexed (`turn_index`), when it covers
    one turn and takes no time (chat migration 0011 makes it for turns indexed before); a lock the
    table cannot get within INDEX_LOCK_TIMEOUT leaves it for a later turn. Once there, it is not
    looked up again in this process."""
    if (embedding_model, dims) in _INDEXED:
        return True
    name = vector_index_name(embedding_model, dims)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(hashtext(%s)), to_regclass(%s)",
                [INDEX_LOCK_TIMEOUT, name, name],
            )
            if cursor.fetchone()[2] is None:
                cursor.execute(
                    f"""CREATE INDEX IF NOT EXISTS {connection.ops.quote_name(name)} ON {_TURN}
                        USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops)
                        WHERE embedding_model = %s AND embedding IS NOT NULL""",
                    [embedding_model],
                )
    except OperationalError:
        logger.warning("history: the index %s was not made this time (the table was busy)", name)
        return False
    _INDEXED.add((embedding_model, dims))
    return True


def turn_index(
    *, user: User, turn: Turn, vector: Sequence[float] | np.ndarray, embedding_model: str, config: str = ""
) -> bool:
    """Index a user turn for later conversations: its embedding and its words, in its language's
    configuration (`config` when the caller knows it) and in `simple` (so that a word matches as
    written whatever the language a probe is read in). A redacted turn, or another user's, is left
    alone. Says whether it was indexed."""
    config = config or search_config(turn.content)
    if (embedding_model, len(vector)) not in _INDEXED:
        # after the turn's transaction: an index cannot be made in one that has written rows
        transaction.on_commit(functools.partial(vector_index, embedding_model=embedding_model, dims=len(vector)))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {_TURN}
                SET embedding = %s::vector, embedding_model = %s,
                    search = to_tsvector(%s::regconfig, content) || to_tsvector('simple', content)
                WHERE id = %s AND user_id = %s AND role = %s AND redacted_at IS NULL""",
            [vector_literal(vector), embedding_model, config, turn.pk, user.pk, Turn.Role.USER],
        )
        return cursor.rowcount == 1


@dataclass(frozen=True)
class Excerpt:
    """A past turn of the user's, found for the current one."""

    turn: Turn  # with its conversation's public id and title attached
    similarity: float  # cosine similarity of its embedding to the current turn's
    rank: int
    dense_rank: int | None  # its place among the nearest by embedding, if it was among them
    lexical_rank: int | None  # its place by full-text rank, if its words matched


# The probe's words as two full-text queries (NULL when no word is left), as a common-terms query
# makes them: `ranked`, every word that is not a stop word of the probe's configuration, stemmed
# in it and as written, any of them (`|`), by which the matches are ranked; and `matched`, which
# turns are ranked at all: those with any of its uncommon words, or, when all of them are common,
# those with every word (`&`). A word is common when the text search statistics of the turns
# (ANALYZE's most common lexemes) put one of its lexemes in more than COMMON_SHARE of the
# indexed turns and in more than COMMON_TURNS of them: it tells turns apart poorly (`ts_rank`
# does not weigh rarity), and matching on it would rank a large share of a heavy user's turns
# for every probe. Below those counts (a small table, statistics not yet gathered) no word is.
# The two are settings: CHAT_HISTORY_COMMON_SHARE and CHAT_HISTORY_COMMON_TURNS.
_QUERIES = """
    WITH words AS (
        SELECT DISTINCT d.token, unnest(d.lexemes || ts_lexize('simple', d.token)) AS lexeme
        FROM ts_debug(%(config)s::regconfig, %(text)s) d
        WHERE cardinality(d.lexemes) > 0
    ),
    kept AS (SELECT token, lexeme FROM words WHERE lexeme IS NOT NULL AND strpos(lexeme, chr(92)) = 0),
    common AS (
        SELECT e.lexeme
        FROM pg_stats s
        JOIN pg_class r ON r.oid = %(table)s::regclass,
        unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, share)
        WHERE s.schemaname = current_schema() AND s.tablename = %(table)s AND s.attname = 'search'
          AND e.lexeme IS NOT NULL  -- the frequencies end with their minimum and maximum
          AND e.share > %(share)s AND e.share * r.reltuples * (1 - s.null_frac) > %(turns)s
    ),
    groups AS (
        SELECT token, '(' || string_agg(quote_literal(lexeme), ' | ') || ')' AS alternatives,
               bool_or(lexeme IN (SELECT lexeme FROM common)) AS is_common
        FROM kept
        GROUP BY token
    )
    SELECT (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM kept)::tsquery::text,
           coalesce(
               (SELECT string_agg(alternatives, ' | ') FROM groups WHERE NOT is_common),
               (SELECT string_agg(alternatives, ' & ') FROM groups)
           )::tsquery::text,
           set_config('hnsw.iterative_scan', 'relaxed_order', true),
           set_config('hnsw.ef_search', %(ef_search)s, true)
"""
# A user's turns that may be quoted to one conversation. The owner is named in each statement
# and every joined table is tied to it.
_ELIGIBLE = f"""
    t.user_id = %s AND t.role = 'user' AND t.embedding_model = %s AND t.embedding IS NOT NULL
    AND t.conversation_id <> %s AND t.id <> ALL(%s::bigint[]) AND t.redacted_at IS NULL AND t.memory_state = 'done'
    AND NOT c.temporary
    AND NOT EXISTS (
        SELECT 1 FROM {MemoryEvidence._meta.db_table} e
        JOIN {Memory._meta.db_table} m ON m.id = e.memory_id AND m.user_id = e.user_id
        WHERE e.turn_id = t.id AND e.user_id = t.user_id AND m.deleted_at IS NOT NULL
    )"""
_FROM = f"{_TURN} t JOIN {_CONVERSATION} c ON c.id = t.conversation_id AND c.user_id = t.user_id"
# Reciprocal rank fusion's constant: a place among the first few counts little more than the next.
RRF_K = 60
# The nearest turns by embedding come from the approximate index of the turns' model
# (`vector_index`), the probe written into the statement so that the index can order by it, and
# scanned on past the owner's other turns (iterative scan) until enough of the user's eligible
# ones are found; a user with few turns is sorted exactly through the B-tree, as the planner picks.
_NEAREST = """
    WITH probe AS (SELECT %s::vector AS v),
    dense AS MATERIALIZED (
        SELECT id, row_number() OVER (ORDER BY d, id) AS r
        FROM (
            SELECT t.id, t.embedding::vector({dims}) <=> %s::vector({dims}) AS d
            FROM {turns}
            WHERE {eligible}
            ORDER BY d
            LIMIT %s
        ) nearest
    ),
    lexical AS (
        SELECT t.id, row_number() OVER (ORDER BY ts_rank(t.search, %s::tsquery, 1) DESC, t.id) AS r
        FROM {turns}
        WHERE {eligible} AND t.search @@ %s::tsquery  -- ranked by every word, matched by the uncommon
        ORDER BY ts_rank(t.search, %s::tsquery, 1) DESC, t.id
        LIMIT %s
    ),
    fused AS (
        SELECT id, min(r) FILTER (WHERE source = 'dense') AS dense_rank,
               min(r) FILTER (WHERE source = 'lexical') AS lexical_rank,
               sum(1.0 / ({rrf_k} + r)) AS score
        FROM (SELECT id, r, 'dense' AS source FROM dense UNION ALL SELECT id, r, 'lexical' FROM lexical) ranked
        GROUP BY id
    )
    SELECT t.id, t.conversation_id, t.seq, t.content, t.created_at, c.public_id, c.title,
           1 - (t.embedding <=> probe.v) AS similarity, f.dense_rank, f.lexical_rank
    FROM probe, fused f
    JOIN {turn} t ON t.id = f.id AND t.user_id = %s
    JOIN {conversation} c ON c.id = t.conversation_id AND c.user_id = t.user_id
    ORDER BY f.score DESC, t.id
    LIMIT %s
"""
# How many candidates the index yields before the filters (pgvector's `hnsw.ef_search`), and that
# it goes on past them, its order relaxed (re-sorted above), until enough are found.
EF_SEARCH = 100


@functools.cache
def _nearest_sql(dims: int) -> str:
    return _NEAREST.format(
        dims=int(dims),
        turns=_FROM,
        eligible=_ELIGIBLE,
        rrf_k=RRF_K,
        turn=_TURN,
        conversation=_CONVERSATION,
    )


# How many of each ranking go into the fusion.
CANDIDATES = 30


def _run_nearest(
    *,
    user: User,
    text: str,
    vector: Sequence[float] | np.ndarray,
    embedding_model: str,
    exclude_conversation_id: int | None,
    k: int,
    exclude_turn_ids: Sequence[int] = (),
    explain: bool = False,
) -> list[tuple]:
    """The statement's rows (or, with `explain`, its EXPLAIN (ANALYZE, BUFFERS) lines)."""
    eligible: list[int | str | list[int]] = [
        user.pk,
        embedding_model,
        exclude_conversation_id or 0,
        list(exclude_turn_ids),
    ]
    literal = vector_literal(vector)
    with transaction.atomic(), connection.cursor() as cursor:
        # The full-text queries first, so that they are constants in the statement: the planner
        # then estimates how many turns they match and joins them accordingly.
        cursor.execute(
            _QUERIES,
            {
                "config": search_config(text),
                "text": text,
                "table": _TURN,
                "share": settings.CHAT_HISTORY_COMMON_SHARE,
                "turns": settings.CHAT_HISTORY_COMMON_TURNS,
                "ef_search": str(EF_SEARCH),
            },
        )
        ranked, matched = cursor.fetchone()[:2]  # None when no word of the turn is left
        params: list[int | str | list[int] | None] = [
            literal,
            literal,
            *eligible,
            CANDIDATES,
            ranked,
            *eligible,
            matched,
            ranked,
            CANDIDATES,
            user.pk,
            k,
        ]
        cursor.execute(("EXPLAIN (ANALYZE, BUFFERS) " if explain else "") + _nearest_sql(len(vector)), params)
        return cursor.fetchall()


_VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'")


def history_plan(
    *,
    user: User,
    text: str,
    vector: Sequence[float] | np.ndarray,
    embedding_model: str,
    exclude_conversation_id: int | None,
    k: int,
) -> str:
    """How PostgreSQL runs `history_nearest`'s statement for these arguments, as EXPLAIN (ANALYZE,
    BUFFERS) prints it (the benchmark's), the probe's vector written as `[...]`."""
    rows = _run_nearest(
        user=user,
        text=text,
        vector=vector,
        embedding_model=embedding_model,
        exclude_conversation_id=exclude_conversation_id,
        k=k,
        explain=True,
    )
    return "\n".join(_VECTOR_LITERAL.sub("'[...]'", row[0]) for row in rows)


def history_nearest(
    *,
    user: User,
    text: str,
    vector: Sequence[float] | np.ndarray,
    embedding_model: str,
    exclude_conversation_id: int | None,
    k: int,
    min_sim: float,
    exclude_turn_ids: Sequence[int] = (),
) -> list[Excerpt]:
    """The user's past turns for a turn, best first by fused rank, then the floor: at most k,
    each with a similarity to the turn of at least `min_sim`; none of `exclude_turn_ids`."""
    rows = _run_nearest(
        user=user,
        text=text,
        vector=vector,
        embedding_model=embedding_model,
        exclude_conversation_id=exclude_conversation_id,
        k=k,
        exclude_turn_ids=exclude_turn_ids,
    )
    excerpts: list[Excerpt] = []
    for turn_id, conversation_id, seq, content, created_at, public_id, title, similarity, dense, lexical in rows:
        if similarity < min_sim:
            continue
        conversation = Conversation(id=conversation_id, user_id=user.pk, public_id=public_id, title=title)
        turn = Turn(
            id=turn_id,
            conversation_id=conversation_id,
            user_id=user.pk,
            seq=seq,
            role=Turn.Role.USER,
            content=content,
            created_at=created_at,
        )
        turn.conversation = conversation
        excerpts.append(
            Excerpt(
                turn=turn, similarity=float(similarity), rank=len(excerpts) + 1, dense_rank=dense, lexical_rank=lexical
            )
        )
    return excerpts


def history_for_turn(
    *,
    user: User,
    text: str,
    read: TurnRead,
    conversation: Conversation,
    known_turn_ids: Sequence[int] = (),
    k: int | None = None,
) -> list[Excerpt]:
    """The excerpts of the user's past conversations for a turn of `conversation`, given what its
    read path found (`read`): at most `k` (CHAT_HISTORY_EXCERPTS) that clear the turn's floor
    (`excerpt_floor`), a restatement of the turn itself and the turns in `known_turn_ids` (those
    the reply's memories were learned from) left out. None for a turn that needs no memory (the
    same decision as for memories), that only tells something, or that asks what is remembered
    about the user (the memories answer that)."""
    k = settings.CHAT_HISTORY_EXCERPTS if k is None else k
    if read.vector is None or read.profile or read.need == NOT_NEEDED or not k:
        return []
    floor = excerpt_floor(text, read.embedding_model)
    if floor is None:
        return []
    found = history_nearest(
        user=user,
        text=text,
        vector=read.vector,
        embedding_model=read.embedding_model,
        exclude_conversation_id=conversation.pk,
        exclude_turn_ids=known_turn_ids,
        k=k,
        min_sim=floor,
    )
    # A past turn that says what this one says (the same question asked again) tells the reply
    # nothing new: at the model's paraphrase similarity, it is left out.
    paraphrase = thresholds.paraphrase(read.embedding_model)
    kept = [excerpt for excerpt in found if excerpt.similarity < paraphrase]
    return [replace(excerpt, rank=rank) for rank, excerpt in enumerate(kept, start=1)]


def history_log(*, user: User, probe_turn: Turn, reply_turn: Turn, excerpts: Sequence[Excerpt]) -> None:
    """Record which past turns were quoted into a reply, with similarity and rank, beside the
    memories' recall log."""
    if reply_turn.user_id != user.pk or probe_turn.user_id != user.pk:
        raise PermissionError("history_log() was given a turn that belongs to another user")
    HistoryRecall.objects.bulk_create(
        [
            HistoryRecall(
                user=user,
                conversation_id=reply_turn.conversation_id,
                probe_turn=probe_turn,
                reply_turn=reply_turn,
                source_turn_id=excerpt.turn.pk,
                similarity=excerpt.similarity,
                rank=excerpt.rank,
            )
            for excerpt in excerpts
            if excerpt.turn.user_id == user.pk
        ]
    )


def _still_quotable(user_id: int):
    """The log's rows whose quoted turn may still be quoted: not redacted since, and not the
    statement of a memory deleted since."""
    forgotten = MemoryEvidence.objects.filter(
        user_id=user_id, turn_id=OuterRef("source_turn_id"), memory__user_id=user_id, memory__deleted_at__isnull=False
    )
    return HistoryRecall.objects.filter(
        user_id=user_id, source_turn__user_id=user_id, source_turn__redacted_at__isnull=True
    ).exclude(Exists(forgotten))


def quoted_before(*, user_id: int, turn_ids: Sequence[int]) -> dict[int, list[Excerpt]]:
    """What the log says each of these user turns' replies was quoted, by turn id, in rank order:
    the earlier turns of a request keep their notes word for word (chat.prompting), except a
    turn redacted or forgotten since, which is never shown to a model again."""
    rows = (
        _still_quotable(user_id)
        .filter(probe_turn_id__in=list(turn_ids))
        .select_related("source_turn__conversation")
        .order_by("probe_turn_id", "rank", "pk")
    )
    quoted: dict[int, list[Excerpt]] = {}
    for row in rows:
        quoted.setdefault(row.probe_turn_id, []).append(
            Excerpt(turn=row.source_turn, similarity=row.similarity, rank=row.rank, dense_rank=None, lexical_rank=None)
        )
    return quoted


def quoted_for_replies(*, user: User, reply_ids: Sequence[int]) -> dict[int, list[HistoryRecall]]:
    """The log's rows for these replies, by reply id, in rank order, each with its quoted turn and
    that turn's conversation (for the page's "From your conversation of ..." links)."""
    rows = (
        HistoryRecall.objects.filter(user=user, reply_turn_id__in=list(reply_ids), source_turn__user=user)
        .select_related("source_turn__conversation")
        .order_by("reply_turn_id", "rank", "pk")
    )
    by_reply: dict[int, list[HistoryRecall]] = {}
    for row in rows:
        by_reply.setdefault(row.reply_turn_id, []).append(row)
    return by_reply
