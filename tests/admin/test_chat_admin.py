import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.admin.conftest import ASK_TIMEZONE, history_for

pytestmark = pytest.mark.django_db

CONVERSATIONS = reverse("admin:chat_conversation_changelist")
TURNS = reverse("admin:chat_turn_changelist")


def turn_url(turn) -> str:
    return reverse("admin:chat_turn_change", args=[turn.pk])


def memory_url(memory) -> str:
    return reverse("admin:memoryapp_memory_change", args=[memory.pk])


def test_conversation_page_shows_its_turns_in_order_with_links(staff_client, alices_history):
    history = alices_history

    response = staff_client.get(reverse("admin:chat_conversation_change", args=[history.conversation.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(turn_url(turn)) for turn in (history.source, history.question, history.reply)]
    assert positions == sorted(positions)
    assert 'name="_save"' not in html
    assert "<textarea" not in html


def test_reply_page_answers_why_did_it_say_that(staff_client, alices_history):
    history = alices_history

    response = staff_client.get(turn_url(history.reply))

    assert response.status_code == 200
    html = response.content.decode()
    assert "memories recalled into this reply" in html.lower()
    # The user turn it answers (the recall probe), the memory it was given, where that was learned.
    assert turn_url(history.question) in html and ASK_TIMEZONE.replace("'", "&#x27;") in html
    assert memory_url(history.timezone) in html
    assert "The user&#x27;s timezone is UTC." in html
    assert turn_url(history.source) in html
    recall = response.context["inline_admin_formsets"][0].formset.queryset.get()
    assert (recall.memory_id, recall.rank) == (history.timezone.pk, 1)
    assert 'name="_save"' not in html


def test_user_turn_page_shows_the_memories_it_wrote_and_its_reply(staff_client, alices_history):
    history = alices_history

    response = staff_client.get(turn_url(history.source))

    html = response.content.decode()
    assert "memories written from this turn" in html.lower()
    assert "first statement (created it)" in html
    assert memory_url(history.timezone) in html

    question_page = staff_client.get(turn_url(history.question)).content.decode()
    assert turn_url(history.reply) in question_page  # answered by


def test_search_finds_conversations_and_turns_by_id_user_and_content(staff_client, alice, bob):
    alices = history_for(alice)
    bobs = history_for(bob)

    def found(url, q):
        return {obj.pk for obj in staff_client.get(url, {"q": q}).context["cl"].result_list}

    assert found(CONVERSATIONS, alices.conversation.public_id) == {alices.conversation.pk}
    assert found(CONVERSATIONS, "bob") == {bobs.conversation.pk}
    assert found(CONVERSATIONS, "timezone am I") == {alices.conversation.pk, bobs.conversation.pk}
    assert found(TURNS, "timezone am I") == {alices.question.pk, bobs.question.pk}
    assert found(TURNS, bobs.conversation.public_id) == {bobs.source.pk, bobs.question.pk, bobs.reply.pk}


@pytest.mark.parametrize("url", [CONVERSATIONS, TURNS])
def test_list_query_count_does_not_grow_with_rows(staff_client, make_user, url):
    history_for(make_user("one"))
    with CaptureQueriesContext(connection) as few:
        assert staff_client.get(url).status_code == 200
    for name in ["two", "three", "four"]:
        history_for(make_user(name))
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert len(response.context["cl"].result_list) >= 4
    assert len(many) == len(few)


def test_conversations_and_turns_cannot_be_added_edited_or_deleted(staff_client, alices_history):
    history = alices_history
    conversation_url = reverse("admin:chat_conversation_change", args=[history.conversation.pk])

    assert staff_client.get(reverse("admin:chat_turn_add")).status_code == 403
    assert staff_client.get(reverse("admin:chat_conversation_add")).status_code == 403
    assert staff_client.post(turn_url(history.reply), {"content": "edited"}).status_code == 403
    assert staff_client.post(conversation_url, {"title": "edited"}).status_code == 403
    assert staff_client.get(reverse("admin:chat_turn_delete", args=[history.reply.pk])).status_code == 403
    history.reply.refresh_from_db()
    assert history.reply.content != "edited"


@pytest.mark.django_db(transaction=True)
def test_a_reply_page_lists_the_past_turns_quoted_into_it_and_the_turn_page_where_it_was_quoted(staff_client, alice):
    from chat.models import HistoryRecall, Turn
    from chat.services import chat_reply, chat_user_turn, conversation_create
    from tests.factories import chat

    earlier = chat(
        alice, "We had dinner at Trattoria Lucca on Friday and the tiramisu there was the best I've ever had."
    )
    said = Turn.objects.get(conversation=earlier, role=Turn.Role.USER)
    asked = chat_user_turn(
        user=alice,
        conversation=conversation_create(user=alice),
        content="What was the name of the place where I had that amazing tiramisu?",
    )
    reply = chat_reply(user=alice, user_turn=asked).reply
    assert HistoryRecall.objects.filter(reply_turn=reply, source_turn=said).exists()

    reply_page = staff_client.get(turn_url(reply)).content.decode()
    assert "past turns quoted into this reply" in reply_page.lower() and turn_url(said) in reply_page
    turn_page = staff_client.get(turn_url(said)).content.decode()
    assert "quoted into later replies" in turn_page.lower() and turn_url(reply) in turn_page
    log = staff_client.get(reverse("admin:chat_historyrecall_changelist")).content.decode()
    assert "Trattoria Lucca" in log and "alice" in log
