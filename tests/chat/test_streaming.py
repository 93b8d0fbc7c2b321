"""The streamed reply: server-sent events from the view, against the fake endpoint's streams."""

import json
import time

import pytest
from django.urls import reverse

from chat.assistant import CUT_OFF_NOTE
from chat.models import Turn
from chat.services import STOPPED_NOTE, chat_reply, chat_user_turn, conversation_create, reply_stop_request
from memoryapp.models import MemoryRecall

pytestmark = pytest.mark.django_db(transaction=True)

HTMX = {"HTTP_HX_REQUEST": "true"}
ANSWER = "Sourdough needs a starter, flour, water and salt; the starter does the rising."


def _stream_url(conversation, seq):
    return reverse("chat:turn_reply_stream", args=[conversation.public_id, seq])


def _events(response):
    """The response's server-sent events as (name, value) pairs, read as they arrive;
    a heartbeat comment is ("heartbeat", None)."""
    buffer = ""
    for chunk in response.streaming_content:
        buffer += chunk.decode()
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            if block.startswith(":"):
                yield "heartbeat", None
                continue
            fields = dict(line.split(": ", 1) for line in block.splitlines())
            yield fields["event"], json.loads(fields["data"])


@pytest.fixture
def asked(alice):
    conversation = conversation_create(user=alice)
    chat_user_turn(user=alice, conversation=conversation, content="How do I bake sourdough bread?")
    return conversation


def test_the_reply_streams_in_pieces_and_ends_with_the_finished_turn(alice, alice_client, asked, fake_llm, settings):
    fake_llm.stream(ANSWER, piece_chars=8)
    response = alice_client.post(_stream_url(asked, 1), **HTMX)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    assert response["X-Accel-Buffering"] == "no"
    events = list(_events(response))

    names = [name for name, _ in events]
    assert names[0] == "status" and names[-1] == "done"
    texts = [value for name, value in events if name == "text"]
    assert len(texts) == len(ANSWER) // 8 + 1
    assert "".join(texts) == ANSWER
    reply = Turn.objects.get(user=alice, reply_to__seq=1)
    assert reply.content == ANSWER and reply.seq == 2
    done = events[-1][1]
    assert 'id="turn-2"' in done and "Sourdough needs a starter" in done
    assert 'id="notice-1"' in done and 'hx-swap-oob="true"' in done  # the memory notice comes along
    request = fake_llm.chat_requests()[0]["body"]
    assert request["stream"] is True and request["max_tokens"] == settings.CHAT_REPLY_MAX_TOKENS
    assert Turn.objects.get(user=alice, seq=1).memory_state != Turn.MemoryState.PENDING  # its write was queued


def test_the_offline_reply_streams_as_one_piece_with_its_memories(alice, alice_client):
    conversation = conversation_create(user=alice)
    first = chat_user_turn(user=alice, conversation=conversation, content="I'm always in UTC.")
    chat_reply(user=alice, user_turn=first)
    chat_user_turn(user=alice, conversation=conversation, content="What timezone am I in?")

    events = list(_events(alice_client.post(_stream_url(conversation, 3), **HTMX)))
    texts = [value for name, value in events if name == "text"]
    assert len(texts) == 1 and texts[0].startswith("Offline mode")
    assert "The user's timezone is UTC." in texts[0]
    assert "Memories used (1)" in events[-1][1]
    reply = Turn.objects.get(user=alice, seq=4)
    assert MemoryRecall.objects.filter(user=alice, reply_turn=reply).count() == 1


def test_a_stopped_reply_keeps_what_it_had_written_and_says_so(alice, alice_client, asked, fake_llm):
    fake_llm.stream(ANSWER, piece_chars=4, piece_delay=0.1)
    response = alice_client.post(_stream_url(asked, 1), **HTMX)
    texts, done = [], None
    for name, value in _events(response):
        if name == "text":
            texts.append(value)
            if len(texts) == 2:
                stop = alice_client.post(reverse("chat:turn_reply_stop", args=[asked.public_id, 1]), **HTMX)
                assert stop.status_code == 204
        elif name == "done":
            done = value

    reply = Turn.objects.get(user=alice, reply_to__seq=1)
    written = "".join(texts)
    assert 2 <= len(texts) < len(ANSWER) / 4  # it ended well before the model would have
    assert reply.content == written.rstrip() + STOPPED_NOTE
    assert "Stopped before the end." in done
    # The model's stream was closed, so the model stops writing too.
    deadline = time.monotonic() + 5
    while fake_llm.streams_abandoned == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_llm.streams_abandoned == 1


