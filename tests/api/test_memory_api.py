from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryEvent
from memoryapp.read.recall import recall
from memoryapp.services import memory_soft_delete
from memoryapp.thresholds import recall_floor
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

LIST = reverse("memory_api:memory_list")
SEARCH = reverse("memory_api:memory_search")
EXPORT = reverse("memory_api:memory_export")
CITY_PROBE = "Which city do I live in?"


def detail_url(memory: Memory) -> str:
    return reverse("memory_api:memory_detail", args=[memory.pk])


def restore_url(memory: Memory) -> str:
    return reverse("memory_api:memory_restore", args=[memory.pk])


def keys(data) -> set[str]:
    """Every key anywhere in a JSON document."""
    if isinstance(data, dict):
        return set(data) | {k for v in data.values() for k in keys(v)}
    if isinstance(data, list):
        return {k for v in data for k in keys(v)}
    return set()


def test_anonymous_is_refused_on_every_memory_route_with_401(anonymous, lisbon):
    for method, url, data in [
        ("get", LIST, None),
        ("get", detail_url(lisbon), None),
        ("patch", detail_url(lisbon), {"text": "The user lives in Porto."}),
        ("delete", detail_url(lisbon), None),
        ("post", restore_url(lisbon), None),
        ("post", SEARCH, {"probe": CITY_PROBE}),
        ("get", EXPORT, None),
    ]:
        response = getattr(anonymous, method)(url, data, format="json")
        assert response.status_code == 401, (method, url)
        assert response["WWW-Authenticate"] == "Token"
    lisbon.refresh_from_db()
    assert lisbon.text == "The user lives in Lisbon." and lisbon.deleted_at is None


def test_another_users_memory_id_is_404_never_403(bob_api, alice, lisbon):
    for method, url, data in [
        ("get", detail_url(lisbon), None),
        ("patch", detail_url(lisbon), {"text": "The user lives in Porto."}),
        ("delete", detail_url(lisbon), None),
    ]:
        assert getattr(bob_api, method)(url, data, format="json").status_code == 404, (method, url)
    memory_soft_delete(user=alice, memory_id=lisbon.pk)
    assert bob_api.post(restore_url(lisbon)).status_code == 404

    lisbon.refresh_from_db()
    assert lisbon.text == "The user lives in Lisbon." and lisbon.deleted_at is not None
    assert list(MemoryEvent.objects.filter(memory=lisbon).values_list("action", flat=True)) == ["deleted"]


def test_collections_hold_only_the_callers_memories(bob_api, bob, lisbon):
    remember(bob, user_turn(bob, "I live in Oslo."))
    listed = bob_api.get(LIST).json()
    assert [m["text"] for m in listed["results"]] == ["The user lives in Oslo."]
    found = bob_api.post(SEARCH, {"probe": CITY_PROBE}, format="json").json()
    assert [hit["text"] for hit in found["results"]] == ["The user lives in Oslo."]
    exported = bob_api.get(EXPORT).json()
    assert [m["memory"]["text"] for m in exported["memories"]] == ["The user lives in Oslo."]


def test_list_is_newest_first_live_only_and_paginated(alice_api, alice):
    cities = [f"City{n}" for n in range(27)]
    for city in cities:
        remember(alice, user_turn(alice, f"I like {city}."))
    assert Memory.objects.filter(user=alice).count() == 27
    deleted = Memory.objects.get(user=alice, text="The user likes City0.")
    memory_soft_delete(user=alice, memory_id=deleted.pk)

    first = alice_api.get(LIST).json()
    assert first["count"] == 26 and len(first["results"]) == 25 and first["next"]
    assert first["results"][0]["text"] == "The user likes City26."
    second = alice_api.get(first["next"]).json()
    assert [m["text"] for m in second["results"]] == ["The user likes City1."]
    row = second["results"][0]
    assert row["source"]["turn_text"] == "I like City1." and row["source"]["turn_seq"] == 1
    assert row["deleted_at"] is None and row["times_seen"] == 1
    assert "embedding" not in keys(first)


@pytest.mark.parametrize("page", ["", "abc", "0", "3"])
def test_a_page_that_is_not_one_is_404(alice_api, alice, page):
    remember(alice, user_turn(alice, "I live in Lisbon."))
    response = alice_api.get(LIST, {"page": page})
    assert response.status_code == 404 and "Invalid page" in response.json()["detail"]


def test_list_filters_by_text(alice_api, alice, lisbon):
    remember(alice, user_turn(alice, "I'm vegetarian."))
    response = alice_api.get(LIST, {"q": "lisb"})
    assert [m["id"] for m in response.json()["results"]] == [lisbon.pk]


