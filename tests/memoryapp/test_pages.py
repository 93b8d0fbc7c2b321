import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memoryapp.models import Memory, MemoryEvent
from memoryapp.read.recall import recall
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def alices_memories(alice):
    remember(alice, user_turn(alice, "Call me Priya, and I'm always in UTC."))
    remember(alice, user_turn(alice, "I live in Lisbon."))
    return {m.text: m for m in Memory.objects.filter(user=alice)}


def _routes(memory_id: int):
    return [
        ("get", reverse("memoryapp:memory_list"), None),
        ("get", reverse("memoryapp:memory_list") + "?s=where", None),
        ("get", reverse("memoryapp:memory_detail", args=[memory_id]), None),
        ("post", reverse("memoryapp:memory_edit", args=[memory_id]), {"text": "The user lives in Porto."}),
        ("post", reverse("memoryapp:memory_delete", args=[memory_id]), {}),
        ("post", reverse("memoryapp:memory_undo", args=[memory_id]), {}),
        ("get", reverse("memoryapp:memory_export"), None),
        ("get", reverse("memoryapp:memory_forget_all"), None),
        ("post", reverse("memoryapp:memory_forget_all"), {"confirm": "on"}),
    ]


def test_anonymous_visitors_are_sent_to_log_in(alices_memories):
    memory = alices_memories["The user lives in Lisbon."]
    for method, url, data in _routes(memory.pk):
        response = getattr(Client(), method)(url, data)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url


def test_another_users_memory_ids_are_404_and_nothing_changes(alices_memories, bob_client):
    memory = alices_memories["The user lives in Lisbon."]
    for method, url, data in _routes(memory.pk):
        if "memory_id" not in url and str(memory.pk) not in url:
            continue
        response = getattr(bob_client, method)(url, data)
        assert response.status_code == 404, url
    memory.refresh_from_db()
    assert memory.text == "The user lives in Lisbon." and memory.deleted_at is None


def test_list_shows_only_the_owners_live_memories_newest_first(alice_client, bob_client, alices_memories):
    html = alice_client.get(reverse("memoryapp:memory_list")).content.decode()
    assert html.index("The user lives in Lisbon.") < html.index("The user&#x27;s name is Priya.")
    assert "3 memories" in html
    assert "Lisbon" not in bob_client.get(reverse("memoryapp:memory_list")).content.decode()


def test_list_queries_do_not_grow_with_memories(alice, alice_client, django_assert_max_num_queries):
    for city in ["Lisbon", "Porto", "Paris", "Berlin", "Rome", "Madrid", "Vienna", "Oslo"]:
        remember(alice, user_turn(alice, f"I like {city}."))
    with django_assert_max_num_queries(6):
        response = alice_client.get(reverse("memoryapp:memory_list"))
    assert response.content.decode().count('class="memory"') == 8


def test_text_filter_and_semantic_search(alice_client, alices_memories):
    filtered = alice_client.get(reverse("memoryapp:memory_list"), {"q": "lisbon"}, **HTMX).content.decode()
    assert "The user lives in Lisbon." in filtered and "Priya" not in filtered
    assert "<html" not in filtered  # htmx gets the rows partial

    found = alice_client.get(reverse("memoryapp:memory_list"), {"s": "Which city do I live in?"}).content.decode()
    assert "The user lives in Lisbon." in found and "How close</summary>" in found  # its score, out of the way
    assert "Priya" not in found  # under the floor


