"""Walk every URL the project declares, as the owner, as another user and anonymously.

A route that takes an object id must answer another user's id with 404 and nothing else
(403 would confirm that the object exists). A route that needs no id must not show one
user's data to another. Every route but the declared public ones needs a login. A new URL
is covered as soon as it is added: the walk reads the URL configuration itself.
"""

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token

from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory

pytestmark = pytest.mark.django_db(transaction=True)

PUBLIC = {"signup", "login", "admin_login", "logout", "api_token", "api_schema", "api_docs"}
METHODS = ("get", "post", "patch", "delete")
SECRET = "The user lives in Lisbon."


def _patterns(resolvers, prefix=""):
    for entry in resolvers:
        if isinstance(entry, URLResolver):
            if entry.app_name == "admin":
                continue  # staff only: walked separately below
            yield from _patterns(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.name


def _routes():
    return sorted(set(_patterns(get_resolver().url_patterns)))


@pytest.fixture
def alices_world(alice):
    conversation = conversation_create(user=alice)
    for text in ("I live in Lisbon.", "Which city do I live in?"):
        chat_reply(user=alice, user_turn=chat_user_turn(user=alice, conversation=conversation, content=text))
    memory = Memory.objects.get(user=alice, text=SECRET)
    return {"public_id": conversation.public_id, "seq": "1", "memory_id": str(memory.pk)}


def _url(pattern: str, ids: dict) -> str:
    url = "/" + pattern
    for name, value in ids.items():
        for converter in ("str", "int"):
            url = url.replace(f"<{converter}:{name}>", value)
    assert "<" not in url, f"the walk does not know how to fill {pattern}"
    return url


def test_the_walk_covers_every_declared_route():
    names = {name for _, name in _routes()}
    assert {"memory_detail", "memory_restore", "turn_reply", "turn_memory", "memory_export", "turn_list"} <= names
    assert len(_routes()) >= 29


def test_another_users_id_is_always_a_404(alices_world, bob):
    client = Client(raise_request_exception=False)
    client.force_login(bob)
    api = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")
    checked = 0
    for pattern, _name in _routes():
        if "<" not in pattern:
            continue
        url = _url(pattern, alices_world)
        as_bob = api if url.startswith("/api/") else client
        statuses = {method: getattr(as_bob, method)(url).status_code for method in METHODS}
        assert set(statuses.values()) <= {404, 405}, (url, statuses)
        assert 404 in statuses.values(), (url, statuses)
        checked += 1
    assert checked >= 10
    assert Memory.objects.get(text=SECRET).deleted_at is None  # and nothing was changed


def test_routes_without_an_id_never_show_another_users_data(alices_world, bob):
    client = Client(raise_request_exception=False)
    client.force_login(bob)
    api = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")
    for pattern, name in _routes():
        if "<" in pattern or name in {"logout", "account_delete", "memory_forget_all"}:
            continue
        url = "/" + pattern
        as_bob = api if url.startswith("/api/") else client
        for response in (as_bob.get(url), as_bob.get(url, {"s": "Which city do I live in?"})):
            assert response.status_code < 500, url
            assert SECRET not in response.content.decode(errors="replace"), url
            assert alices_world["public_id"] not in response.content.decode(errors="replace"), url


def test_every_route_but_the_public_ones_needs_a_login(alices_world):
    anonymous = Client(raise_request_exception=False)
    for pattern, name in _routes():
        url = _url(pattern, alices_world)
        for method in METHODS:
            response = getattr(anonymous, method)(url)
            assert response.status_code < 500, (url, method)
            if name in PUBLIC or response.status_code == 405:
                continue
            if url.startswith("/api/"):
                assert response.status_code in (401, 403), (url, method, response.status_code)
            else:
                assert response.status_code == 302 and "/accounts/login/" in response["Location"], (url, method)


def test_the_admin_refuses_anyone_but_staff(alices_world, alice):
    memory_id = alices_world["memory_id"]
    client = Client()
    client.force_login(alice)
    for url in ["/admin/", f"/admin/memoryapp/memory/{memory_id}/change/", "/admin/chat/turn/"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url
