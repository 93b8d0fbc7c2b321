"""A heavy user's own approximate indexes over their memories, keys and needs.

Recall (memoryapp.read.recall) chooses the memories to score by three nearest-first scans of the
user's live rows: by the fact asked, by the text of a memory with none, by the needs of its kind.
For most users each scan is an exact sort through the B-tree on user, and that is the right
plan: no approximate index can lose one of their rows. Its cost grows with the user's rows,
though (docs/benchmarks.md, "Heavy users"), so a user with MEMORY_USER_INDEX_AT live memories or
more gets three indexes of their own, one a scan, each partial on the user's id and the
embedding model:
- facts asked, and the texts of memories that have none (`Memory.asked`): IVFFlat over
  half-precision vectors, a list per ROWS_PER_LIST of the user's memories, searched
  MEMORY_USER_INDEX_PROBES lists deep. Both indexes have the same lists, so that the one depth
  searches the same share of each. A user's facts cluster tightly by kind, and a turn far from
  all of them is as far from many; a graph walk settles in the nearest cluster and misses the
  rest, where scanning whole lists does not, and many small lists find them for fewer rows
  read than a few large ones (measured: docs/benchmarks.md);
- needs: an HNSW graph over their wordings (MemoryNeed), a few thousand, each worded like a turn,
  searched MEMORY_USER_INDEX_EF_SEARCH deep.
The planner picks each by its predicate (Django sends the statement's values written in), so no
code chooses the path, and no other user's statement or write is touched by it.

The indexes are made by the memory worker after a write that leaves the user at the mark
(`ensure`, CREATE INDEX CONCURRENTLY: writes go on meanwhile), and by `manage.py user_indexes`
for users already past it. The lists are fixed when an index is made; `ensure` makes the IVFFlat
ones again (a new index, then the old one dropped) once the user has twice the rows their lists
were made for, which the memory worker checks at most once every RECHECK_AFTER (counting a heavy
user's rows takes about 8 ms at 100,000, on every write otherwise). They are dropped when the
user falls under half the mark or is deleted (`manage.py user_indexes --prune`, run by
`purge_deleted`). Every partial index is weighed by the planner on every statement on its table,
so their number is the limit of this design on one node; past it, a heavy user is a shard of
their own (docs/scale-out.md).

Off by default (MEMORY_USER_INDEX_AT unset): every user is sorted exactly.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memoryapp.models import Memory, MemoryKey, MemoryNeed, MemorySettings

logger = logging.getLogger(__name__)

_PREFIX = "memory_ann_u"
# How many of the user's memories an IVFFlat list is made for.
ROWS_PER_LIST = 33
# How long the memory worker trusts a heavy user's indexes without counting their rows again:
# lists are made again at twice the rows, which takes a user at the mark thousands of turns.
RECHECK_AFTER = timedelta(hours=1)
# How far recall searches: the needs' graph (`hnsw.ef_search`, MEMORY_USER_INDEX_EF_SEARCH) and the
# lists (`ivfflat.probes`, MEMORY_USER_INDEX_PROBES), each going on past deleted memories' rows
# until enough are found, in the statement's transaction.
SEARCH_SETTINGS = """SELECT set_config('hnsw.ef_search', %s::text, true),
                            set_config('hnsw.iterative_scan', 'relaxed_order', true),
                            set_config('ivfflat.probes', %s::text, true),
                            set_config('ivfflat.iterative_scan', 'relaxed_order', true)"""


def search_settings() -> list[int]:
    """The parameters of SEARCH_SETTINGS."""
    return [settings.MEMORY_USER_INDEX_EF_SEARCH, settings.MEMORY_USER_INDEX_PROBES]


def mark() -> int | None:
    """How many live memories make a user heavy (MEMORY_USER_INDEX_AT); None with the indexes off."""
    return settings.MEMORY_USER_INDEX_AT


def enabled() -> bool:
    return mark() is not None


def lists_for(rows: int) -> int:
    """How many IVFFlat lists an index over `rows` rows is made with."""
    return max(1, rows // ROWS_PER_LIST)


@dataclass(frozen=True)
class UserIndex:
    """One of a user's indexes: its name, table, the predicate recall's scan states, and how it
    is made (`lists`: IVFFlat with that many lists over half-precision vectors; None: HNSW)."""

    name: str
    table: str
    predicate: str
    lists: int | None

    def using(self, dims: int) -> str:
        if self.lists is None:
            return f"USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops)"
        return f"USING ivfflat ((embedding::halfvec({int(dims)})) halfvec_cosine_ops) WITH (lists = {self.lists})"

    @property
    def stem(self) -> str:
        """The name without the lists: what an index of this scan is called whatever its lists."""
        return self.name if self.lists is None else self.name.rsplit("_", 1)[0]


def user_indexes(user_id: int, embedding_model: str, dims: int, *, lists: int) -> list[UserIndex]:
    """The three indexes of one user and model, with the predicates recall's scans state
    (memoryapp.read.recall._CHOSEN), values written in as Django sends them; the IVFFlat ones
    with `lists` lists."""
    quoted = "'" + embedding_model.replace("'", "''") + "'"
    owner = f"user_id = {int(user_id)} AND embedding_model = {quoted}"
    digest = hashlib.sha256(f"{embedding_model}:{int(dims)}".encode()).hexdigest()[:8]
    stem = f"{_PREFIX}{int(user_id)}"
    return [
        UserIndex(
            f"{stem}_unasked_{digest}_{lists}",
            Memory._meta.db_table,
            f"{owner} AND deleted_at IS NULL AND NOT asked",
            lists,
        ),
        UserIndex(
            f"{stem}_question_{digest}_{lists}", MemoryKey._meta.db_table, f"{owner} AND kind = 'question'", lists
        ),
        UserIndex(f"{stem}_need_{digest}", MemoryNeed._meta.db_table, owner, None),
    ]


def indexed_model(user_id: int) -> str:
    """The embedding model whose approximate indexes the user has, "" for none."""
    found = MemorySettings.objects.filter(user_id=user_id).values_list("indexed_model", flat=True).first()
    return found or ""


def _record(user_id: int, embedding_model: str) -> None:
    """Note the model of the user's indexes, checked now (an update, so that the time the user
    last changed a switch stays theirs)."""
    noted = {"indexed_model": embedding_model, "indexes_checked_at": timezone.now()}
    if not MemorySettings.objects.filter(user_id=user_id).update(**noted):
        MemorySettings.objects.get_or_create(user_id=user_id, defaults=noted)


def _checked_within(user_id: int, embedding_model: str, within: timedelta) -> bool:
    """Whether the user's indexes of the model were checked against their rows that lately."""
    since = timezone.now() - within
    return MemorySettings.objects.filter(
        user_id=user_id, indexed_model=embedding_model, indexes_checked_at__gte=since
    ).exists()


