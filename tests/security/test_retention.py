from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from chat.models import Conversation, Turn
from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryRecall
from memoryapp.services import memory_correct, memory_soft_delete
from tests.factories import chat

pytestmark = pytest.mark.django_db(transaction=True)


def _rows(user):
    return {
        "conversations": Conversation.objects.filter(user=user).count(),
        "turns": Turn.objects.filter(user=user).count(),
        "memories": Memory.objects.filter(user=user).count(),
        "evidence": MemoryEvidence.objects.filter(user=user).count(),
        "recalls": MemoryRecall.objects.filter(user=user).count(),
        "events": MemoryEvent.objects.filter(user=user).count(),
    }


def test_purge_removes_only_memories_deleted_before_the_retention_period(alice, capsys):
    chat(alice, "I live in Lisbon.", "I'm vegetarian.", "Which city do I live in?")
    old = Memory.objects.get(user=alice, text="The user lives in Lisbon.")
    recent = Memory.objects.get(user=alice, text="The user is vegetarian.")
    memory_soft_delete(user=alice, memory_id=old.pk)
    memory_soft_delete(user=alice, memory_id=recent.pk)
    Memory.objects.filter(pk=old.pk).update(deleted_at=timezone.now() - timedelta(days=31))
    assert MemoryRecall.objects.filter(memory=old).exists()

    call_command("purge_deleted", "--older-than", "30d")

    assert not Memory.objects.filter(pk=old.pk).exists()
    assert not MemoryEvidence.objects.filter(memory_id=old.pk).exists()
    assert not MemoryRecall.objects.filter(memory_id=old.pk).exists()
    assert not MemoryEvent.objects.filter(memory_id=old.pk).exists()
    assert Memory.objects.filter(pk=recent.pk).exists()  # deleted, but within retention
    assert "1 Memory" in capsys.readouterr().out


def test_purge_rejects_a_malformed_age():
    with pytest.raises(CommandError, match="like 30d"):
        call_command("purge_deleted", "--older-than", "thirty days")


def test_deleting_an_account_erases_all_its_data_and_nothing_of_others(alice, bob):
    chat(alice, "Call me Priya, and I'm always in UTC.", "What timezone am I in?")
    chat(bob, "I live in Berlin.", "Where do I live?")
    name = Memory.objects.get(user=alice, text="The user's name is Priya.")
    memory_correct(user=alice, memory_id=name.pk, text="The user's name is Priya Nair.")
    before_bob = _rows(bob)
    assert all(_rows(alice).values())

    client = Client()
    client.force_login(alice)
    refused = client.post(reverse("account_delete"), {"password": "wrong"})
    assert refused.status_code == 400 and "nothing was deleted" in refused.content.decode()

    response = client.post(reverse("account_delete"), {"password": "alice-password-1"})

    assert response.status_code == 302
    assert not type(alice).objects.filter(pk=alice.pk).exists()
    assert set(_rows(alice).values()) == {0}
    assert _rows(bob) == before_bob


def test_account_erasure_also_removes_the_admin_log_of_its_memories_and_its_rate_limit_rows(alice, staff):
    from django.contrib.admin.models import LogEntry

    from core.models import RateLimitCounter

    chat(alice, "I'm allergic to penicillin.")
    memory = Memory.objects.get(user=alice)
    admin = Client()
    admin.force_login(staff)
    admin.post(
        reverse("admin:memoryapp_memory_changelist"),
        {"action": "soft_delete_memories", "_selected_action": [memory.pk]},
    )
    assert LogEntry.objects.filter(object_repr__icontains="penicillin").exists()
    Client().post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert RateLimitCounter.objects.filter(key__contains="alice").exists()

    client = Client()
    client.force_login(alice)
    assert client.post(reverse("account_delete"), {"password": "alice-password-1"}).status_code == 302

    assert not LogEntry.objects.filter(object_repr__icontains="penicillin").exists()
    assert not RateLimitCounter.objects.filter(key__contains="alice").exists()
    assert not RateLimitCounter.objects.filter(key__endswith=f"user:{alice.pk}").exists()
