"""The schema can be spread over database nodes by user (core.distribution): read from the live
schema's catalogs, not from the models, so a migration that breaks the rule fails here."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from chat.models import Conversation, Turn
from core.distribution import COORDINATOR, DISTRIBUTED, REFERENCE
from memoryapp.models import Memory, MemoryEvidence, MemoryKey, MemoryNeed

pytestmark = pytest.mark.django_db

_COLUMNS = """(SELECT array_agg(a.attname ORDER BY k.ord) FROM unnest({keys}) WITH ORDINALITY k(num, ord)
               JOIN pg_attribute a ON a.attrelid = {rel} AND a.attnum = k.num)"""
_CONSTRAINTS = f"""
    SELECT con.conname, con.contype,
           con.conrelid::regclass::text, {_COLUMNS.format(keys="con.conkey", rel="con.conrelid")},
           con.confrelid::regclass::text, {_COLUMNS.format(keys="con.confkey", rel="con.confrelid")}
    FROM pg_constraint con JOIN pg_namespace ns ON ns.oid = con.connamespace
    WHERE ns.nspname = 'public' AND con.contype IN ('p', 'u', 'f')
"""
# Unique indexes that back no constraint (a partial unique index, say).
_UNIQUE_INDEXES = f"""
    SELECT i.indexrelid::regclass::text, i.indrelid::regclass::text,
           {_COLUMNS.format(keys="i.indkey", rel="i.indrelid")}
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
    WHERE ns.nspname = 'public' AND i.indisunique
      AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