def test_list_queries_do_not_grow_with_rows(alice_api, alice, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    remember(alice, user_turn(alice, "I live in Lisbon."))
    with CaptureQueriesContext(connection) as one_row:
        alice_api.get(LIST)
    for n in range(30):
        remember(alice, user_turn(alice, f"I like Town{n}."))
    with django_assert_max_num_queries(len(one_row)):
        response = alice_api.get(LIST)
    assert len(response.json()["results"]) == 25
    assert len(one_row) <= 4  # session, user, count, page


def test_detail_traces_source_evidence_replies_and_history(alice_api, alice, lisbon):
    conversation = conversation_create(user=alice)
    question = chat_user_turn(user=alice, conversation=conversation, content=CITY_PROBE)
    chat_reply(user=alice, user_turn=question)
    remember(alice, user_turn(alice, "I live in Lisbon.", conversation))  # restated, as turn 3

    response = alice_api.get(detail_url(lisbon))
    assert response.status_code == 200
    data = response.json()
    assert data["memory"]["id"] == lisbon.pk and data["memory"]["times_seen"] == 2
    assert data["memory"]["source"] == {
        "conversation": lisbon.source_conversation.public_id,
        "turn_seq": 1,
        "turn_text": "I live in Lisbon.",
    }
    assert [(e["conversation"], e["turn_seq"], e["first_statement"]) for e in data["evidence"]] == [
        (lisbon.source_conversation.public_id, 1, True),
        (conversation.public_id, 3, False),
    ]
    (used,) = data["recalled_in"]
    assert (used["conversation"], used["probe_turn_seq"], used["reply_turn_seq"], used["rank"]) == (
        conversation.public_id,
        1,
        2,
        1,
    )
    assert 0.26 <= used["similarity"] <= 1.0
    assert data["history"] == []
    assert "embedding" not in keys(data)


def test_patch_corrects_reembeds_keeps_provenance_and_is_found_by_search(alice_api, alice, lisbon):
    response = alice_api.patch(detail_url(lisbon), {"text": "  The user lives in Porto. "}, format="json")

    assert response.status_code == 200
    data = response.json()
    assert data["memory"]["text"] == "The user lives in Porto."
    assert data["memory"]["source"]["turn_text"] == "I live in Lisbon."  # provenance kept
    assert [e["turn_seq"] for e in data["evidence"]] == [1]
    (event,) = data["history"]
    assert (event["action"], event["old_text"], event["new_text"]) == (
        "corrected",
        "The user lives in Lisbon.",
        "The user lives in Porto.",
    )
    stored = Memory.objects.get(pk=lisbon.pk)
    expected = get_embedder().embed(["The user lives in Porto."])[0]
    assert np.allclose(np.asarray(stored.embedding), expected, atol=1e-5)

    found = alice_api.post(SEARCH, {"probe": "Porto"}, format="json").json()["results"]
    assert found[0]["id"] == lisbon.pk and found[0]["text"] == "The user lives in Porto."


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": ""}, "A memory cannot be empty; delete it instead."),
        ({"text": "   "}, "A memory cannot be empty; delete it instead."),
        ({"text": "x" * 301}, "A memory is at most 300 characters (this has 301)."),
        ({}, "This field is required."),
        ({"text": "\x07\x08"}, "A memory must be 1 to 300 characters of text."),
    ],
    ids=["empty", "blank", "too-long", "missing", "control-characters"],
)
def test_patch_with_bad_text_is_400_with_a_clear_message(alice_api, lisbon, body, message):
    response = alice_api.patch(detail_url(lisbon), body, format="json")
    assert response.status_code == 400
    assert response.json() == {"text": [message]}
    lisbon.refresh_from_db()
    assert lisbon.text == "The user lives in Lisbon."


def test_patch_to_the_text_of_another_live_memory_is_409(alice_api, alice, lisbon):
    remember(alice, user_turn(alice, "I'm vegetarian."))
    response = alice_api.patch(detail_url(lisbon), {"text": "The user is vegetarian."}, format="json")
    assert response.status_code == 409
    assert response.json() == {"detail": "Another memory already says this."}


def test_delete_is_204_and_the_memory_is_gone_from_the_next_search_list_and_recall(alice_api, alice, lisbon):
    assert [h["id"] for h in alice_api.post(SEARCH, {"probe": CITY_PROBE}, format="json").json()["results"]] == [
        lisbon.pk
    ]

    response = alice_api.delete(detail_url(lisbon))

    assert response.status_code == 204 and response.content == b""
    assert alice_api.post(SEARCH, {"probe": CITY_PROBE}, format="json").json()["results"] == []
    assert alice_api.get(LIST).json()["count"] == 0
    assert recall(alice, CITY_PROBE) == []
    assert alice_api.delete(detail_url(lisbon)).status_code == 404  # already deleted
    assert alice_api.get(detail_url(lisbon)).json()["memory"]["deleted_at"] is not None  # still traceable


