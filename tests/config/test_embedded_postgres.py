"""The embedded PostgreSQL server starts with this checkout's settings (its buffer pool)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection

from config.embedded_postgres.server import SETTINGS_FILE, write_settings

embedded = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "config.embedded_postgres", reason="DATABASE_URL names another server"
)


@embedded
@pytest.mark.django_db
def test_the_embedded_server_runs_with_the_configured_buffer_pool():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint"
            " FROM pg_settings WHERE name = 'shared_buffers'"
        )
        size = cursor.fetchone()[0]
    assert size == settings.DATABASES["default"]["EMBEDDED_SHARED_BUFFERS_MB"] << 20


def test_the_settings_file_is_rewritten_and_included_once(tmp_path):
    (tmp_path / "postgresql.conf").write_text("# initdb's file\nmax_connections = 100\n")
    write_settings(tmp_path, shared_buffers_mb=512)
    write_settings(tmp_path, shared_buffers_mb=256)
    conf = (tmp_path / "postgresql.conf").read_text().splitlines()
    assert conf.count(f"include_if_exists = '{SETTINGS_FILE}'") == 1
    assert "max_connections = 100" in conf
    written = (tmp_path / SETTINGS_FILE).read_text().splitlines()
    assert "shared_buffers = '256MB'" in written
    assert not any("512MB" in line for line in written)
