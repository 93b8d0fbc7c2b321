"""Load a synthetic dataset into the current database: users, then memories by binary COPY."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from pgvector.psycopg import register_vector
from tqdm import tqdm

from bench.synthetic import Dataset, key_text, memory_text, position_of, username
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryKey, MemoryNeed


def embedder_space() -> tuple[str, int]:
    """The configured embedder's name and dimension. Synthetic rows are unit vectors of that
    dimension stored under that name, so `recall` (which filters on the name) compares them."""
    embedder = get_embedder()
    return embedder.name, int(embedder.embed(["dimension"]).shape[1])


def synthetic_model() -> str:
    """The name synthetic rows are stored under: the configured embedder's."""
    return get_embedder().name


_COPY = (
    f"COPY {Memory._meta.db_table} (user_id, text, embedding, embedding_model, content_hash, source_conversation_id,"
    " source_turn_id, times_seen, created_at, last_seen, updated_at, keys_model) FROM STDIN WITH (FORMAT BINARY)"
)
_COPY_TYPES = [
    "int4", "text", "vector", "varchar", "varchar", "int8", "int8", "int4", "timestamptz", "timestamptz", "timestamptz",
    "varchar",
]  # fmt: skip
_COPY_KEYS = (
    f"COPY {MemoryKey._meta.db_table} (memory_id, user_id, text, kind, embedding, embedding_model, created_at)"
    " FROM STDIN WITH (FORMAT BINARY)"
)
_COPY_KEY_TYPES = ["int8", "int4", "varchar", "varchar", "vector", "varchar", "timestamptz"]


@dataclass(frozen=True)
class MemoryRow:
    """One memory to load: the columns `remember` would have written for it."""

    user_id: int
    text: str
    vector: np.ndarray
    content_hash: str
    created_at: datetime
    source_conversation_id: int | None = None
    source_turn_id: int | None = None


def copy_memories(rows: Iterable[MemoryRow], *, total: int, desc: str, progress: bool = True) -> None:
    """Load memories by binary COPY (about 20,000 rows a second), then refresh the planner's statistics."""
    model = synthetic_model()
    connection.ensure_connection()
    register_vector(connection.connection)
    with (
        tqdm(total=total, unit="row", desc=desc, disable=not progress, mininterval=1.0) as bar,
        connection.connection.cursor() as cursor,
        cursor.copy(_COPY) as copy,
    ):
        copy.set_types(_COPY_TYPES)
        for row in rows:
            copy.write_row(
                [row.user_id, row.text, row.vector, model, row.content_hash, row.source_conversation_id,
                 row.source_turn_id, 1, row.created_at, row.created_at, row.created_at, model]
            )  # fmt: skip
            bar.update()
    settle(Memory._meta.db_table)


def settle(*tables: str) -> None:
    """Leave freshly loaded tables as autovacuum would: statistics gathered and, outside a
    transaction (VACUUM cannot run in one), dead rows and index pending lists cleared."""
    command = "ANALYZE" if connection.in_atomic_block else "VACUUM ANALYZE"
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"{command} {table}")


def copy_keys(dataset: Dataset, users: dict[int, int], *, progress: bool = True) -> None:
    """Load every memory's keys by binary COPY: the first key the fact asked, the rest needs of
    its kind (memoryapp.models.MemoryKey), each with its generated vector. Their wordings are
    not kept once more (MemoryNeed): only recall through a user's approximate indexes reads
    them, and these users have none."""
    if not dataset.keys:
        return
    model = synthetic_model()
    connection.ensure_connection()
    register_vector(connection.connection)
    now = timezone.now()
    total = dataset.rows * dataset.keys
    with (
        tqdm(total=total, unit="key", desc=f"keys {dataset.name}", disable=not progress, mininterval=1.0) as bar,
        connection.connection.cursor() as cursor,
    ):
        for index in dataset.user_indexes():
            cursor.execute(
                f"SELECT id, text FROM {Memory._meta.db_table} WHERE user_id = %s AND embedding_model = %s",
                [users[index], model],
            )
            ids = {position_of(text): pk for pk, text in cursor.fetchall()}
            keys = dataset.key_vectors(index)
            with cursor.copy(_COPY_KEYS) as copy:
                copy.set_types(_COPY_KEY_TYPES)
                for position, memory_keys in enumerate(keys):
                    for key, vector in enumerate(memory_keys):
                        kind = MemoryKey.Kind.QUESTION if key == 0 else MemoryKey.Kind.NEED
                        copy.write_row(
                            [ids[position], users[index], key_text(index, position, key), kind, vector, model, now]
                        )
            bar.update(len(keys) * dataset.keys)
    settle(MemoryKey._meta.db_table)


