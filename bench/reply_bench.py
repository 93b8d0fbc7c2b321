"""Time to the first streamed word and to the whole reply, for short chat turns through the
configured model endpoint, as the page sees them; and the same along one conversation, with
each turn's memory write run between turns as the worker would run it.

Each turn is a user turn in a conversation of its own, then a POST to the reply's stream
(`chat:turn_reply_stream`) through Django's test `Client` (the whole middleware stack and
view, without an HTTP server in front): the clock starts before the POST and stops at the
first `text` event and at the `done` event. Beside it, the model alone: the same request's
messages sent straight to the endpoint as a stream, timed to its first piece and its end,
so the app's share is the difference. The first turn warms the model server (weights,
prompt cache) and is not counted. The benchmark user and everything it wrote are erased
at the end; its memory writes stay queued for no worker and go with it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import override_settings
from django.urls import reverse
from tqdm import tqdm

import memoryapp.write.pipeline
from bench.synthetic import percentiles
from bench.timing import Buckets, stopwatch
from chat.models import Turn
from chat.services import account_erase, build_request, chat_user_turn, conversation_create
from core.llm import openai_client
from memoryapp.services import memory_add
from memoryapp.write.extract import warm_up, warm_up_wanted
from memoryapp.write.pipeline import remember

HOST = "127.0.0.1"

SHORT_TURNS = [
    "What's a good name for a grey kitten?",
    "Give me one tip for falling asleep faster.",
    "How long should I boil an egg for a runny yolk?",
    "What is the capital of Australia?",
    "Suggest a quick vegetarian lunch.",
    "How do I say thank you in Japanese?",
    "What's a polite way to decline a meeting?",
    "Name three board games for two players.",
    "How many minutes should a power nap last?",
    "What does a sourdough starter need?",
    "Is it better to stretch before or after running?",
    "Give me a synonym for happy.",
]
WARM_UP = "Hello! Can you hear me?"

# One conversation of a user who has memories already: statements, questions that draw on
# them, and turns in other languages, in the order a person might write them.
KNOWN_FACTS = [
    "The user is a nurse in Leeds.",
    "The user is vegetarian.",
    "The user has a dog named Biscuit.",
    "The user is training for a half marathon in April.",
    "The user wants short answers.",
]
CONVERSATION = [
    "Hi! I just got back from a night shift.",
    "What could I cook for dinner that takes under 20 minutes?",
    "I started learning Portuguese last month, by the way.",
    "How many runs a week should I do before the race?",
    "Mi hermana vive en Oporto y voy a visitarla en verano.",
    "Any tips for keeping Biscuit calm during fireworks?",
    "I'm allergic to walnuts, so no walnut recipes please.",
    "Ich trinke keinen Kaffee mehr, nur noch grünen Tee.",
    "Can you suggest a short stretching routine after a shift?",
    "Thanks, that's really helpful!",
]


@dataclass
class ReplyTiming:
    first_text: float | None
    done: float
    chars: int
    answered: bool


def _stream_reply(client: Client, user: Any, text: str, conversation: Any = None) -> ReplyTiming:
    conversation = conversation or conversation_create(user=user)
    turn = chat_user_turn(user=user, conversation=conversation, content=text)
    url = reverse("chat:turn_reply_stream", args=[conversation.public_id, turn.seq])
    start = time.perf_counter()
    response = client.post(url, HTTP_HX_REQUEST="true", HTTP_HOST=HOST)
    first = None
    for chunk in response.streaming_content:
        if first is None and chunk.startswith(b"event: text"):
            first = time.perf_counter() - start
    done = time.perf_counter() - start
    reply = Turn.objects.filter(user=user, reply_to=turn).first()
    return ReplyTiming(first, done, len(reply.content) if reply else 0, reply is not None)


def _model_alone(user: Any, text: str) -> tuple[float | None, float]:
    """The same request's messages straight to the endpoint: time to its first piece, and to its end."""
    conversation = conversation_create(user=user)
    turn = chat_user_turn(user=user, conversation=conversation, content=text)
    messages = build_request(conversation=conversation, user_turn=turn, recalled=[]).messages
    start = time.perf_counter()
    first = None
    with openai_client().chat.completions.create(
        model=settings.LLM_CHAT_MODEL,
        messages=messages,
        temperature=0.3,
        max_tokens=settings.CHAT_REPLY_MAX_TOKENS,
        stream=True,
    ) as stream:
        for chunk in stream:
            if first is None and any(c.delta and c.delta.content for c in chunk.choices or []):
                first = time.perf_counter() - start
    return first, time.perf_counter() - start


