from __future__ import annotations

import json

import pytest
from django.urls import reverse
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

LIST = reverse("memory_api:memory_list")
SEARCH = reverse("memory_api:memory_search")


def test_a_token_from_username_and_password_authenticates_a_program(anonymous, alice, lisbon):
    response = anonymous.post(reverse("api_token"), {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 200
    token = response.json()["token"]

    program = APIClient()
    program.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    listed = program.get(LIST)
    assert listed.status_code == 200 and [m["id"] for m in listed.json()["results"]] == [lisbon.pk]
    assert program.post(SEARCH, {"probe": "Where do I live?"}, format="json").status_code == 200  # no CSRF


def test_wrong_password_gets_no_token_and_a_wrong_token_is_401(anonymous, alice):
    response = anonymous.post(reverse("api_token"), {"username": "alice", "password": "nope"})
    assert response.status_code == 400 and "token" not in response.json()
    anonymous.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")
    assert anonymous.get(LIST).status_code == 401


def test_session_auth_needs_the_csrf_token_for_writes(alice):
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.get(LIST).status_code == 200
    refused = browser.post(SEARCH, {"probe": "Where do I live?"}, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]


def test_schema_is_valid_openapi_and_covers_every_route(client):
    response = client.get(reverse("api_schema"), {"format": "json"})
    assert response.status_code == 200
    schema = json.loads(response.content)
    validate_schema(schema)
    assert set(schema["paths"]) == {
        "/api/auth/token/",
        "/api/conversations/",
        "/api/conversations/{public_id}/",
        "/api/conversations/{public_id}/turns/",
        "/api/conversations/{public_id}/turns/{seq}/reply/",
        "/api/conversations/{public_id}/turns/{seq}/redact/",
        "/api/memories/",
        "/api/memories/{memory_id}/",
        "/api/memories/{memory_id}/restore/",
        "/api/memories/deleted/",
        "/api/memories/export/",
        "/api/memories/search/",
        "/api/memories/settings/",
    }
    assert "embedding" not in schema["components"]["schemas"]["Memory"]["properties"]
    assert schema["paths"]["/api/memories/{memory_id}/"]["patch"]["responses"].keys() >= {"200", "400", "404", "409"}


def test_swagger_ui_is_served_locally_without_inline_script(client):
    page = client.get(reverse("api_docs"))
    html = page.content.decode()
    assert page.status_code == 200
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower() and "<script>" not in html
    script = client.get(reverse("api_docs"), {"script": ""})
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert reverse("api_schema") in script.content.decode()