def bench_users(dataset: Dataset) -> dict[int, int]:
    """user index -> primary key, for the dataset's users that exist in this database."""
    User = get_user_model()
    wanted = {username(i): i for i in dataset.user_indexes()}
    rows = User.objects.filter(username__startswith="bench-u").values_list("username", "pk")
    return {wanted[name]: pk for name, pk in rows if name in wanted}


def is_seeded(dataset: Dataset) -> bool:
    users = bench_users(dataset)
    if len(users) != len(dataset.user_indexes()):
        return False
    model = synthetic_model()
    ours = list(users.values())  # the realistic heavy user (TEXT_USER) may be there too
    return (
        Memory.objects.filter(embedding_model=model, user__in=ours).count() == dataset.rows
        and MemoryKey.objects.filter(embedding_model=model, user__in=ours).count() == dataset.rows * dataset.keys
    )


def seed(dataset: Dataset, *, progress: bool = True) -> dict[int, int]:
    """Replace whatever bench data is in this database with `dataset`; return index -> pk."""
    User = get_user_model()
    # TRUNCATE, not the ORM's delete: that collects every row and its dependents in memory
    # first (15 GB for the 1.1M-row dataset). Only the benchmark's own databases are seeded.
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {Memory._meta.db_table} CASCADE")
    User.objects.filter(username__startswith="bench-u").delete()
    User.objects.bulk_create(
        (User(username=username(i), password="!") for i in dataset.user_indexes()),  # noqa: S106 - unusable
        batch_size=5000,
    )
    users = bench_users(dataset)
    now = timezone.now()

    def rows() -> Iterator[MemoryRow]:
        for index in dataset.user_indexes():
            vectors = dataset.vectors(index)
            for position, vector in enumerate(vectors):
                yield MemoryRow(users[index], memory_text(index, position), vector, f"{index:032x}{position:032x}", now)

    copy_memories(rows(), total=dataset.rows, desc=f"seed {dataset.name}", progress=progress)
    copy_keys(dataset, users, progress=progress)
    return users


def ensure_seeded(dataset: Dataset, *, reseed: bool = False, progress: bool = True) -> tuple[dict[int, int], bool]:
    """Reuse the dataset when this database already holds exactly it; seed it otherwise."""
    if not reseed and is_seeded(dataset):
        return bench_users(dataset), False
    return seed(dataset, progress=progress), True


def stored_vectors_match(dataset: Dataset, user_index: int, pk: int) -> bool:
    """The stored vectors of one user are the generated ones (guards the reuse of old data)."""
    rows = list(
        Memory.objects.filter(user_id=pk, embedding_model=synthetic_model())
        .order_by("id")
        .values_list("text", "embedding")
    )
    expected = dataset.vectors(user_index)
    if len(rows) != len(expected):
        return False
    stored = np.array([np.asarray(vector, dtype=np.float32) for _, vector in rows])
    order = [int(text.rsplit(" n", 1)[1]) for text, _ in rows]
    return bool(np.allclose(stored, expected[order], atol=1e-6))


# The heavy user with realistic memories (bench.facts), beside the synthetic dataset's users.
TEXT_USER = "bench-heavy-text"
_EMBED_BATCH = 1024


