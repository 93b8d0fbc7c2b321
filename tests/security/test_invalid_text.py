"""NUL bytes and runaway nesting get a 400 wherever text enters, and never reach a query."""

import json

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from chat.services import conversation_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    return client


def test_a_nul_in_a_query_string_is_a_400_on_the_page_and_the_api(alice_client, api):
    assert alice_client.get(reverse("memoryapp:memory_list"), {"q": "lis\x00bon"}).status_code == 400
    assert alice_client.get(reverse("memoryapp:memory_list"), {"s": "lis\x00bon"}).status_code == 400
    assert api.get("/api/memories/", {"q": "lis\x00bon"}).status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "/c/c-%00abc/",
        "/c/c-%00abc/delete/",
        "/api/conversations/c-%00abc/",
        "/api/conversations/c-%00abc/turns/",
        "/api/conversations/c-%00abc/turns/1/reply/",
    ],
)
def test_a_nul_in_a_path_id_is_a_400(alice, alice_client, path):
    client = alice_client if path.startswith("/c/") else APIClient(raise_request_exception=False)
    if path.startswith("/api/"):
        client.force_authenticate(alice)
    assert client.get(path).status_code == 400


def test_a_nul_in_the_sign_in_username_is_refused_by_the_form_and_still_counted():
    from core.models import RateLimitCounter

    client = Client(raise_request_exception=False)
    response = client.post(reverse("login"), {"username": "ali\x00ce", "password": "x"})
    assert response.status_code == 200 and response.context["form"].errors  # the form says what is wrong
    assert "_auth_user_id" not in client.session
    assert RateLimitCounter.objects.filter(key="login:username:alice").exists()


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_deeply_nested_json_is_a_400_on_every_json_endpoint(alice, api, depth):
    body = "[" * depth + "]" * depth
    conversation = conversation_create(user=alice)
    for url in [
        "/api/memories/search/",
        f"/api/conversations/{conversation.public_id}/turns/",
        "/api/conversations/",
    ]:
        response = api.post(url, body, content_type="application/json")
        assert response.status_code == 400, url
    anonymous = APIClient(raise_request_exception=False)
    assert anonymous.post("/api/auth/token/", body, content_type="application/json").status_code == 400


def test_ordinary_nesting_still_parses(alice, api):
    body = json.dumps({"probe": "Which city do I live in?", "extra": [[[{"a": [1, 2]}]]]})
    assert api.post("/api/memories/search/", body, content_type="application/json").status_code == 200
