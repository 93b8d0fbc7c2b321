import pytest
from django.test import Client
from django.urls import reverse

from chat.models import Turn
from chat.services import conversation_create

# Fixed windows restart on the period's boundary: a year's window does not restart during a test,
# where a minute's lets a request through whenever a test runs across the minute's end.
WINDOW = 365 * 86_400

pytestmark = pytest.mark.django_db


def test_chat_posts_beyond_the_limit_get_a_clear_429_and_nothing_is_saved(alice, bob, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat": (3, WINDOW, "messages")}
    conversation = conversation_create(user=alice)
    client = Client()
    client.force_login(alice)
    url = reverse("chat:turn_create", args=[conversation.public_id])
    statuses = [client.post(url, {"content": f"hi {n}"}, HTTP_HX_REQUEST="true").status_code for n in range(5)]

    assert statuses == [200, 200, 200, 429, 429]
    limited = client.post(url, {"content": "one more"}, HTTP_HX_REQUEST="true")
    assert limited["Retry-After"].isdigit()
    assert "Too many messages. Please wait" in limited.content.decode()
    assert Turn.objects.filter(conversation=conversation).count() == 3

    other = Client()
    other.force_login(bob)
    bobs = conversation_create(user=bob)
    assert (
        other.post(
            reverse("chat:turn_create", args=[bobs.public_id]), {"content": "hi"}, HTTP_HX_REQUEST="true"
        ).status_code
        == 200
    )


def test_sign_in_attempts_are_limited_per_username(alice, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, WINDOW, "sign-in attempts")}
    client = Client()
    attempts = [client.post(reverse("login"), {"username": "alice", "password": "wrong"}).status_code for _ in range(3)]
    assert attempts == [200, 200, 429]
    # even the right password waits out the window: guessing gains nothing
    assert client.post(reverse("login"), {"username": "alice", "password": "alice-password-1"}).status_code == 429


def test_the_api_shares_the_chat_limit_and_answers_429_with_retry_after(alice, settings):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat": (2, WINDOW, "messages")}
    conversation = conversation_create(user=alice)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    url = f"/api/conversations/{conversation.public_id}/turns/"
    statuses = [client.post(url, {"content": f"hi {n}"}, format="json").status_code for n in range(3)]
    assert statuses == [201, 201, 429]
    limited = client.post(url, {"content": "again"}, format="json")
    assert limited["Retry-After"].isdigit() and "throttled" in limited.json()["detail"]
    assert Turn.objects.filter(conversation=conversation, role="user").count() == 2


def test_token_requests_are_limited_like_sign_ins(alice, settings):
    from rest_framework.test import APIClient

    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, WINDOW, "sign-in attempts")}
    client = APIClient()
    statuses = [
        client.post("/api/auth/token/", {"username": "alice", "password": "wrong"}, format="json").status_code
        for _ in range(3)
    ]
    assert statuses == [400, 400, 429]


def test_admin_sign_in_is_limited_like_the_page_sign_in(staff, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, WINDOW, "sign-in attempts")}
    client = Client()
    url = reverse("admin:login")
    attempts = [client.post(url, {"username": "staff", "password": "wrong"}).status_code for _ in range(3)]
    assert attempts == [200, 200, 429]
    assert client.post(url, {"username": "staff", "password": "staff-password-1"}).status_code == 429


def test_token_guesses_count_against_the_target_account_whoever_asks(alice, bob, make_user, settings):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, WINDOW, "sign-in attempts")}
    statuses = []
    for attacker in (bob, make_user("carol")):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=attacker).key}")
        for _ in range(2):
            guess = {"username": "alice", "password": "wrong"}
            statuses.append(client.post("/api/auth/token/", guess, format="json").status_code)
    assert statuses == [400, 400, 429, 429]


def test_password_change_attempts_are_limited_per_account(alice, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (3, WINDOW, "sign-in attempts")}
    client = Client()
    client.force_login(alice)
    guess = {
        "old_password": "wrong",
        "new_password1": "a-new-long-passphrase-3",
        "new_password2": "a-new-long-passphrase-3",
    }
    statuses = [client.post(reverse("password_change"), guess).status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]  # a wrong current password re-renders the form, then 429
    assert "Too many sign-in attempts" in client.post(reverse("password_change"), guess).content.decode()


@pytest.mark.parametrize("way_in", ["page", "admin", "token"])
def test_a_compatibility_form_of_the_name_shares_its_accounts_sign_in_limit(make_user, settings, way_in):
    from rest_framework.test import APIClient

    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (3, WINDOW, "sign-in attempts")}
    make_user("u13", is_staff=True)
    url = {"page": reverse("login"), "admin": reverse("admin:login"), "token": "/api/auth/token/"}[way_in]

    def attempt(username: str, password: str, address: str) -> int:
        if way_in == "token":
            client = APIClient(REMOTE_ADDR=address)
            return client.post(url, {"username": username, "password": password}, format="json").status_code
        return Client(REMOTE_ADDR=address).post(url, {"username": username, "password": password}).status_code

    assert [attempt("u13", "wrong", "198.51.100.1") for _ in range(3)] == [200 if way_in != "token" else 400] * 3
    # the right password, with a fullwidth "ｕ" and from another address: still the same account's budget
    assert attempt("ｕ13", "u13-password-1", "198.51.100.2") == 429
    assert attempt("Ｕ１３", "u13-password-1", "198.51.100.3") == 429


def test_the_token_endpoint_reads_a_name_as_the_sign_in_form_does(make_user):
    from rest_framework.test import APIClient

    make_user("u13")
    answer = APIClient().post("/api/auth/token/", {"username": "ｕ13", "password": "u13-password-1"}, format="json")
    assert answer.status_code == 200
    assert answer["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    "body",
    [
        '{"username": "\\ud800", "password": "x"}',
        '{"username": "alice", "password": "\\udfff"}',
        '{"username": "alice", "password": "x", "\\ud800": 1}',
    ],
)
def test_a_lone_surrogate_in_a_token_request_is_a_400(alice, body):
    from rest_framework.test import APIClient

    answer = APIClient().post("/api/auth/token/", body, content_type="application/json")
    assert answer.status_code == 400
    assert "surrogate" in answer.json()["detail"]