"""


def _rows(sql: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def _tables() -> set[str]:
    rows = _rows(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace"
        " WHERE ns.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
    )
    return {name for (name,) in rows}


def test_every_table_has_a_place_and_one_only():
    placed = [*DISTRIBUTED, *REFERENCE, *COORDINATOR]
    assert len(placed) == len(set(placed))
    assert _tables() - set(placed) == set(), "a table that is neither distributed, reference nor coordinator"
    assert set(placed) - _tables() == set(), "a placed table that does not exist"
    # every table holding a user_id column is the user's data or says why it stays whole
    for table in _tables():
        columns = {name for (name,) in _rows(f"SELECT attname FROM pg_attribute WHERE attrelid = '{table}'::regclass")}
        assert "user_id" not in columns or table in DISTRIBUTED or table in COORDINATOR, table


def key_violations() -> list[str]:
    """Primary keys, unique constraints and unique indexes of distributed tables without the owner."""
    found = []
    for name, kind, table, columns, _target, _target_columns in _rows(_CONSTRAINTS):
        if table in DISTRIBUTED and kind in ("p", "u") and DISTRIBUTED[table] not in columns:
            found.append(f"{table}: {name} {columns}")
    for name, table, columns in _rows(_UNIQUE_INDEXES):
        if table in DISTRIBUTED and DISTRIBUTED[table] not in columns:
            found.append(f"{table}: unique index {name} {columns}")
    keyed = {table for _n, kind, table, *_ in _rows(_CONSTRAINTS) if kind == "p"}
    return found + [f"{table}: no primary key" for table in set(DISTRIBUTED) - keyed]


def reference_violations() -> list[str]:
    """Foreign keys Citus could not keep: between distributed tables not joined on the owner,
    from a distributed table to a coordinator table, into distributed tables from elsewhere."""
    found = []
    for name, kind, table, columns, target, target_columns in _rows(_CONSTRAINTS):
        if kind != "f":
            continue
        if table in DISTRIBUTED and target in DISTRIBUTED:
            if (DISTRIBUTED[table], DISTRIBUTED[target]) not in set(zip(columns, target_columns, strict=True)):
                found.append(f"{name}: {table} {columns} -> {target} {target_columns}")
        elif table in DISTRIBUTED and target not in REFERENCE:
            found.append(f"{name}: a distributed table refers to {target}, kept on the coordinator")
        elif table not in DISTRIBUTED and target in DISTRIBUTED:
            found.append(f"{name}: {table} refers into a distributed table")
        elif table in REFERENCE and target not in REFERENCE:
            found.append(f"{name}: a reference table refers to {target}")
    return found


def test_keys_and_unique_constraints_of_distributed_tables_include_the_owner():
    assert key_violations() == []
    assert len([row for row in _rows(_CONSTRAINTS) if row[2] in DISTRIBUTED and row[1] == "u"]) >= 7


def test_foreign_keys_join_on_the_owner_or_point_at_a_reference_table():
    assert reference_violations() == []


def test_every_reference_between_a_users_rows_is_enforced_by_the_database():
    """Django's single-column constraints are off on these relations (db_constraint=False):
    each must have its composite foreign key instead."""
    enforced = {(t, cols[1]) for _n, k, t, cols, target, _tc in _rows(_CONSTRAINTS) if k == "f" and len(cols) == 2}
    relations = [
        (model._meta.db_table, field.column)
        for model in apps.get_models()
        if model._meta.db_table in DISTRIBUTED
        for field in model._meta.concrete_fields
        if field.is_relation and field.related_model._meta.db_table in DISTRIBUTED
    ]
    assert len(relations) >= 19
    missing = [relation for relation in relations if relation not in enforced]
    assert missing == []


def test_a_row_cannot_point_at_another_users_row(django_user_model):
    alice = django_user_model.objects.create_user("alice")
    bob = django_user_model.objects.create_user("bob")
    alices = Conversation.objects.create(user=alice)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(IntegrityError), transaction.atomic():
        Turn.objects.create(user=bob, conversation=alices, seq=1, role=Turn.Role.USER, content="hello")
    turn = Turn.objects.create(user=alice, conversation=alices, seq=1, role=Turn.Role.USER, content="I'm a nurse")
    with pytest.raises(IntegrityError), transaction.atomic():
        _memory(bob, "The user is a nurse.", source=turn)


def _memory(user, text: str, *, source: Turn | None = None) -> Memory:
    return Memory.objects.create(
        user=user,
        text=text,
        embedding=[0.1, 0.2, 0.3],
        embedding_model="test",
        content_hash=text,
        last_seen=timezone.now(),
        source_conversation=source.conversation if source else None,
        source_turn=source,
    )


_BEFORE = [("chat", "0011_turn_vector_index"), ("memoryapp", "0014_reference_history")]


def test_the_migrations_that_key_by_owner_keep_existing_rows():
    """Back to the schema before the owner keys, rows written there, and forward again."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no checks left pending before ALTER TABLE
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate(_BEFORE)
    assert len(key_violations()) >= 9 and len(reference_violations()) >= 19  # what the check catches
    then = MigrationExecutor(connection).loader.project_state(_BEFORE).apps  # the models of that schema
    owner = get_user_model().objects.create_user("carol")
    conversation = then.get_model("chat", "Conversation").objects.create(user_id=owner.pk, title="before")
    turn = then.get_model("chat", "Turn").objects.create(
        user_id=owner.pk, conversation=conversation, seq=1, role=Turn.Role.USER, content="I'm a nurse"
    )
    memory = then.get_model("memoryapp", "Memory").objects.create(
        user_id=owner.pk,
        text="The user is a nurse.",
        embedding=[0.1, 0.2, 0.3],
        embedding_model="test",
        keys_model="test",
        content_hash="nurse",
        last_seen=timezone.now(),
        source_conversation=conversation,
        source_turn=turn,
    )
    for text, kind in (("What do I do?", MemoryKey.Kind.NEED), ("Am I a nurse?", MemoryKey.Kind.QUESTION)):
        then.get_model("memoryapp", "MemoryKey").objects.create(
            memory=memory, user_id=owner.pk, text=text, kind=kind, embedding=[0.1, 0.2, 0.3], embedding_model="test"
        )
    then.get_model("memoryapp", "MemoryEvidence").objects.create(
        memory=memory, user_id=owner.pk, conversation=conversation, turn=turn, created=True, gate_similarity=0.9
    )

    MigrationExecutor(connection).migrate(leaves)

    kept = Memory.objects.select_related("source_turn").get(user=owner, pk=memory.pk)
    assert (kept.text, kept.source_turn.content) == ("The user is a nurse.", "I'm a nurse")
    assert MemoryKey.objects.filter(user=owner, memory_id=memory.pk).count() == 2
    assert list(MemoryNeed.objects.filter(user=owner).values_list("text", flat=True)) == ["What do I do?"]  # 0018
    assert kept.asked  # 0019
    assert MemoryEvidence.objects.filter(user=owner, memory_id=memory.pk, turn_id=turn.pk).count() == 1
    assert key_violations() == [] and reference_violations() == []