def _embedded(texts: list[str], *, desc: str, progress: bool) -> np.ndarray:
    embedder = get_embedder()
    parts = []
    for start in tqdm(range(0, len(texts), _EMBED_BATCH), desc=desc, unit="batch", disable=not progress):
        parts.append(embedder.embed(texts[start : start + _EMBED_BATCH]))
    return np.concatenate(parts).astype(np.float32)


# The needs' wordings, once each, as the write path keeps them (memoryapp.write.store).
_NEEDS_OF_KEYS = f"""
    INSERT INTO {MemoryNeed._meta.db_table} (user_id, embedding_model, text, embedding)
    SELECT DISTINCT ON (embedding_model, text) user_id, embedding_model, text, embedding
    FROM {MemoryKey._meta.db_table} WHERE user_id = %s AND kind <> '{MemoryKey.Kind.QUESTION}'
    ORDER BY embedding_model, text, id
"""

# Which memories have a fact asked (Memory.asked), as the write path marks them with their keys.
_ASKED_OF_KEYS = f"""
    UPDATE {Memory._meta.db_table} m SET asked = TRUE
    WHERE m.user_id = %s AND NOT m.asked AND EXISTS (
        SELECT 1 FROM {MemoryKey._meta.db_table} k
        WHERE k.user_id = m.user_id AND k.memory_id = m.id AND k.embedding_model = m.keys_model
          AND k.kind = '{MemoryKey.Kind.QUESTION}'
    )
"""


def seed_text_user(facts: list[str], *, progress: bool = True) -> int:
    """Store `facts` as one user's memories, embedded by the configured model, each with the keys
    the write path gives it (memoryapp.keys), embedded too; the user's id. Replaces the user."""
    from memoryapp import user_index
    from memoryapp.keys import keyed

    User = get_user_model()
    old = User.objects.filter(username=TEXT_USER).first()
    if old is not None:  # by SQL first: the ORM's delete would collect every row in memory
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {MemoryKey._meta.db_table} WHERE user_id = %s", [old.pk])
            cursor.execute(f"DELETE FROM {MemoryNeed._meta.db_table} WHERE user_id = %s", [old.pk])
            cursor.execute(f"DELETE FROM {Memory._meta.db_table} WHERE user_id = %s", [old.pk])
        old.delete()
    user_index.prune()  # the replaced user's indexes (with the indexes off, every user's)
    user = User.objects.create(username=TEXT_USER, password="!")  # noqa: S106 - unusable
    now = timezone.now()
    vectors = _embedded(facts, desc="embedding facts", progress=progress)
    rows = (
        MemoryRow(user.pk, fact, vector, f"{position:064x}", now)
        for position, (fact, vector) in enumerate(zip(facts, vectors, strict=True))
    )
    copy_memories(rows, total=len(facts), desc="memories", progress=progress)
    keys = {fact: keyed(fact) for fact in facts}
    texts = list(dict.fromkeys(text for pairs in keys.values() for text, _kind in pairs))
    key_vectors = dict(zip(texts, _embedded(texts, desc="embedding keys", progress=progress), strict=True))
    model = synthetic_model()
    with connection.connection.cursor() as cursor:
        cursor.execute(f"SELECT id, text FROM {Memory._meta.db_table} WHERE user_id = %s", [user.pk])
        ids = {text: pk for pk, text in cursor.fetchall()}
        with cursor.copy(_COPY_KEYS) as copy:
            copy.set_types(_COPY_KEY_TYPES)
            for fact, pairs in keys.items():
                for text, kind in pairs:
                    copy.write_row([ids[fact], user.pk, text, kind, key_vectors[text], model, now])
        cursor.execute(_NEEDS_OF_KEYS, [user.pk])
        cursor.execute(_ASKED_OF_KEYS, [user.pk])
    settle(MemoryKey._meta.db_table, MemoryNeed._meta.db_table)
    return user.pk
