"""API token lifetime: expiry, rotation on password change, revoke (issue 14, finding 3)."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-passphrase-91"


@pytest.fixture
def dana(django_user_model):
    return django_user_model.objects.create_user(username="dana", password=PASSWORD)


def obtain(password: str = PASSWORD) -> dict:
    response = APIClient().post("/api/auth/token/", {"username": "dana", "password": password}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def memories(key: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/memories/")


def test_a_token_is_the_same_until_it_expires_and_says_when(dana, settings):
    first, second = obtain(), obtain()
    assert first["token"] == second["token"]
    created = Token.objects.get(user=dana).created
    assert first["expires_at"].startswith(str((created + timedelta(days=settings.API_TOKEN_DAYS)).date()))
    assert memories(first["token"]).status_code == 200


def test_an_expired_token_is_refused_and_a_new_one_is_issued(dana, settings):
    old = obtain()["token"]
    Token.objects.filter(user=dana).update(created=timezone.now() - timedelta(days=settings.API_TOKEN_DAYS, minutes=1))

    response = memories(old)
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    assert not Token.objects.filter(key=old).exists()

    # a program renewing with its password may still send the stale header
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    renewed = client.post("/api/auth/token/", {"username": "dana", "password": PASSWORD}, format="json")
    assert renewed.status_code == 200 and renewed.json()["token"] != old
    assert memories(renewed.json()["token"]).status_code == 200


def test_changing_the_password_on_the_page_revokes_the_token(dana):
    old = obtain()["token"]
    page = Client()
    page.force_login(dana)
    response = page.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "another-long-passphrase-7",
            "new_password2": "another-long-passphrase-7",
        },
    )
    assert response.status_code == 302
    assert memories(old).status_code == 401
    assert obtain("another-long-passphrase-7")["token"] != old


def test_any_password_change_revokes_but_a_sign_in_does_not(dana):
    old = obtain()["token"]
    Client().login(username="dana", password=PASSWORD)  # saves last_login only
    assert memories(old).status_code == 200

    dana.set_password("another-long-passphrase-7")  # as the admin and `changepassword` do
    dana.save()
    assert memories(old).status_code == 401


def test_a_holder_revokes_its_own_token(dana):
    key = obtain()["token"]
    anonymous = APIClient().delete("/api/auth/token/")
    assert anonymous.status_code == 401

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.delete("/api/auth/token/").status_code == 204
    assert memories(key).status_code == 401
    assert not Token.objects.filter(user=dana).exists()
