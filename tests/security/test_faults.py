"""Model faults, driven by the fake endpoint, through the pages a user actually uses.

In every case the user's turn is stored, the page answers with a clear message (never a
500), no partial memory row is written, and the failed step can be retried.
"""

import json
import socket
import time

import pytest
from django.urls import reverse

from chat.models import Turn
from chat.services import conversation_create
from memoryapp.models import Memory, MemoryEvidence
from tests.fake_openai import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HTTP_HX_REQUEST": "true"}
TURN = "I live in Lisbon."


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _post_turn(client, conversation):
    created = client.post(reverse("chat:turn_create", args=[conversation.public_id]), {"content": TURN}, **HTMX)
    assert created.status_code == 200
    return client.post(reverse("chat:turn_reply", args=[conversation.public_id, 1]), **HTMX)


REPLY_FAULTS = {
    "timeout": (lambda fake: fake.hang(2.5), "did not answer in time"),
    "server-error": (lambda fake: fake.fail(500), "answered with an error (500)"),
    "rate-limited": (lambda fake: fake.fail(429, headers={"retry-after": "0"}), "rate-limiting requests"),
    "malformed-json": (
        lambda fake: fake.chat_queue.append(Behaviour(raw_body=b'{"choices": [{"message": ')),
        "unreadable answer",
    ),
    "not-json": (lambda fake: fake.chat_queue.append(Behaviour(raw_body=b"<html>bad gateway</html>")), "unreadable"),
}


@pytest.mark.parametrize("fault", REPLY_FAULTS, ids=list(REPLY_FAULTS))
def test_a_failing_reply_keeps_the_turn_explains_and_can_be_retried(alice, alice_client, fake_llm, settings, fault):
    settings.LLM_TIMEOUT_SECONDS = 1.0
    conversation = conversation_create(user=alice)
    setup, message = REPLY_FAULTS[fault]
    setup(fake_llm)

    started = time.monotonic()
    response = _post_turn(alice_client, conversation)
    elapsed = time.monotonic() - started

    assert response.status_code == 200
    html = response.content.decode()
    assert message in html and "Your message is saved." in html and ">Retry</button>" in html
    assert list(Turn.objects.filter(conversation=conversation).values_list("role", "content")) == [("user", TURN)]
    assert not Memory.objects.exists() and not MemoryEvidence.objects.exists()
    assert elapsed < 10  # bounded by the timeout, not the client's 600 s default

    fake_llm.reply("Lisbon is lovely.")
    fake_llm.facts("The user lives in Lisbon.")
    retried = alice_client.post(reverse("chat:turn_reply", args=[conversation.public_id, 1]), **HTMX)
    assert "Lisbon is lovely." in retried.content.decode()
    assert "Memory updated: saved" in retried.content.decode()
    assert list(Memory.objects.values_list("text", flat=True)) == ["The user lives in Lisbon."]


def test_an_unreachable_endpoint_is_a_clear_message(alice, alice_client, settings, fake_llm):
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{_closed_port()}/v1"
    conversation = conversation_create(user=alice)
    response = _post_turn(alice_client, conversation)
    assert response.status_code == 200
    assert "could not be reached" in response.content.decode()
    assert Turn.objects.filter(conversation=conversation, role="user").count() == 1


EXTRACTION_FAULTS = {
    "fifty-facts": json.dumps({"facts": ["The user lives in Lisbon."] * 50}),
    "ten-kb-facts": json.dumps({"facts": ["The user lives in Lisbon. " + "x" * 10_000]}),
    "malformed-json": '{"facts": ["The user lives in',
    "wrong-shape": json.dumps({"facts": {"city": "Lisbon"}}),
}


# An answer that is not the list asked for costs the turn's memory, marked for retry; an answer
# whose only item is unusable is a list with nothing to keep.
UNUSABLE_ANSWERS = {"fifty-facts", "malformed-json", "wrong-shape"}


@pytest.mark.parametrize("fault", EXTRACTION_FAULTS, ids=list(EXTRACTION_FAULTS))
def test_garbage_from_the_extractor_writes_nothing_and_the_chat_goes_on(alice, alice_client, fake_llm, fault):
    conversation = conversation_create(user=alice)
    fake_llm.reply("Noted.")
    fake_llm.reply(EXTRACTION_FAULTS[fault])
    response = _post_turn(alice_client, conversation)
    assert response.status_code == 200 and "Noted." in response.content.decode()
    assert not Memory.objects.exists() and not MemoryEvidence.objects.exists()
    expected = Turn.MemoryState.FAILED if fault in UNUSABLE_ANSWERS else Turn.MemoryState.DONE
    assert Turn.objects.get(conversation=conversation, seq=1).memory_state == expected


def test_an_extraction_cut_off_at_its_token_limit_is_marked_for_retry(alice, alice_client, fake_llm):
    conversation = conversation_create(user=alice)
    fake_llm.reply("Noted.")
    fake_llm.cut_off('{"facts": ["The user lives in Lisbon.", "The user lives in Lisbon.", "The user lives')
    response = _post_turn(alice_client, conversation)
    assert response.status_code == 200 and "Noted." in response.content.decode()
    assert not Memory.objects.exists()
    turn = Turn.objects.get(conversation=conversation, seq=1)
    assert turn.memory_state == Turn.MemoryState.FAILED and turn.content


def test_control_characters_from_the_extractor_are_stripped_before_storage(alice, alice_client, fake_llm):
    conversation = conversation_create(user=alice)
    fake_llm.reply("Noted.")
    fake_llm.facts("The user\x00 lives\x07 in\x1b[31m Lisbon.")
    _post_turn(alice_client, conversation)
    assert list(Memory.objects.values_list("text", flat=True)) == ["The user lives in [31m Lisbon."]


def test_a_failing_memory_write_is_reported_and_retried_from_the_page(alice, alice_client, fake_llm, settings):
    settings.LLM_TIMEOUT_SECONDS = 1.0
    conversation = conversation_create(user=alice)
    fake_llm.reply("Noted.")
    fake_llm.hang(2.5)  # the extraction call times out
    response = _post_turn(alice_client, conversation)
    assert "Memory could not be updated" in response.content.decode()
    assert not Memory.objects.exists()

    fake_llm.facts("The user lives in Lisbon.")
    retried = alice_client.post(reverse("chat:turn_memory", args=[conversation.public_id, 1]), **HTMX)
    assert "Memory updated: saved" in retried.content.decode()
