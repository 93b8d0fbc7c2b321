"""The distributed tables as PostgreSQL hash partitions by owner: the single-node rehearsal of
spreading them over nodes (core.distribution), used by the benchmark's partitioned variant.

`partition_by_owner` turns each distributed table into a table partitioned by `HASH (user_id)`
with `partitions` leaves, in one transaction, keeping its rows, columns, identity, checks,
constraints, indexes and foreign keys under their own names, and its storage parameters on each
leaf. PostgreSQL accepts that only because every key and unique index of these tables includes
`user_id` and every foreign key between them joins on it (tests/config/test_schema_distribution.py).
A statement that names its owner then reads one leaf (partition pruning); one that names a row by
id alone, as Django's save and delete do, reads every leaf's index on id.

Not a migration: the application's schema stays flat, and a database is partitioned on purpose.
"""

from __future__ import annotations

from django.db import connection, transaction

from core.distribution import DISTRIBUTED

# Constraints and indexes of a table, each with the statement that makes it again. Unique and
# primary keys come as constraints; the indexes are those backing no constraint.
_CONSTRAINTS = """
    SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
    WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'x') ORDER BY contype, conname
"""
_INDEXES = """
    SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i
    WHERE i.indrelid = %s::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
    ORDER BY i.indexrelid::regclass::text
"""
# Every foreign key from or to one of the tables.
_FOREIGN_KEYS = """
    SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
    WHERE contype = 'f' AND (conrelid::regclass::text = ANY(%s) OR confrelid::regclass::text = ANY(%s))
    ORDER BY conrelid::regclass::text, conname
"""
_IDENTITY = "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attidentity <> ''"
# Storage parameters (toast_tuple_target keeps the vectors inline: memoryapp 0005), which LIKE
# does not copy and a partitioned table does not hold: each partition is given them.
_STORAGE = "SELECT array_to_string(reloptions, ', ') FROM pg_class WHERE oid = %s::regclass"


def partitioned_tables() -> set[str]:
    """The tables of this database that are partitioned."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT partrelid::regclass::text FROM pg_partitioned_table")
        return {name for (name,) in cursor.fetchall()}


def leaves(table: str) -> list[str]:
    """A partitioned table's partitions, by name."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = %s::regclass", [table])
        return sorted(name for (name,) in cursor.fetchall())


def partition_by_owner(partitions: int = 16) -> bool:
    """Hash-partition every distributed table by its owner into `partitions` leaves; False when
    they already are."""
    tables = list(DISTRIBUTED)
    if set(tables) <= partitioned_tables():
        return False
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # checks still pending would forbid ALTER TABLE
        cursor.execute(_FOREIGN_KEYS, [tables, tables])
        foreign_keys = cursor.fetchall()
        for table, name, _ in foreign_keys:
            cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        rebuilt = [_repartition(cursor, table, DISTRIBUTED[table], partitions) for table in tables]
        for statements in rebuilt:
            for statement in statements:
                cursor.execute(statement)
        for table, name, definition in foreign_keys:
            cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
    return True


def _repartition(cursor, table: str, column: str, partitions: int) -> list[str]:  # noqa: ANN001 - a DB-API cursor
    """Move `table`'s rows into a new table partitioned by `column`, drop the old one, and return
    the statements that make its keys and indexes again (run once every table is moved, since
    index names are unique across the schema)."""
    cursor.execute(_CONSTRAINTS, [table])
    constraints = [f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}" for name, definition in cursor]
    cursor.execute(_INDEXES, [table])
    indexes = [definition for (definition,) in cursor.fetchall()]
    cursor.execute(_IDENTITY, [table])
    identities = [name for (name,) in cursor.fetchall()]
    cursor.execute(_STORAGE, [table])
    (storage,) = cursor.fetchone()
    with_storage = f" WITH ({storage})" if storage else ""
    flat = f"{table}_flat"
    cursor.execute(f"ALTER TABLE {table} RENAME TO {flat}")
    cursor.execute(
        f"CREATE TABLE {table} (LIKE {flat} INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING GENERATED"
        f" INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS) PARTITION BY HASH ({column})"
    )
    for remainder in range(partitions):
        cursor.execute(
            f"CREATE TABLE {table}_p{remainder:02d} PARTITION OF {table}"
            f" FOR VALUES WITH (MODULUS {partitions}, REMAINDER {remainder}){with_storage}"
        )
    cursor.execute(f"INSERT INTO {table} SELECT * FROM {flat}")
    for name in identities:
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence(%s, %s), COALESCE(MAX({name}), 0) + 1, false) FROM {table}",
            [table, name],
        )
    cursor.execute(f"DROP TABLE {flat}")
    return constraints + indexes
