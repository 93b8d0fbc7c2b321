"""A heavy user's own approximate (HNSW) indexes over their memories and keys.

Recall (memoryapp.read.recall) chooses the memories to score by three nearest-first scans of the
user's live rows: by text, by the fact asked, by the needs of its kind. For most users each scan
is an exact sort through the B-tree on user, and that is the right plan: no approximate index
can lose one of their rows. Its cost grows with the user's rows, though (docs/benchmarks.md,
"Heavy users"), so a user with MEMORY_USER_INDEX_AT live memories or more gets three HNSW
indexes of their own, one a scan, each partial on the user's id and the embedding model. The
planner picks one by that predicate (Django sends the statement's values written in), so no code
chooses the path, and no other user's statement or write is touched by it.

The indexes are made by the memory worker after a write that leaves the user at the mark
(`ensure`, CREATE INDEX CONCURRENTLY: writes go on meanwhile), and by `manage.py user_indexes`
for users already past it. They are dropped when the user falls under half the mark or is
deleted (`manage.py user_indexes --prune`, run by `purge_deleted`). Every partial index is
weighed by the planner on every statement on its table, so their number is the limit of this
design on one node; past it, a heavy user is a shard of their own (docs/scale-out.md).

Off by default (MEMORY_USER_INDEX_AT unset): on realistic memories, which cluster tightly by
kind, a graph searched to MEMORY_USER_INDEX_EF_SEARCH misses too much of the exact answer for a
turn far from all of them (docs/benchmarks.md, "Heavy users"); every user is sorted exactly.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from memoryapp.models import Memory, MemoryKey, MemorySettings

logger = logging.getLogger(__name__)

_PREFIX = "memory_hnsw_u"
# How far recall searches the graphs (pgvector's `hnsw.ef_search`, MEMORY_USER_INDEX_EF_SEARCH),
# going on past deleted memories' keys until enough are found, in the statement's transaction.
SEARCH_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', %s::text, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)"
)


def mark() -> int | None:
    """How many live memories make a user heavy (MEMORY_USER_INDEX_AT); None with the indexes off."""
    return settings.MEMORY_USER_INDEX_AT


def enabled() -> bool:
    return mark() is not None


@dataclass(frozen=True)
class UserIndex:
    """One of a user's indexes: its name, table and the predicate the recall scan states."""

    name: str
    table: str
    predicate: str


def user_indexes(user_id: int, embedding_model: str, dims: int) -> list[UserIndex]:
    """The three indexes of one user and model, with the predicates recall's scans state
    (memoryapp.read.recall._CHOSEN), values written in as Django sends them."""
    quoted = "'" + embedding_model.replace("'", "''") + "'"
    owner = f"user_id = {int(user_id)} AND embedding_model = {quoted}"
    digest = hashlib.sha256(f"{embedding_model}:{int(dims)}".encode()).hexdigest()[:8]
    return [
        UserIndex(f"{_PREFIX}{int(user_id)}_text_{digest}", Memory._meta.db_table, f"{owner} AND deleted_at IS NULL"),
        UserIndex(
            f"{_PREFIX}{int(user_id)}_question_{digest}", MemoryKey._meta.db_table, f"{owner} AND kind = 'question'"
        ),
        UserIndex(
            f"{_PREFIX}{int(user_id)}_need_{digest}", MemoryKey._meta.db_table, f"{owner} AND kind <> 'question'"
        ),
    ]


def indexed_model(user_id: int) -> str:
    """The embedding model whose approximate indexes the user has, "" for none."""
    found = MemorySettings.objects.filter(user_id=user_id).values_list("indexed_model", flat=True).first()
    return found or ""


def _record(user_id: int, embedding_model: str) -> None:
    MemorySettings.objects.update_or_create(user_id=user_id, defaults={"indexed_model": embedding_model})


def live_count(user_id: int, embedding_model: str | None, *, up_to: int) -> int:
    """The user's live memories of a model (of any, None), counted no further than `up_to`."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT count(*) FROM (
                    SELECT 1 FROM {Memory._meta.db_table}
                    WHERE user_id = %s AND embedding_model = coalesce(%s, embedding_model) AND deleted_at IS NULL
                    LIMIT %s
                ) live""",
            [user_id, embedding_model, up_to],
        )
        return cursor.fetchone()[0]


def _existing(names: list[str]) -> set[str]:
    """Those of the named indexes that exist and are valid (a concurrent build that failed
    leaves an invalid one behind, which `ensure` replaces)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.relname FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
               WHERE c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace AND i.indisvalid""",
            [names],
        )
        return {name for (name,) in cursor.fetchall()}


def ensure(user_id: int, embedding_model: str, dims: int) -> bool:
    """Make the user's indexes if they have MEMORY_USER_INDEX_AT live memories of the model or
    more; says whether the user has them now. A concurrent build cannot run in a transaction, so
    inside one this does nothing: the memory worker calls it after a write has committed."""
    heavy = mark()
    if connection.in_atomic_block or heavy is None or live_count(user_id, embedding_model, up_to=heavy) < heavy:
        return False
    indexes = user_indexes(user_id, embedding_model, dims)
    present = _existing([index.name for index in indexes])
    missing = [index for index in indexes if index.name not in present]
    if not missing:
        if indexed_model(user_id) != embedding_model:
            _record(user_id, embedding_model)
        return True
    with connection.cursor() as cursor:
        for index in missing:
            name = connection.ops.quote_name(index.name)
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")  # an invalid one, left by a failed build
            cursor.execute(
                f"""CREATE INDEX CONCURRENTLY {name} ON {index.table}
                    USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops) WHERE {index.predicate}"""
            )
    _record(user_id, embedding_model)
    logger.info("user_index: user %s has approximate indexes for %s", user_id, embedding_model)
    return True


_NAME = re.compile(rf"^{_PREFIX}(\d+)_(text|question|need)_[0-9a-f]{{8}}$")


def indexed_users() -> dict[int, list[str]]:
    """Every user who has indexes, with their names."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE %s",
            [_PREFIX.replace("_", r"\_") + "%"],
        )
        found: dict[int, list[str]] = {}
        for (name,) in cursor.fetchall():
            if match := _NAME.match(name):
                found.setdefault(int(match[1]), []).append(name)
        return found


def prune() -> list[int]:
    """Drop the indexes of users who are gone or have fallen under half the mark, and every
    user's when the indexes are off; the users whose indexes were dropped."""
    heavy, dropped = mark(), []
    for user_id, names in indexed_users().items():
        if heavy is not None and live_count(user_id, None, up_to=heavy // 2) >= heavy // 2:
            continue
        with connection.cursor() as cursor:
            for name in names:
                cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {connection.ops.quote_name(name)}")
        MemorySettings.objects.filter(user_id=user_id).update(indexed_model="")
        dropped.append(user_id)
    return dropped


def heavy_users() -> list[tuple[int, str, int]]:
    """(user, embedding model, dimensions) of every user with MEMORY_USER_INDEX_AT live memories
    of a model or more (none with the indexes off)."""
    if not enabled():
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT user_id, embedding_model, max(vector_dims(embedding))
                FROM {Memory._meta.db_table} WHERE deleted_at IS NULL
                GROUP BY user_id, embedding_model HAVING count(*) >= %s ORDER BY user_id""",
            [settings.MEMORY_USER_INDEX_AT],
        )
        return cursor.fetchall()
