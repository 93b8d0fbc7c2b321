"""Malformed input on the REST API: a clear 400 with a message, nothing saved, never a 500."""

import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from chat.models import Turn
from chat.services import conversation_create

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def api(alice):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    return client


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b'{"content": "hi"', "application/json", "JSON parse error"),
        (b'{"content": 123}', "application/json", "content"),
        (b'{"content": ["a", "b"]}', "application/json", "content"),
        (b'{"content": null}', "application/json", "content"),
        (b'{"content": "   "}', "application/json", "Say something first"),
        (b'{"content": "\xff\xfe"}', "application/json", "JSON parse error"),
        (b'{"content": "' + b"x" * 8001 + b'"}', "application/json", "limited to 8,000 characters"),
        (b'{"content": ""}', "application/json", "Say something first"),
        (b"content=hi", "text/plain", "Unsupported media type"),
        (b"content=hi", "application/x-www-form-urlencoded", "Unsupported media type"),
        (b"--b\r\n445--b--\r\n", "multipart/form-data; boundary=b", "Unsupported media type"),
    ],
    ids=[
        "truncated",
        "number",
        "list",
        "null",
        "blank",
        "invalid-utf8",
        "too-long",
        "empty",
        "wrong-media-type",
        "form",
        "garbled-multipart",
    ],
)
def test_bad_turn_bodies_are_refused_with_a_message(alice, api, body, content_type, message):
    conversation = conversation_create(user=alice)
    response = api.generic("POST", f"/api/conversations/{conversation.public_id}/turns/", body, content_type)
    assert response.status_code in (400, 415), response.content
    assert message in response.content.decode(errors="replace")
    assert not Turn.objects.filter(conversation=conversation).exists()


def test_a_huge_body_is_refused_without_a_500(alice, api):
    conversation = conversation_create(user=alice)
    body = b'{"content": "' + b"x" * 3_000_000 + b'"}'
    response = api.generic("POST", f"/api/conversations/{conversation.public_id}/turns/", body, "application/json")
    assert response.status_code in (400, 413)
    assert not Turn.objects.filter(conversation=conversation).exists()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/memories/search/", b'{"probe": 5}'),
        ("/api/memories/search/", b'{"probe": ""}'),
        ("/api/memories/search/", b"[]"),
        ("/api/conversations/", b'{"title": "' + b"t" * 500 + b'"}'),
    ],
)
def test_wrong_types_elsewhere_are_400(api, path, body):
    assert api.generic("POST", path, body, "application/json").status_code == 400


def test_production_settings_pass_the_deploy_check():
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "a-long-random-production-secret-key-with-enough-entropy-0123456789",
        "DJANGO_ALLOWED_HOSTS": "memory.example.org",
        "DATABASE_URL": "postgres://memory@localhost:5432/memory",  # never connected to by the check
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_production_settings_refuse_to_start_without_a_secret_key():
    env = {"PATH": "/usr/bin:/bin", "DJANGO_DEBUG": "0", "DATABASE_URL": "postgres://m@localhost/m"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0 and "DJANGO_SECRET_KEY must be set" in result.stderr