def test_the_longest_search_the_page_takes_fits_the_servers_request_line(alice_client, alices_memories):
    from urllib.parse import urlencode

    from gunicorn.config import LimitRequestLine

    from memoryapp.views import FILTER_MAX_CHARS, SEARCH_MAX_CHARS

    url = reverse("memoryapp:memory_list")
    widest = "\U0001f600"  # four UTF-8 bytes, each %-escaped in the URL
    query = urlencode({"q": widest * FILTER_MAX_CHARS, "s": widest * SEARCH_MAX_CHARS, "page": "99"})
    assert len(f"GET {url}?{query} HTTP/1.1") <= LimitRequestLine.default
    assert alice_client.get(url, {"s": "где я живу? " * 20}).status_code == 200  # 240 characters
    too_long = alice_client.get(url, {"s": "где я живу? " * 21})
    assert too_long.status_code == 400
    assert "A search by meaning is at most 250 characters (this has 252)." in too_long.content.decode()
    filtered = alice_client.get(url, {"q": "x" * 81}, **HTMX)
    assert filtered.status_code == 400 and "A filter is at most 80 characters" in filtered.content.decode()


def test_delete_takes_effect_on_the_very_next_recall_and_undo_restores(alice, alice_client, alices_memories):
    memory = alices_memories["The user lives in Lisbon."]
    assert [r.memory.pk for r in recall(alice, "Which city do I live in?")] == [memory.pk]

    response = alice_client.post(reverse("memoryapp:memory_delete", args=[memory.pk]), **HTMX)
    assert response.status_code == 200
    assert "Deleted “The user lives in Lisbon.”" in response.content.decode() and "Undo" in response.content.decode()
    assert recall(alice, "Which city do I live in?") == []

    undo = alice_client.post(reverse("memoryapp:memory_undo", args=[memory.pk]), **HTMX)
    assert f'id="memory-{memory.pk}"' in undo.content.decode() and "Delete" in undo.content.decode()
    assert [r.memory.pk for r in recall(alice, "Which city do I live in?")] == [memory.pk]
    assert list(MemoryEvent.objects.filter(memory=memory).values_list("action", flat=True)) == ["deleted", "restored"]


def test_restore_is_refused_after_the_restore_period(alice_client, alices_memories, settings):
    memory = alices_memories["The user lives in Lisbon."]
    alice_client.post(reverse("memoryapp:memory_delete", args=[memory.pk]))
    Memory.objects.filter(pk=memory.pk).update(
        deleted_at=timezone.now() - timedelta(days=settings.MEMORY_RESTORE_DAYS, seconds=1)
    )
    response = alice_client.post(reverse("memoryapp:memory_undo", args=[memory.pk]), **HTMX)
    assert "can no longer be restored" in response.content.decode()
    memory.refresh_from_db()
    assert memory.deleted_at is not None


def test_correcting_re_embeds_keeps_provenance_and_records_the_edit(alice, alice_client, alices_memories):
    memory = alices_memories["The user lives in Lisbon."]
    source_turn = memory.source_turn_id
    response = alice_client.post(
        reverse("memoryapp:memory_edit", args=[memory.pk]), {"text": "The user lives in Porto."}, **HTMX
    )
    assert response.status_code == 200 and "Corrected." in response.content.decode()

    memory.refresh_from_db()
    assert memory.text == "The user lives in Porto." and memory.source_turn_id == source_turn
    assert [r.memory.pk for r in recall(alice, "Do I live in Porto?")] == [memory.pk]
    event = MemoryEvent.objects.get(memory=memory, action="corrected")
    assert (event.old_text, event.new_text, event.actor_id) == (
        "The user lives in Lisbon.",
        "The user lives in Porto.",
        alice.pk,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   ", "cannot be empty"),
        ("x" * 301, "at most 300 characters"),
        ("The user&#x27;s name is Priya.", "Another memory already says this"),
    ],
    ids=["blank", "too-long", "duplicate"],
)
def test_bad_corrections_are_refused_with_a_message(alice_client, alices_memories, text, message):
    memory = alices_memories["The user lives in Lisbon."]
    text = text.replace("&#x27;", "'")
    response = alice_client.post(reverse("memoryapp:memory_edit", args=[memory.pk]), {"text": text}, **HTMX)
    assert response.status_code == 422 and message in response.content.decode()
    memory.refresh_from_db()
    assert memory.text == "The user lives in Lisbon."


