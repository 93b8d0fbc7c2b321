"""How the schema spreads over database nodes: by user.

Every table of users' data is **distributed** by `user_id`: all of one user's rows live on one
node, and a turn's statements (each names its owner) go to that node alone. Citus, and
PostgreSQL's own hash partitioning, allow that only when every primary key and unique
constraint includes the distribution column, and every foreign key between two distributed
tables joins on it. So these tables key by (user_id, id), and a reference from one of a user's
rows to another is a composite foreign key, (user_id, turn_id) -> chat_turn (user_id, id); it
also keeps a row from pointing at another user's. The rest is small, or looked up before the
user is known:
- **reference** tables are copied to every node: the accounts (`auth_user`, read on every
  request, written at sign-up and sign-in) and Django's content types and permissions;
- **coordinator** tables stay on one node: sessions and API tokens (found by their secret
  before the user is known), rate-limit counters, the task queue and worker leases, and staff
  records.

`tests/config/test_schema_distribution.py` reads the live schema against this; docs/scale-out.md
gives the plan. The migration steps below are what the migrations that keyed the tables by owner
ran (chat 0013, memoryapp 0016): change them only with a new migration.
"""

from __future__ import annotations

from django.db import migrations

# The distributed tables, with the column each is distributed by.
DISTRIBUTED = {
    "memoryapp_memory": "user_id",
    "memoryapp_memorykey": "user_id",
    "memoryapp_memoryneed": "user_id",
    "memoryapp_memoryevidence": "user_id",
    "memoryapp_memoryrecall": "user_id",
    "memoryapp_memoryevent": "user_id",
    "memoryapp_memorysettings": "user_id",
    "chat_conversation": "user_id",
    "chat_turn": "user_id",
    "chat_historyrecall": "user_id",
}

# Copied whole to every node. `auth_user` is distributed's partner: every user_id above
# refers to it, and a foreign key from a distributed table to a reference table may be on any
# column (a memory event's actor, a staff member, is another user).
REFERENCE = {
    "auth_user": "every request reads its user; written at sign-up and sign-in only",
    "auth_group": "staff roles: a handful of rows",
    "auth_permission": "Django's permissions: a few rows a model",
    "auth_group_permissions": "staff roles' permissions",
    "django_content_type": "one row a model",
}

# Kept on the coordinator node, with why.
COORDINATOR = {
    "django_session": "found by its key on every request, before the user is known",
    "core_signedinsession": "a session's owner, found by the session's key",
    "authtoken_token": "found by its key on every API request, before the user is known",
    "auth_user_groups": "staff accounts' roles",
    "auth_user_user_permissions": "staff accounts' permissions",
    "django_admin_log": "staff actions in the admin",
    "core_ratelimitcounter": "counted by client key (an address, a user name) across users",
    "chat_workerlease": "the memory workers' leases: one row a worker",
    "django_tasks_database_dbtaskresult": "the memory write queue, shared by every worker",
    "django_migrations": "the schema's own history",
}


def primary_key_with_owner(table: str) -> migrations.RunSQL:
    """The migration step that keys a table by (user_id, id) in place of (id), and back. A plain index on id
    stays, for the statements that address a row by id alone (Django's save and delete)."""
    forward = f"""
        ALTER TABLE {table} DROP CONSTRAINT {table}_pkey;
        ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (user_id, id);
        CREATE INDEX {table}_id ON {table} (id);
    """
    backward = f"""
        DROP INDEX {table}_id;
        ALTER TABLE {table} DROP CONSTRAINT {table}_pkey;
        ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (id);
    """
    return migrations.RunSQL(forward, backward)


def owner_foreign_key(table: str, column: str, target: str) -> migrations.RunSQL:
    """The migration step that makes a reference between two of one user's rows, (user_id, column) -> target
    (user_id, id), and drops it going back. Checked at commit, as Django's own foreign keys are; a null
    column is not checked (MATCH SIMPLE), so Django's SET_NULL still works."""
    name = f"{table}_{column}_owner_fk"
    forward = f"""
        ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY (user_id, {column})
        REFERENCES {target} (user_id, id) DEFERRABLE INITIALLY DEFERRED;
    """
    return migrations.RunSQL(forward, f"ALTER TABLE {table} DROP CONSTRAINT {name};")
