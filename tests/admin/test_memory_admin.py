import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memoryapp.models import Memory, MemoryEvent
from memoryapp.read.recall import recall
from memoryapp.services import memory_soft_delete
from memoryapp.write import remember
from tests.admin.conftest import ASK_TIMEZONE, PRIYA, history_for
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:memoryapp_memory_changelist")
EMBEDDING_COLUMN = '"memoryapp_memory"."embedding"'


def change_url(memory) -> str:
    return reverse("admin:memoryapp_memory_change", args=[memory.pk])


def turn_url(turn) -> str:
    return reverse("admin:chat_turn_change", args=[turn.pk])


def listed(response) -> set[int]:
    return {memory.pk for memory in response.context["cl"].result_list}


def act(client, action: str, *memories):
    return client.post(CHANGELIST, {"action": action, "_selected_action": [m.pk for m in memories]}, follow=True)


def test_changelist_lists_every_users_memories_including_deleted(staff_client, alices_history, bob):
    bobs = history_for(bob)
    memory_soft_delete(user=bob, memory_id=bobs.timezone.pk)

    response = staff_client.get(CHANGELIST)

    assert response.status_code == 200
    assert listed(response) == set(Memory.objects.values_list("pk", flat=True))
    assert len(listed(response)) == 4
    html = response.content.decode()
    assert "The user&#x27;s timezone is UTC." in html
    assert "use-multilingual-v3" in html


def test_memory_page_shows_provenance_evidence_recalls_and_history(staff_client, alice, alices_history, staff):
    history = alices_history
    restated = user_turn(alice, "I'm always in UTC.", conversation=history.conversation)
    remember(alice, restated)
    memory_soft_delete(user=alice, memory_id=history.timezone.pk, actor=staff)

    response = staff_client.get(change_url(history.timezone))

    assert response.status_code == 200
    html = response.content.decode()
    # Provenance: the source conversation and turn, as admin links.
    assert reverse("admin:chat_conversation_change", args=[history.conversation.pk]) in html
    assert f'<a href="{turn_url(history.source)}">{history.conversation.public_id} #1 user: Call me Priya' in html
    # Evidence: the first statement and the restatement, with the gate similarity.
    assert "first statement" in html and "restatement" in html
    assert turn_url(restated) in html
    # Recalls: who was shown it, in which reply, answering which turn.
    assert "alice (1 replies)" in html
    assert turn_url(history.reply) in html
    assert turn_url(history.question) in html
    every_recall = reverse("admin:memoryapp_memoryrecall_changelist") + f"?memory__id__exact={history.timezone.pk}"
    assert every_recall in html
    recalls = staff_client.get(every_recall)
    assert [r.reply_turn_id for r in recalls.context["cl"].result_list] == [history.reply.pk]
    # History: the delete, by the staff member.
    assert "Deleted" in html
    # A record, not a form: nothing to save.
    assert 'name="_save"' not in html
    assert 'name="text"' not in html


def test_memory_pages_never_show_or_load_the_embedding(staff_client, alices_history):
    with CaptureQueriesContext(connection) as queries:
        pages = [
            staff_client.get(CHANGELIST),
            staff_client.get(change_url(alices_history.timezone)),
            staff_client.get(reverse("admin:memoryapp_memoryrecall_changelist")),
            staff_client.get(reverse("admin:chat_turn_change", args=[alices_history.reply.pk])),
            staff_client.get(reverse("admin:chat_turn_change", args=[alices_history.source.pk])),
        ]

    for page in pages:
        assert page.status_code == 200
        html = page.content.decode()
        assert "id_embedding" not in html
        assert 'name="embedding"' not in html
        assert "Embedding:" not in html
    assert not [q["sql"] for q in queries.captured_queries if EMBEDDING_COLUMN in q["sql"]]


def test_changelist_query_count_does_not_grow_with_rows(staff_client, make_user):
    history_for(make_user("one"))
    with CaptureQueriesContext(connection) as few:
        assert staff_client.get(CHANGELIST).status_code == 200

    for name in ["two", "three", "four"]:
        history_for(make_user(name))
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(CHANGELIST)

    assert len(listed(response)) == 8
    assert len(many) == len(few)


