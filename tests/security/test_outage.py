"""A database outage, as the app sees one: its connection drops and its address refuses new ones.

The API answers JSON 503 with Retry-After, pages a plain page that says so, and a user turn
saved before the outage is named in the 503 with the URL that retries its reply.
"""

import socket
from contextlib import contextmanager

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.models import Turn
from chat.services import conversation_create

pytestmark = pytest.mark.django_db(transaction=True)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def database_unreachable(settings_dict=None):
    """Close the connection and point it at an address nobody listens on: every statement of
    the requests inside the block fails to connect, as it would with the server stopped."""
    settings_dict = settings_dict if settings_dict is not None else connection.settings_dict
    saved = {key: settings_dict[key] for key in ("HOST", "PORT")}
    connection.close()
    settings_dict.update(HOST="127.0.0.1", PORT=str(_closed_port()))
    try:
        yield
    finally:
        settings_dict.update(saved)
        connection.close()


@pytest.fixture
def api(alice):
    client = APIClient(raise_request_exception=False)  # answer as a server would, not re-raise
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    return client


def test_the_api_answers_json_503_with_retry_after(api):
    with database_unreachable():
        answer = api.get("/api/memories/")
    assert answer.status_code == 503
    assert answer["Content-Type"] == "application/json"
    assert answer["Retry-After"].isdigit()
    assert "briefly unavailable" in answer.json()["detail"]


def test_a_page_answers_a_plain_503_that_says_the_service_is_briefly_unavailable(alice_client):
    with database_unreachable():
        answer = alice_client.get(reverse("memoryapp:memory_list"))
    assert answer.status_code == 503
    assert answer["Retry-After"].isdigit()
    page = answer.content.decode()
    assert "Briefly unavailable" in page and "Server Error" not in page


def test_a_reply_cut_off_by_an_outage_names_the_saved_turn_and_where_to_retry(alice, api, fake_llm):
    conversation = conversation_create(user=alice)
    settings_dict = connection.settings_dict
    outage = database_unreachable(settings_dict)
    # The outage starts while the model writes the reply: the turn is saved, the reply is not.
    fake_llm.reply("Lisbon is lovely.")
    fake_llm.chat_queue[-1].before = lambda: _terminate_others_and(outage.__enter__)

    try:
        answer = api.post(
            f"/api/conversations/{conversation.public_id}/turns/", {"content": "I live in Lisbon."}, format="json"
        )
    finally:
        outage.__exit__(None, None, None)

    assert answer.status_code == 503
    assert answer["Retry-After"].isdigit()
    body = answer.json()
    assert "Your message was saved; retry to ask again." in body["detail"]
    assert body["retry_url"].endswith(f"/api/conversations/{conversation.public_id}/turns/1/reply/")
    assert list(Turn.objects.filter(conversation=conversation).values_list("role", "content")) == [
        (Turn.Role.USER, "I live in Lisbon.")
    ]
    # the database is back: the retry gets the reply
    fake_llm.reply("Lisbon is lovely.")
    retried = api.post(body["retry_url"])
    assert retried.status_code == 200
    assert retried.json()["reply"]["content"] == "Lisbon is lovely."


def _terminate_others_and(then) -> None:
    """From the fake model's thread: end every other session of the test database (the request's
    among them) with a connection of its own, then make reconnecting fail."""
    import psycopg

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as own:
        own.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    then()
