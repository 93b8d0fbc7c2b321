"""Recently deleted: a user's memories deleted in the last MEMORY_RESTORE_DAYS days, each with how
it went and a Restore; after that the purge removes them for good."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.services import chat_user_turn, conversation_create
from memoryapp.models import Memory
from memoryapp.selectors import memory_export, memory_recently_deleted
from memoryapp.services import memory_soft_delete
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def deleted(alice):
    """Three memories gone three ways: deleted on the page, forgotten in chat, replaced."""
    for text in ["I'm a pediatric nurse.", "I play the cello.", "I live in Porto.", "I'm vegetarian."]:
        remember(alice, user_turn(alice, text))
    cello = Memory.objects.get(user=alice, text="The user plays the cello.")
    memory_soft_delete(user=alice, memory_id=cello.pk)
    chat_user_turn(user=alice, conversation=conversation_create(user=alice), content="Please forget that I'm a nurse.")
    remember(alice, user_turn(alice, "I moved to Lisbon last month."))
    return alice


def _ago(memory: Memory, **delta) -> None:
    Memory.objects.filter(pk=memory.pk).update(deleted_at=timezone.now() - timedelta(**delta))


def test_each_deleted_memory_is_listed_with_how_it_went(deleted):
    listed = {memory.text: memory.how for memory in memory_recently_deleted(user=deleted)}
    assert listed == {
        "The user plays the cello.": "you deleted it",
        "The user is a pediatric nurse.": "forgotten in chat",
        "The user lives in Porto.": "replaced by a newer fact",
    }


def test_a_memory_deleted_weeks_ago_is_restored_and_one_past_the_period_is_gone(deleted, alice_client, settings):
    cello = Memory.objects.get(user=deleted, text="The user plays the cello.")
    nurse = Memory.objects.get(user=deleted, text="The user is a pediatric nurse.")
    _ago(cello, days=settings.MEMORY_RESTORE_DAYS - 1)
    _ago(nurse, days=settings.MEMORY_RESTORE_DAYS, seconds=1)
    page = alice_client.get(reverse("memoryapp:memory_deleted")).content.decode()
    assert "The user plays the cello." in page and "The user is a pediatric nurse." not in page

    restored = alice_client.post(reverse("memoryapp:memory_undo", args=[cello.pk]), {"in": "deleted"}, follow=True)
    assert "Restored “The user plays the cello.”" in restored.content.decode()
    assert Memory.objects.get(pk=cello.pk).deleted_at is None
    refused = alice_client.post(reverse("memoryapp:memory_undo", args=[nurse.pk]), {"in": "deleted"}, follow=True)
    assert "can no longer be restored" in refused.content.decode()

    call_command("purge_deleted")  # the default: the restore period
    assert not Memory.objects.filter(pk=nurse.pk).exists()
    assert Memory.objects.filter(user=deleted, text="The user lives in Porto.").exists()  # still restorable


def test_the_api_lists_them_for_their_owner_only_and_restores(deleted, bob):
    def api(user):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return client

    listed = api(deleted).get("/api/memories/deleted/").json()
    assert listed["count"] == 3
    assert {row["text"]: row["how"] for row in listed["results"]}["The user plays the cello."] == "you deleted it"
    assert api(bob).get("/api/memories/deleted/").json()["count"] == 0
    cello = Memory.objects.get(user=deleted, text="The user plays the cello.")
    _ago(cello, hours=5)
    assert api(bob).post(f"/api/memories/{cello.pk}/restore/").status_code == 404
    assert api(deleted).post(f"/api/memories/{cello.pk}/restore/").status_code == 200


def test_the_export_marks_deleted_memories(deleted):
    exported = {row["memory"]["text"]: row["memory"]["deleted_at"] for row in memory_export(user=deleted)["memories"]}
    assert exported["The user plays the cello."] is not None
    assert exported["The user is vegetarian."] is None