def test_a_reply_stopped_before_its_first_word_is_not_kept_and_offers_retry(alice, alice_client, asked, fake_llm):
    fake_llm.stream(ANSWER, piece_delay=1.5)
    response = alice_client.post(_stream_url(asked, 1), **HTMX)
    events = _events(response)
    assert next(events)[0] == "status"
    reply_stop_request(user=alice, user_turn=Turn.objects.get(user=alice, seq=1))
    rest = list(events)

    assert [name for name, _ in rest if name == "text"] == []
    assert "You stopped the reply before it began." in rest[-1][1]
    assert ">Retry</button>" in rest[-1][1]
    assert not Turn.objects.filter(user=alice, reply_to__seq=1).exists()
    # Asking again starts afresh: the earlier stop does not stop the new reply.
    fake_llm.stream("Flour, water, salt and time.")
    again = list(_events(alice_client.post(_stream_url(asked, 1), **HTMX)))
    assert Turn.objects.get(user=alice, reply_to__seq=1).content == "Flour, water, salt and time."
    assert again[-1][0] == "done"


def test_a_page_closed_mid_reply_keeps_the_text_so_far(alice, alice_client, asked, fake_llm):
    fake_llm.stream(ANSWER, piece_chars=4, piece_delay=0.05)
    response = alice_client.post(_stream_url(asked, 1), **HTMX)
    events = _events(response)
    texts = []
    for name, value in events:
        if name == "text":
            texts.append(value)
            if len(texts) == 3:
                break
    events.close()
    response.close()  # what the server does when the browser goes away

    reply = Turn.objects.get(user=alice, reply_to__seq=1)
    assert reply.content == "".join(texts) + STOPPED_NOTE


def test_a_stream_that_breaks_off_keeps_the_turn_writes_nothing_and_offers_retry(alice, alice_client, asked, fake_llm):
    fake_llm.drop_mid_stream(ANSWER, after=3)
    events = list(_events(alice_client.post(_stream_url(asked, 1), **HTMX)))

    assert [name for name, _ in events if name == "text"] != []  # it had begun
    assert "The language model stopped part-way through its answer." in events[-1][1]
    assert ">Retry</button>" in events[-1][1]
    assert list(Turn.objects.filter(user=alice).values_list("seq", "role")) == [(1, "user")]
    assert Turn.objects.get(user=alice, seq=1).memory_state == Turn.MemoryState.PENDING


@pytest.mark.parametrize(
    "fault, message",
    [
        (lambda fake: fake.fail(500), "The language model answered with an error (500)."),
        (lambda fake: fake.hang(3), "The language model did not answer in time."),
    ],
)
def test_a_model_that_fails_before_answering_is_a_clear_message(alice, alice_client, asked, fake_llm, fault, message):
    fault(fake_llm)
    events = list(_events(alice_client.post(_stream_url(asked, 1), **HTMX)))
    assert message in events[-1][1]
    assert not Turn.objects.filter(user=alice, reply_to__seq=1).exists()


def test_a_streamed_reply_cut_off_at_its_token_limit_says_so(alice, alice_client, asked, fake_llm):
    fake_llm.cut_off("Here are the first steps: one, two")
    list(_events(alice_client.post(_stream_url(asked, 1), **HTMX)))
    assert Turn.objects.get(user=alice, reply_to__seq=1).content == "Here are the first steps: one, two" + CUT_OFF_NOTE


def test_an_answered_turn_streams_its_reply_at_once_without_asking_the_model(alice, alice_client, asked, fake_llm):
    fake_llm.stream(ANSWER)
    list(_events(alice_client.post(_stream_url(asked, 1), **HTMX)))
    calls = len(fake_llm.chat_requests())
    events = list(_events(alice_client.post(_stream_url(asked, 1), **HTMX)))

    assert [name for name, _ in events] == ["done"]
    assert ANSWER in events[0][1]
    assert len(fake_llm.chat_requests()) == calls
    assert Turn.objects.filter(user=alice, role="assistant").count() == 1


def test_retry_from_the_page_answers_with_the_streaming_placeholder(alice, alice_client, asked, fake_llm):
    url = reverse("chat:turn_reply", args=[asked.public_id, 1])
    response = alice_client.post(url, {"stream": "1"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert f'data-stream="{_stream_url(asked, 1)}"' in html and 'id="pending-1"' in html
    assert fake_llm.chat_requests() == []  # the placeholder's stream makes the reply, not this
    # Without JavaScript the same form makes the reply and goes back to the page.
    fake_llm.reply("Flour, water, salt and time.")
    assert alice_client.post(url, {"stream": "1"}).status_code == 302
    assert Turn.objects.get(user=alice, reply_to__seq=1).content == "Flour, water, salt and time."


def test_the_page_after_a_new_turn_shows_the_streaming_placeholder(alice_client, alice):
    conversation = conversation_create(user=alice)
    response = alice_client.post(
        reverse("chat:turn_create", args=[conversation.public_id]), {"content": "Hello there"}, **HTMX
    )
    html = response.content.decode()
    assert f'data-stream="{_stream_url(conversation, 1)}"' in html
    assert f'data-stop="{reverse("chat:turn_reply_stop", args=[conversation.public_id, 1])}"' in html
