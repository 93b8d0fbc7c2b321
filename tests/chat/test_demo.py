"""The demo account shows the product on first sign-in: two conversations and the memories they
made, written through the real write path, so every page and trace link of it works."""

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from chat.management.commands.ensure_demo_user import DEMO_PASSWORD, DEMO_USERNAME
from chat.models import Conversation
from memoryapp.models import Memory, MemoryEvent, MemoryRecall

# The demo's writes run when each turn commits, as they do outside a test.
pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_has_conversations_and_what_memory_made_of_them(django_user_model):
    call_command("ensure_demo_user")
    demo = django_user_model.objects.get(username=DEMO_USERNAME)
    assert Conversation.objects.filter(user=demo).count() == 2
    live = {m.text: m for m in Memory.objects.filter(user=demo, deleted_at__isnull=True)}
    assert all(m.source_turn_id or m.added_by_hand for m in live.values())  # provenance on each
    assert max(m.times_seen for m in live.values()) >= 2  # a restated fact
    assert any(m.standing for m in live.values())  # a standing instruction
    events = set(MemoryEvent.objects.filter(user=demo).values_list("action", flat=True))
    assert {MemoryEvent.Action.SUPERSEDED, MemoryEvent.Action.CORRECTED} <= events
    assert MemoryRecall.objects.filter(user=demo).exists()  # a reply that used a memory

    call_command("ensure_demo_user")  # a second start adds nothing
    assert Conversation.objects.filter(user=demo).count() == 2


def test_every_page_of_the_demo_opens(django_user_model):
    call_command("ensure_demo_user")
    client = Client()
    assert client.post(reverse("login"), {"username": DEMO_USERNAME, "password": DEMO_PASSWORD}).status_code == 302
    demo = django_user_model.objects.get(username=DEMO_USERNAME)
    pages = [reverse("chat:conversation_list"), reverse("memoryapp:memory_list"), reverse("memoryapp:memory_profile")]
    pages += [reverse("chat:conversation_detail", args=[c.public_id]) for c in Conversation.objects.filter(user=demo)]
    pages += [reverse("memoryapp:memory_detail", args=[m.pk]) for m in Memory.objects.filter(user=demo)]
    for page in pages:
        assert client.get(page).status_code == 200, page
