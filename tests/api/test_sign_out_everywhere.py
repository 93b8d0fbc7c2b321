"""Signing out everywhere: every session of the account on every device, and its API token."""

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.urls import reverse

from chat.services import account_erase
from core.models import SignedInSession
from tests.api.test_tokens import PASSWORD, memories, obtain

pytestmark = pytest.mark.django_db


@pytest.fixture
def dana(django_user_model):
    return django_user_model.objects.create_user(username="dana", password=PASSWORD)


def signed_in(username: str, password: str) -> Client:
    client = Client()
    response = client.post(reverse("login"), {"username": username, "password": password})
    assert response.status_code == 302, response.content
    return client


def test_signing_out_everywhere_ends_every_session_and_the_token(dana, bob):
    laptop, phone = signed_in("dana", PASSWORD), signed_in("dana", PASSWORD)
    bobs = signed_in("bob", "bob-password-1")
    token = obtain()["token"]
    assert phone.get(reverse("memoryapp:memory_list")).status_code == 200

    page = laptop.get(reverse("sign_out_everywhere"))
    assert page.status_code == 200 and "every other device" in page.content.decode()
    response = laptop.post(reverse("sign_out_everywhere"), follow=True)
    assert "2 sessions ended and the API token revoked" in response.content.decode()

    for device in (laptop, phone):
        assert device.get(reverse("memoryapp:memory_list")).url.startswith(reverse("login"))
    assert memories(token).status_code == 401
    assert not SignedInSession.objects.filter(user=dana).exists()
    # another account's session is untouched
    assert bobs.get(reverse("memoryapp:memory_list")).status_code == 200


def test_the_account_page_links_to_it_and_a_get_changes_nothing(dana):
    laptop = signed_in("dana", PASSWORD)
    assert reverse("account") in laptop.get(reverse("memoryapp:memory_list")).content.decode()  # the header
    assert reverse("sign_out_everywhere") in laptop.get(reverse("account")).content.decode()
    laptop.get(reverse("sign_out_everywhere"))
    assert laptop.get(reverse("memoryapp:memory_list")).status_code == 200


def test_deleting_the_account_ends_its_sessions_on_other_devices(dana):
    phone = signed_in("dana", PASSWORD)
    key = phone.session.session_key
    account_erase(user=dana)
    assert not Session.objects.filter(session_key=key).exists()


def test_signing_out_forgets_that_session(dana):
    laptop = signed_in("dana", PASSWORD)
    assert SignedInSession.objects.filter(user=dana).count() == 1
    laptop.post(reverse("logout"))
    assert not SignedInSession.objects.filter(user=dana).exists()


def test_sessions_signed_in_before_the_table_existed_are_recorded_by_the_migration(dana, bob):
    from importlib import import_module

    from django.apps import apps

    migration = import_module("core.migrations.0002_signed_in_session")
    signed_in("dana", PASSWORD), signed_in("bob", "bob-password-1")
    Client().get(reverse("login"))  # an anonymous session, if any, is nobody's
    SignedInSession.objects.all().delete()

    migration.record_live_sessions(apps, None)
    assert sorted(SignedInSession.objects.values_list("user__username", flat=True)) == ["bob", "dana"]