def test_forget_everything_needs_confirmation(alice, alice_client, alices_memories):
    refused = alice_client.post(reverse("memoryapp:memory_forget_all"), {})
    assert refused.status_code == 400 and "Tick the box" in refused.content.decode()
    assert Memory.objects.filter(user=alice, deleted_at__isnull=True).count() == 3

    alice_client.post(reverse("memoryapp:memory_forget_all"), {"confirm": "on"})
    assert not Memory.objects.filter(user=alice, deleted_at__isnull=True).exists()
    assert recall(alice, "Which city do I live in?", min_sim=-1) == []


def test_export_holds_only_the_callers_memories_with_provenance(alice, bob, alice_client, alices_memories):
    remember(bob, user_turn(bob, "I live in Berlin."))
    response = alice_client.get(reverse("memoryapp:memory_export"))
    assert response["Content-Disposition"].startswith('attachment; filename="memories-alice-')
    data = json.loads(response.content)
    assert data["user"] == "alice"
    assert sorted(m["memory"]["text"] for m in data["memories"]) == sorted(alices_memories)
    lisbon = next(m for m in data["memories"] if m["memory"]["text"] == "The user lives in Lisbon.")
    assert lisbon["memory"]["source"]["turn_seq"] == 1 and lisbon["evidence"][0]["turn_text"] == "I live in Lisbon."
    assert "embedding" not in json.dumps(data).replace("embedding_model", "")


def test_trace_page_links_the_source_turn_and_lists_restatements(alice, alice_client, alices_memories):
    memory = alices_memories["The user lives in Lisbon."]
    again = user_turn(alice, "Yes, I live in Lisbon.")
    remember(alice, again)
    html = alice_client.get(reverse("memoryapp:memory_detail", args=[memory.pk])).content.decode()
    source = memory.source_turn
    assert f"/c/{source.conversation.public_id}/?turn={source.seq}#turn-{source.seq}" in html
    assert f"{again.conversation.public_id} #{again.seq}" in html and "said again" in html
    assert "Times said</dt><dd>2" in html


def test_trace_page_shows_the_wording_a_fuller_restatement_replaced(alice, alice_client, fake_llm):
    fake_llm.facts("The user plays the cello.")
    remember(alice, user_turn(alice, "I play the cello."))
    fake_llm.facts("The user plays the cello in a string quartet.")
    remember(alice, user_turn(alice, "I play the cello in a string quartet."))
    (memory,) = Memory.objects.filter(user=alice, deleted_at__isnull=True)
    html = alice_client.get(reverse("memoryapp:memory_detail", args=[memory.pk])).content.decode()
    assert (
        "Restated with more detail: “The user plays the cello.” → “The user plays the cello in a string quartet.”"
        in html
    )


def test_forget_everything_says_the_conversations_stay_and_offers_to_delete_them(alice, bob, alice_client):
    from chat.models import Conversation
    from chat.services import conversation_create

    page = alice_client.get(reverse("memoryapp:memory_forget_all")).content.decode()
    assert "Your conversations stay." in page and "still reads its earlier messages" in page
    assert reverse("chat:conversation_delete_all") in page
    done = alice_client.post(reverse("memoryapp:memory_forget_all"), {"confirm": "on"}, follow=True)
    assert "the assistant still reads a conversation" in done.content.decode()

    for user in (alice, alice, bob):
        conversation = conversation_create(user=user, title="")
        user_turn(user, "I live in Lisbon.", conversation=conversation)
    confirm = alice_client.get(reverse("chat:conversation_delete_all")).content.decode()
    assert "Delete all 2 conversations?" in confirm
    refused = alice_client.post(reverse("chat:conversation_delete_all"), {}, follow=True)
    assert "Tick the box" in refused.content.decode() and Conversation.objects.filter(user=alice).count() == 2

    deleted = alice_client.post(reverse("chat:conversation_delete_all"), {"confirm": "on"}, follow=True)
    assert "Deleted 2 conversations." in deleted.content.decode()
    assert not Conversation.objects.filter(user=alice).exists()
    assert Conversation.objects.filter(user=bob).count() == 1  # the owner predicate