def live_count(user_id: int, embedding_model: str | None, *, up_to: int | None) -> int:
    """The user's live memories of a model (of any, None), counted no further than `up_to`
    (None: all of them)."""
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


def _existing(user_id: int) -> dict[str, bool]:
    """The user's indexes, each with whether it is valid (a concurrent build that failed leaves
    an invalid one behind, which `ensure` replaces)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.relname, i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
               WHERE c.relname LIKE %s AND c.relnamespace = current_schema()::regnamespace""",
            [f"{_PREFIX}{int(user_id)}".replace("_", r"\_") + r"\_%"],
        )
        return dict(cursor.fetchall())


def _lists_of(name: str) -> int:
    match = _NAME.match(name)
    return int(match["lists"]) if match and match["lists"] else 0


def _serves(name: str, index: UserIndex) -> bool:
    """Whether the index `name` is for the same scan as `index`, whatever its lists."""
    return name == index.stem or name.startswith(index.stem + "_")


def _of_scan(index: UserIndex, existing: dict[str, bool]) -> list[str]:
    """The user's existing indexes for the same scan as `index`."""
    return [name for name in existing if _serves(name, index)]


def _kept(index: UserIndex, existing: dict[str, bool], live: int) -> bool:
    """Whether the user has a valid index for `index`'s scan that serves `live` rows: a graph,
    or lists made for more than half of them."""
    if index.lists is None:
        return existing.get(index.name, False)
    return any(existing[name] and 2 * _lists_of(name) * ROWS_PER_LIST > live for name in _of_scan(index, existing))


