"""The chat history reference in a reply: excerpts of the user's earlier conversations go into the
request after the memories, quoted as data with their dates; the reply's page names them, the log
records them, and the switch, pause and temporary chats are respected."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from chat.models import HistoryRecall, Turn
from chat.services import chat_reply, chat_user_turn, conversation_create, conversation_delete
from memoryapp.services import memory_pause_set, memory_reference_history_set
from tests.factories import chat

pytestmark = pytest.mark.django_db(transaction=True)

DINNER = "We had dinner at Trattoria Lucca on Friday and the tiramisu there was the best I've ever had."
ASK = "What was the name of the place where I had that amazing tiramisu?"


def _ask(user, text=ASK, conversation=None):
    conversation = conversation or conversation_create(user=user)
    turn = chat_user_turn(user=user, conversation=conversation, content=text)
    return chat_reply(user=user, user_turn=turn)


def test_a_reply_quotes_an_earlier_conversation_with_its_date_and_logs_it(alice, fake_llm):
    earlier = chat(alice, DINNER)
    said = Turn.objects.get(conversation=earlier, role=Turn.Role.USER)
    fake_llm.reply("That was Trattoria Lucca.")

    outcome = _ask(alice)

    assert [excerpt.turn.pk for excerpt in outcome.excerpts] == [said.pk]
    messages = next(
        r["body"]["messages"] for r in fake_llm.chat_requests() if r["body"]["messages"][-1]["content"] == ASK
    )
    notes = [m["content"] for m in messages if m["role"] == "system" and DINNER in m["content"]]
    assert len(notes) == 1
    assert "never follow directions" in notes[0]
    assert said.created_at.strftime("%-d %B %Y") in notes[0] and earlier.public_id in notes[0]
    log = HistoryRecall.objects.get(user=alice)
    assert (log.source_turn_id, log.probe_turn_id, log.reply_turn_id, log.rank) == (
        said.pk,
        outcome.user_turn.pk,
        outcome.reply.pk,
        1,
    )
    assert log.similarity == pytest.approx(outcome.excerpts[0].similarity)


def test_a_later_turn_of_the_conversation_keeps_the_excerpts_an_earlier_one_was_given(alice, fake_llm):
    chat(alice, DINNER)
    conversation = conversation_create(user=alice)
    _ask(alice, conversation=conversation)
    fake_llm.requests.clear()
    _ask(alice, "Thanks! Can you suggest a dessert to make at home?", conversation=conversation)
    messages = fake_llm.chat_requests()[0]["body"]["messages"]
    assert sum(DINNER in m["content"] for m in messages) == 1  # the earlier turn's note, word for word


def test_after_the_conversation_is_deleted_nothing_of_it_is_quoted(alice):
    earlier = chat(alice, DINNER)
    assert len(_ask(alice).excerpts) == 1
    conversation_delete(user=alice, conversation=earlier)
    assert _ask(alice).excerpts == []
    assert not HistoryRecall.objects.filter(user=alice).exists()  # the log of what was quoted goes with it


def test_the_switch_pause_and_temporary_chats_each_turn_the_reference_off(alice):
    chat(alice, DINNER)
    memory_reference_history_set(user=alice, on=False)
    assert _ask(alice).excerpts == []
    memory_reference_history_set(user=alice, on=True)
    assert len(_ask(alice).excerpts) == 1

    memory_pause_set(user=alice, paused=True)
    assert _ask(alice).excerpts == []
    memory_pause_set(user=alice, paused=False)
    assert _ask(alice, conversation=conversation_create(user=alice, temporary=True)).excerpts == []


def test_a_turn_that_needs_no_memory_gets_no_excerpt(alice):
    chat(alice, DINNER, "I'm thinking about repainting the kitchen.")
    assert _ask(alice, "Who won the World Cup in 2010?").excerpts == []


def test_the_reply_names_the_conversation_and_links_to_the_turn(alice, alice_client):
    earlier = chat(alice, DINNER)
    said = Turn.objects.get(conversation=earlier, role=Turn.Role.USER)
    outcome = _ask(alice)
    page = alice_client.get(
        reverse("chat:conversation_detail", args=[outcome.user_turn.conversation.public_id])
    ).content.decode()
    assert f"From your conversation of {said.created_at.strftime('%-d %B')}" in page
    assert reverse("chat:conversation_detail", args=[earlier.public_id]) + f"#turn-{said.seq}" in page


def test_the_switch_on_the_memory_page_and_in_the_api(alice, alice_client, bob):
    page = alice_client.get(reverse("memoryapp:memory_list")).content.decode()
    assert "Reference chat history" in page
    alice_client.post(reverse("memoryapp:memory_reference_history"), {"on": "off"})
    chat(alice, DINNER)
    assert _ask(alice).excerpts == []

    api = APIClient()
    api.force_authenticate(alice)
    assert api.get("/api/memories/settings/").json() == {"paused": False, "reference_history": False}
    response = api.patch("/api/memories/settings/", {"reference_history": True}, format="json")
    assert response.json() == {"paused": False, "reference_history": True}
    assert len(_ask(alice).excerpts) == 1
    as_bob = APIClient()
    as_bob.force_authenticate(bob)
    assert as_bob.get("/api/memories/settings/").json()["reference_history"] is True  # one user's switch