ALICE_NAME = ("alice", "The user's name is Priya.")
ALICE_TZ = ("alice", "The user's timezone is UTC.")
BOB_NAME = ("bob", "The user's name is Priya.")
BOB_TZ = ("bob", "The user's timezone is UTC.")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, {ALICE_NAME, ALICE_TZ, BOB_NAME, BOB_TZ}),
        ({"state": "live"}, {ALICE_NAME, ALICE_TZ, BOB_NAME}),
        ({"state": "deleted"}, {BOB_TZ}),
        ({"q": "timezone"}, {ALICE_TZ, BOB_TZ}),
        ({"q": "bob"}, {BOB_NAME, BOB_TZ}),
        ({"embedding_model": "use-multilingual-v3", "state": "deleted"}, {BOB_TZ}),
        ({"embedding_model": "another-model"}, set()),
        ({"created_at__gte": "2000-01-01 00:00:00+00:00", "created_at__lt": "2000-01-02 00:00:00+00:00"}, set()),
    ],
)
def test_filters_and_search(staff_client, alice, bob, query, expected):
    history_for(alice)
    bobs = history_for(bob)
    memory_soft_delete(user=bob, memory_id=bobs.timezone.pk)

    response = staff_client.get(CHANGELIST, query)

    assert response.status_code == 200
    assert {(m.user.username, m.text) for m in response.context["cl"].result_list} == expected


def test_user_filter_shows_one_users_memories(staff_client, alice, bob):
    history_for(alice)
    history_for(bob)

    response = staff_client.get(CHANGELIST, {"user__id__exact": bob.pk})

    assert {m.user_id for m in response.context["cl"].result_list} == {bob.pk}
    assert len(listed(response)) == 2


def test_soft_delete_action_hides_the_memory_from_recall_and_is_logged(staff_client, staff, alice, alices_history):
    memory = alices_history.timezone
    assert [r.memory.pk for r in recall(alice, ASK_TIMEZONE)][:1] == [memory.pk]

    response = act(staff_client, "soft_delete_memories", memory)

    assert "Soft deleted 1 memories." in response.content.decode()
    memory.refresh_from_db()
    assert memory.deleted_at is not None
    assert memory.pk not in [r.memory.pk for r in recall(alice, ASK_TIMEZONE)]
    event = MemoryEvent.objects.get(memory=memory)
    assert (event.action, event.actor, event.user) == (MemoryEvent.Action.DELETED, staff, alice)
    entry = LogEntry.objects.get(object_id=str(memory.pk))
    assert (entry.user, entry.action_flag) == (staff, CHANGE)
    assert entry.get_change_message().startswith("Soft deleted")


def test_restore_action_brings_the_memory_back_into_recall_and_is_logged(staff_client, staff, alice, alices_history):
    memory = alices_history.timezone
    memory_soft_delete(user=alice, memory_id=memory.pk)

    response = act(staff_client, "restore_memories", memory)

    assert "Restored 1 memories." in response.content.decode()
    memory.refresh_from_db()
    assert memory.deleted_at is None
    assert [r.memory.pk for r in recall(alice, ASK_TIMEZONE)][:1] == [memory.pk]
    assert list(MemoryEvent.objects.filter(memory=memory).values_list("action", "actor")) == [
        (MemoryEvent.Action.DELETED, alice.pk),
        (MemoryEvent.Action.RESTORED, staff.pk),
    ]
    entry = LogEntry.objects.get(object_id=str(memory.pk))
    assert entry.get_change_message().startswith("Restored")


def test_restore_reports_a_conflict_when_the_fact_was_remembered_again(staff_client, alice, alices_history):
    memory = alices_history.timezone
    memory_soft_delete(user=alice, memory_id=memory.pk)
    remember(alice, user_turn(alice, PRIYA))  # the same fact, now a new live row

    response = act(staff_client, "restore_memories", memory)

    html = response.content.decode()
    assert "Not restored" in html and "remembered again" in html
    memory.refresh_from_db()
    assert memory.deleted_at is not None
    assert not MemoryEvent.objects.filter(memory=memory, action=MemoryEvent.Action.RESTORED).exists()
    assert not LogEntry.objects.exists()


def test_actions_skip_memories_already_in_the_requested_state(staff_client, alice, alices_history):
    memory = alices_history.timezone

    response = act(staff_client, "restore_memories", memory)

    assert "1 selected memories were not deleted." in response.content.decode()
    assert not MemoryEvent.objects.exists()
    assert not LogEntry.objects.exists()


def test_memories_cannot_be_added_edited_or_hard_deleted(staff_client, alices_history):
    memory = alices_history.timezone

    assert staff_client.get(reverse("admin:memoryapp_memory_add")).status_code == 403
    staff_client.post(change_url(memory), {"text": "The user's name is Dr. Alvarez."})
    assert staff_client.get(reverse("admin:memoryapp_memory_delete", args=[memory.pk])).status_code == 403
    memory.refresh_from_db()
    assert memory.text == "The user's timezone is UTC."
    assert "delete_selected" not in staff_client.get(CHANGELIST).content.decode()
