"""The distributed tables hash-partitioned by owner (core.partitioning): the rows, names and
constraints survive, the write and read paths work unchanged, and a statement that names its
owner reads one partition. Each test partitions inside its own transaction, rolled back after."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from bench.partition_bench import plans_of
from core.distribution import DISTRIBUTED
from core.partitioning import leaves, partition_by_owner, partitioned_tables
from memoryapp.models import Memory, MemoryKey
from memoryapp.read.recall import memory_nearest, recall
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

# The table's keys, foreign keys and indexes by name; not the per-partition copies PostgreSQL
# makes of a foreign key into a partitioned table.
_NAMES = """
    SELECT conname FROM pg_constraint
    WHERE conrelid = %(table)s::regclass AND contype IN ('p', 'u', 'f') AND conparentid = 0
    UNION SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %(table)s::regclass
"""


def _names(table: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(_NAMES, {"table": table})
        return {name for (name,) in cursor.fetchall()}


def _storage(table: str) -> list[str] | None:
    """A table's storage parameters (the vectors kept inline: memoryapp 0005)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass", [table])
        return cursor.fetchone()[0]


@pytest.fixture
def nurse(django_user_model):
    """A user with a memory written before the tables are partitioned."""
    user = django_user_model.objects.create_user("nina")
    assert remember(user, user_turn(user, "I'm a nurse.")).stored == 1
    return user


def test_every_distributed_table_becomes_sixteen_partitions_keeping_rows_and_names(nurse):
    names = {table: _names(table) for table in DISTRIBUTED}
    storage = {table: _storage(table) for table in DISTRIBUTED}
    assert storage["memoryapp_memory"] == storage["memoryapp_memorykey"] == ["toast_tuple_target=8160"]
    memory = Memory.objects.get(user=nurse)

    assert partition_by_owner(16) is True
    assert partition_by_owner(16) is False  # already done

    assert set(DISTRIBUTED) <= partitioned_tables()
    for table in DISTRIBUTED:
        assert len(leaves(table)) == 16, table
        assert _names(table) == names[table], table
        assert all(_storage(leaf) == storage[table] for leaf in leaves(table)), table
    kept = Memory.objects.select_related("source_turn").get(user=nurse, pk=memory.pk)
    assert (kept.text, kept.source_turn.content) == (memory.text, "I'm a nurse.")
    assert MemoryKey.objects.filter(user=nurse, memory=memory).exists()
    # the identity goes on from the rows kept
    assert remember(nurse, user_turn(nurse, "I live in Lisbon.")).stored == 1
    assert Memory.objects.filter(user=nurse).latest("id").pk > memory.pk


def test_a_row_still_cannot_point_at_another_users_row(nurse, django_user_model):
    partition_by_owner(16)
    other = django_user_model.objects.create_user("omar")
    turn = Memory.objects.get(user=nurse).source_turn
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.create(
            user=other, text="The user is a nurse.", embedding=[0.1] * 3, embedding_model="test",
            content_hash="x", last_seen=turn.created_at, source_turn=turn,
        )  # fmt: skip


def test_the_read_path_is_unchanged_and_reads_one_partition_of_each_table(nurse, django_user_model):
    before = [r.memory.text for r in recall(nurse, "What do I do for a living?")]
    partition_by_owner(16)
    assert [r.memory.text for r in recall(nurse, "What do I do for a living?")] == before == ["The user is a nurse."]
    assert recall(django_user_model.objects.create_user("omar"), "What do I do for a living?") == []

    memory = Memory.objects.get(user=nurse)
    (plan,) = plans_of(
        lambda: memory_nearest(
            user=nurse, vector=memory.embedding, embedding_model=memory.embedding_model, k=5, min_sim=-1.0
        )
    )
    read = ("memoryapp_memory", "memoryapp_memorykey", "chat_conversation", "chat_turn")
    assert plan.partitions == dict.fromkeys(read, 1)
