"""Address-keyed limits behind a TLS proxy: the client's address, not the proxy's, and not one the client wrote."""

import pytest
from werkzeug.test import Client as WSGIClient

from config.wsgi import application_behind

# Fixed windows restart on the period's boundary: a year's window does not restart during a test,
# where a minute's lets a request through whenever a test runs across the minute's end.
WINDOW = 365 * 86_400

# Every request reaches the app from the proxy; the proxy appends the address it saw to X-Forwarded-For.
PROXY = "10.0.0.2"
ATTACKER, VICTIM = "203.0.113.9", "198.51.100.7"


def _token_request(app, username: str, password: str, forwarded_for: str | None) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    response = WSGIClient(app).post(
        "/api/auth/token/",
        json={"username": username, "password": password},
        headers=headers,
        environ_base={"REMOTE_ADDR": PROXY},
    )
    return response.status_code


@pytest.fixture
def tight_login_limit(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, WINDOW, "sign-in attempts")}


@pytest.mark.django_db(transaction=True)
def test_without_trusted_proxies_every_client_behind_the_proxy_shares_one_limit(alice, tight_login_limit):
    app = application_behind(0)
    guesses = [_token_request(app, f"nobody{n}", "wrong", ATTACKER) for n in range(3)]
    assert guesses == [400, 400, 429]
    # the finding: a stranger's guesses lock alice out, because both arrive from the proxy's address
    assert _token_request(app, "alice", "alice-password-1", VICTIM) == 429


@pytest.mark.django_db(transaction=True)
def test_behind_one_trusted_proxy_the_limit_keys_on_the_client_the_proxy_saw(alice, tight_login_limit):
    app = application_behind(1)
    guesses = [_token_request(app, f"nobody{n}", "wrong", ATTACKER) for n in range(3)]
    assert guesses == [400, 400, 429]

    assert _token_request(app, "alice", "alice-password-1", VICTIM) == 200
    # an address the attacker writes itself is ignored: the proxy appended the one it saw
    assert _token_request(app, "nobody9", "wrong", f"{VICTIM}, {ATTACKER}") == 429
    # a request that bypassed the proxy (no header) is keyed on its peer address, not on a claim
    assert _token_request(app, "nobody10", "wrong", None) == 400


@pytest.mark.django_db(transaction=True)
def test_a_request_with_fewer_entries_than_trusted_proxies_keeps_its_peer_address(alice, tight_login_limit):
    app = application_behind(2)
    # two proxies should have written two entries; one entry cannot be trusted, so the peer address counts
    guesses = [_token_request(app, f"nobody{n}", "wrong", f"192.0.2.{n}") for n in range(3)]
    assert guesses == [400, 400, 429]
    assert _token_request(app, "alice", "alice-password-1", f"{VICTIM}, {PROXY}") == 200