def measure_replies(*, turns: int = len(SHORT_TURNS), progress: bool = True) -> dict[str, Any]:
    texts = [SHORT_TURNS[n % len(SHORT_TURNS)] for n in range(turns)]
    user = get_user_model().objects.create_user(f"bench-reply-{uuid.uuid4().hex[:8]}")
    try:
        with override_settings(ALLOWED_HOSTS=[HOST]):
            client = Client()
            client.force_login(user)
            _stream_reply(client, user, WARM_UP)
            timings = [_stream_reply(client, user, text) for text in tqdm(texts, desc="replies", disable=not progress)]
        alone = (
            [_model_alone(user, text) for text in tqdm(texts, desc="model alone", disable=not progress)]
            if settings.LLM_ENABLED
            else []
        )
    finally:
        account_erase(user=user)
    answered = [t for t in timings if t.answered and t.first_text is not None]
    return {
        "endpoint": settings.OPENAI_BASE_URL or "api.openai.com",
        "model": settings.LLM_CHAT_MODEL if settings.LLM_ENABLED else "offline",
        "turns": len(timings),
        "answered": len(answered),
        "first_text_ms": percentiles([t.first_text for t in answered]),
        "whole_reply_ms": percentiles([t.done for t in answered]),
        "reply_chars_mean": sum(t.chars for t in answered) / len(answered) if answered else 0,
        "model_alone_first_ms": percentiles([first for first, _ in alone if first is not None]),
        "model_alone_whole_ms": percentiles([whole for _, whole in alone]),
    }


def measure_conversation(*, texts: Sequence[str] = CONVERSATION, progress: bool = True) -> dict[str, Any]:
    """One conversation of `texts` (after a warm-up turn in a conversation of its own) by a
    user with KNOWN_FACTS: each reply streamed through the page, then the turn's memory write
    (`remember`, what the worker runs once the reply is saved), timed whole and for its model
    calls (the English reading of a turn in another language, and extraction). First words
    are reported for the turns after the first, whose requests carry the conversation so far.
    With MEMORY_WARM_UP, the model first reads the write path's instructions, as the worker does
    when it starts."""
    user = get_user_model().objects.create_user(f"bench-talk-{uuid.uuid4().hex[:8]}")
    # As the memory worker does when it starts (MEMORY_WARM_UP), before any write is timed.
    warmed = warm_up() if warm_up_wanted() else None
    buckets = Buckets()
    rows: list[dict[str, Any]] = []
    try:
        for fact in KNOWN_FACTS:
            memory_add(user=user, text=fact)
        with override_settings(ALLOWED_HOSTS=[HOST]):
            client = Client()
            client.force_login(user)
            _stream_reply(client, user, WARM_UP)
            conversation = conversation_create(user=user)
            with (
                stopwatch(memoryapp.write.pipeline, "english_reading", buckets, "reading"),
                stopwatch(memoryapp.write.pipeline, "extract_facts", buckets, "extraction"),
            ):
                for text in tqdm(texts, desc="conversation", disable=not progress):
                    reply = _stream_reply(client, user, text, conversation)
                    turn = Turn.objects.filter(user=user, conversation=conversation, role=Turn.Role.USER).latest("seq")
                    buckets.take()
                    start = time.perf_counter()
                    written = remember(user, turn)
                    write = time.perf_counter() - start
                    model = buckets.take()
                    rows.append(
                        {
                            "turn": text,
                            "first_text": reply.first_text,
                            "done": reply.done,
                            "write": write,
                            "reading": model["reading"],
                            "extraction": model["extraction"],
                            "stored": written.stored,
                        }
                    )
    finally:
        account_erase(user=user)
    later = rows[1:]
    return {
        "endpoint": settings.OPENAI_BASE_URL or "api.openai.com",
        "model": settings.LLM_CHAT_MODEL if settings.LLM_ENABLED else "offline",
        "turns": rows,
        "write_warm_up_s": warmed,
        "first_text_after_first_ms": percentiles([r["first_text"] for r in later if r["first_text"] is not None]),
        "whole_reply_after_first_ms": percentiles([r["done"] for r in later]),
        "extraction_ms": percentiles([r["reading"] + r["extraction"] for r in rows]),
        "write_ms": percentiles([r["write"] for r in rows]),
    }
