import pytest
from django.test import Client
from django.urls import reverse

from chat.models import Turn
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def test_chat_posts_beyond_the_limit_get_a_clear_429_and_nothing_is_saved(alice, bob, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat": (3, 60, "messages")}
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
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, 60, "sign-in attempts")}
    client = Client()
    attempts = [client.post(reverse("login"), {"username": "alice", "password": "wrong"}).status_code for _ in range(3)]
    assert attempts == [200, 200, 429]
    # even the right password waits out the window: guessing gains nothing
    assert client.post(reverse("login"), {"username": "alice", "password": "alice-password-1"}).status_code == 429