def test_restore_undoes_a_delete(alice_api, alice, lisbon):
    alice_api.delete(detail_url(lisbon))
    response = alice_api.post(restore_url(lisbon))
    assert response.status_code == 200
    assert response.json()["memory"]["deleted_at"] is None
    assert [e["action"] for e in response.json()["history"]] == ["deleted", "restored"]
    assert [r.memory.pk for r in recall(alice, CITY_PROBE)] == [lisbon.pk]


def test_restore_of_a_live_memory_or_after_the_restore_period_is_404(alice_api, lisbon, settings):
    assert alice_api.post(restore_url(lisbon)).status_code == 404
    alice_api.delete(detail_url(lisbon))
    Memory.objects.filter(pk=lisbon.pk).update(
        deleted_at=timezone.now() - timedelta(days=settings.MEMORY_RESTORE_DAYS, seconds=1)
    )
    response = alice_api.post(restore_url(lisbon))
    assert response.status_code == 404
    assert response.json() == {"detail": "This memory was deleted more than 30 days ago and can no longer be restored."}


def test_restore_after_the_fact_was_remembered_again_is_409(alice_api, alice, lisbon):
    alice_api.delete(detail_url(lisbon))
    remember(alice, user_turn(alice, "I live in Lisbon."))
    response = alice_api.post(restore_url(lisbon))
    assert response.status_code == 409
    assert response.json() == {"detail": "This fact has been remembered again since it was deleted."}


def test_search_returns_memories_with_similarity_and_rank(alice_api, alice, lisbon):
    remember(alice, user_turn(alice, "I'm vegetarian."))
    response = alice_api.post(SEARCH, {"probe": CITY_PROBE}, format="json")
    assert response.status_code == 200
    (hit,) = response.json()["results"]
    assert (hit["id"], hit["text"], hit["rank"]) == (lisbon.pk, "The user lives in Lisbon.", 1)
    assert 0.26 <= hit["similarity"] <= 1.0


@pytest.mark.parametrize("body", [{}, {"probe": ""}, {"probe": "   "}, {"probe": "x" * 2001}])
def test_search_without_a_usable_probe_is_400(alice_api, body):
    response = alice_api.post(SEARCH, body, format="json")
    assert response.status_code == 400 and "probe" in response.json()


def test_export_is_a_download_of_only_the_callers_rows_deleted_ones_included(alice_api, alice, bob, lisbon):
    remember(bob, user_turn(bob, "I live in Oslo."))
    memory_soft_delete(user=alice, memory_id=lisbon.pk)
    remember(alice, user_turn(alice, "I'm vegetarian."))

    response = alice_api.get(EXPORT)

    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="memories-alice-')
    data = response.json()
    assert data["user"] == "alice"
    assert [(m["memory"]["text"], m["memory"]["deleted_at"] is None) for m in data["memories"]] == [
        ("The user lives in Lisbon.", False),
        ("The user is vegetarian.", True),
    ]
    assert data["memories"][0]["evidence"][0]["turn_text"] == "I live in Lisbon."
    assert "Oslo" not in response.content.decode()
    assert "embedding" not in keys(data)


def test_each_exported_memory_is_the_trace_document_the_api_serves(alice_api, alice, lisbon):
    conversation = conversation_create(user=alice)
    chat_reply(user=alice, user_turn=chat_user_turn(user=alice, conversation=conversation, content=CITY_PROBE))
    exported = alice_api.get(EXPORT).json()
    assert exported["memories"] == [alice_api.get(detail_url(lisbon)).json()]


def test_export_takes_the_same_queries_for_one_memory_or_many(alice_api, alice, lisbon):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def export_queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert alice_api.get(EXPORT).status_code == 200
        return len(captured.captured_queries)

    one = export_queries()
    for text in ["I'm vegetarian.", "I have a dog called Rex.", "I work as a nurse."]:
        remember(alice, user_turn(alice, text))
    assert export_queries() == one


def test_search_finds_a_memory_by_the_need_it_answers(alice_api, alice):
    remember(alice, user_turn(alice, "I'm a pediatric nurse in Montreal."))
    remember(alice, user_turn(alice, "I'm vegetarian."))
    # the need is worded far from the fact, but it is one of the fact's keys (memoryapp.keys)
    found = recall(alice, "What is my job?")
    assert found[0].memory.text == "The user is a pediatric nurse." and found[0].matched_key == "What is my job?"
    assert "The user is vegetarian." not in [item.memory.text for item in found]

    hit, *_ = alice_api.post(SEARCH, {"probe": "What is my job?"}, format="json").json()["results"]
    assert hit["text"] == "The user is a pediatric nurse." and hit["rank"] == 1
    assert hit["similarity"] >= recall_floor(get_embedder().name)
