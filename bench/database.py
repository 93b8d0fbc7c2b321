"""The benchmark's own databases on the app's PostgreSQL server.

Each dataset lives in a database of its own (`memory_bench_<name>`), created and migrated
here, so a benchmark never reads or writes the development or test data. The switch is
the one Django's test runner makes: point the default connection at another NAME.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

from django.conf import settings
from django.core.management import call_command
from django.db import connection

PREFIX = "memory_bench_"
_SAFE_NAME = re.compile(r"^[a-z0-9_]+$")


def _checked(name: str) -> str:
    if not _SAFE_NAME.match(name):
        raise ValueError(f"unsafe database name {name!r}")
    return name


def database_exists(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchone() is not None


def create_database(name: str) -> bool:
    """Create the database if it is missing; True when it was created."""
    if database_exists(name):
        return False
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{_checked(name)}"')
    return True


def drop_database(name: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{_checked(name)}" WITH (FORCE)')


def list_bench_databases() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s OR datname LIKE %s ORDER BY datname",
            [PREFIX + "%", "mem0_bench_%"],
        )
        return [row[0] for row in cursor.fetchall()]


def _switch(name: str) -> None:
    connection.close()
    settings.DATABASES["default"]["NAME"] = name
    connection.settings_dict["NAME"] = name


@contextmanager
def using_database(name: str, *, migrate: bool = True) -> Iterator[bool]:
    """Create (if needed), migrate and use `name` as the default database inside the block.

    Yields True when the database was created now. The previous database is restored on exit.
    """
    previous = connection.settings_dict["NAME"]
    created = create_database(name)
    _switch(name)
    try:
        if migrate:
            call_command("migrate", verbosity=0, interactive=False)
        yield created
    finally:
        _switch(previous)


def server_uri(database: str) -> str:
    """A libpq URI for `database` on the server the default connection uses (socket or TCP)."""
    connection.ensure_connection()
    params = connection.get_connection_params()
    host = params.get("host") or ""
    user = quote(params.get("user") or "postgres", safe="")
    password = params.get("password")
    auth = f"{user}:{quote(password, safe='')}" if password else user
    if host.startswith("/"):
        port = f"&port={params['port']}" if params.get("port") else ""
        return f"postgresql://{auth}@/{database}?host={quote(host, safe='')}{port}"
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{auth}@{host}{port}/{database}"
