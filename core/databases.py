"""Scratch databases on the configured PostgreSQL server, for the tools that must not touch
the app's own data: the quality evaluation, the benchmarks and the load driver.

The switch is the one Django's test runner makes: point the default connection at another
database NAME for the duration of a block, and back afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import quote

from django.conf import settings
from django.core.management import call_command
from django.db import connection

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


def list_databases(prefix: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY datname", [prefix + "%"])
        return [row[0] for row in cursor.fetchall()]


def database_url(name: str) -> str:
    """A libpq URI for database `name` on the server the default connection uses (socket or
    TCP); dj-database-url reads it too, so a child process can be pointed at the database."""
    connection.ensure_connection()  # starts or joins the embedded server and learns its socket
    params = connection.get_connection_params()
    host = params.get("host") or ""
    user = quote(params.get("user") or "postgres", safe="")
    password = params.get("password")
    auth = f"{user}:{quote(password, safe='')}" if password else user
    if host.startswith("/"):
        port = f"&port={params['port']}" if params.get("port") else ""
        return f"postgresql://{auth}@/{name}?host={quote(host, safe='')}{port}"
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{auth}@{host}{port}/{name}"


def _switch(name: str) -> None:
    connection.close()
    settings.DATABASES["default"]["NAME"] = name
    connection.settings_dict["NAME"] = name


@dataclass(frozen=True)
class ScratchDatabase:
    name: str
    url: str
    created: bool  # False when a kept database was reused


@contextmanager
def scratch_database(name: str, *, keep: bool = False) -> Iterator[ScratchDatabase]:
    """Use database `name`, migrated, as the default database inside the block.

    Without `keep` the database is made fresh (a leftover of the same name is dropped first)
    and dropped afterwards; with it, an existing one is reused and left in place (benchmark
    datasets that take minutes to seed). The previous database is restored on any exit.
    """
    _checked(name)
    if not keep:
        drop_database(name)
    created = create_database(name)
    url = database_url(name)
    previous = connection.settings_dict["NAME"]
    _switch(name)
    try:
        call_command("migrate", verbosity=0, interactive=False)
        yield ScratchDatabase(name=name, url=url, created=created)
    finally:
        _switch(previous)
        if not keep:
            drop_database(name)