def ensure(user_id: int, embedding_model: str, dims: int, *, unless_checked_within: timedelta | None = None) -> bool:
    """Make the user's indexes if they have MEMORY_USER_INDEX_AT live memories of the model or
    more, and make an IVFFlat one again once they have twice the rows its lists were made for;
    then drop the user's indexes no scan of the model uses (an earlier form, another model's);
    says whether the user has them now. With `unless_checked_within`, a user whose indexes of
    the model were checked that lately is taken to have them, and nothing is counted. A
    concurrent build cannot run in a transaction, so inside one this does nothing: the memory
    worker calls it after a write has committed."""
    heavy = mark()
    if connection.in_atomic_block or heavy is None:
        return False
    existing = _existing(user_id)
    if existing and unless_checked_within and _checked_within(user_id, embedding_model, unless_checked_within):
        return True
    # every row of a user who has indexes (lists are sized by them); of any other, up to the mark
    live = live_count(user_id, embedding_model, up_to=None if existing else heavy)
    if live < heavy:
        return False
    wanted = user_indexes(user_id, embedding_model, dims, lists=1)
    stale = {index.stem for index in wanted if not _kept(index, existing, live)}
    unused = [name for name in existing if not any(_serves(name, index) for index in wanted)]
    with connection.cursor() as cursor:
        if stale:
            lists = lists_for(live if existing else live_count(user_id, embedding_model, up_to=None))
            for index in user_indexes(user_id, embedding_model, dims, lists=lists):
                if index.stem in stale:
                    _make(
                        cursor,
                        index,
                        dims,
                        replacing=[name for name in _of_scan(index, existing) if name != index.name],
                    )
            logger.info("user_index: user %s has approximate indexes for %s", user_id, embedding_model)
        _drop(cursor, unused)
    _record(user_id, embedding_model)
    return True


def _make(cursor, index: UserIndex, dims: int, *, replacing: list[str]) -> None:
    """Build `index` (dropping first an invalid one of its name, left by a failed build), then
    drop the indexes it replaces."""
    _drop(cursor, [index.name])
    name = connection.ops.quote_name(index.name)
    cursor.execute(f"CREATE INDEX CONCURRENTLY {name} ON {index.table} {index.using(dims)} WHERE {index.predicate}")
    _drop(cursor, replacing)


def _drop(cursor, names: list[str]) -> None:
    for name in names:
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {connection.ops.quote_name(name)}")


# `text`: an index over every text, of an earlier form, which `ensure` replaces.
_NAME = re.compile(rf"^{_PREFIX}(\d+)_(text|unasked|question|need)_[0-9a-f]{{8}}(?:_(?P<lists>\d+))?$")
# Indexes of an earlier form (a graph for every scan), which recall's statement no longer uses:
# `prune` drops them.
_FORMER = re.compile(r"^memory_hnsw_u(\d+)_(text|question|need)_[0-9a-f]{8}$")


def indexed_users() -> dict[int, list[str]]:
    """Every user who has indexes, with their names."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'memory\\_%%'"
        )
        found: dict[int, list[str]] = {}
        for (name,) in cursor.fetchall():
            if match := _NAME.match(name) or _FORMER.match(name):
                found.setdefault(int(match[1]), []).append(name)
        return found


def prune() -> list[int]:
    """Drop the indexes of users who are gone or have fallen under half the mark, and every
    user's when the indexes are off, and indexes of the earlier form; the users whose indexes
    were all dropped."""
    heavy, dropped = mark(), []
    for user_id, names in indexed_users().items():
        stays = heavy is not None and live_count(user_id, None, up_to=heavy // 2) >= heavy // 2
        with connection.cursor() as cursor:
            _drop(cursor, [name for name in names if _FORMER.match(name)] if stays else names)
        if not stays:
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
