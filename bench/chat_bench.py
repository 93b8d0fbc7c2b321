"""The per-turn cost of chat without the model call: one whole turn through the services.

A turn is `chat_user_turn` then `chat_reply`, exactly as the chat view runs them: store
the user's turn, recall, assemble the request, the offline reply (the app's default with
no model endpoint: it makes no model call, so this is the turn "excluding the model call"),
save the reply, log the recalled memories, then queue the memory write. With `mode="immediate"`
the write (`remember`, offline extractor) runs in the turn after commit; with `mode="worker"`
(the default in production) a real worker process (`manage.py memory_worker`) runs
it beside the turns, and the queue latency (from enqueue to the write's end) is reported. The users each
hold `per_user` memories with real sentences embedded by the local model, so recall
finds some of them above its floor and the log and prompt carry them. Recall, remember
and the embedding inside both are timed by stopwatches around the product's functions.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from tqdm import tqdm

import chat.services
import chat.tasks
from bench.extractor import TURNS
from bench.seed import MemoryRow, copy_memories
from bench.synthetic import _TOPICS, percentiles, probe_texts
from bench.timing import Buckets, stopwatch
from chat.models import Turn
from chat.services import chat_reply, chat_user_turn, conversation_create
from core.databases import database_url
from memoryapp.embeddings import get_embedder
from memoryapp.hashing import content_hash
from memoryapp.models import Memory, MemoryRecall

_FACT_FORMS = [
    "The user cares about {}.",
    "The user mentioned {} last week.",
    "The user keeps notes about {}.",
    "The user wants reminders about {}.",
]


def memory_pool() -> list[str]:
    """100 short facts about the probes' topics ("my diet" -> "their diet")."""
    topics = [topic.replace("my ", "their ") for topic in _TOPICS]
    return [form.format(topic) for form in _FACT_FORMS for topic in topics]


@dataclass
class ChatResult:
    users: int
    per_user: int
    turns: int
    total: dict[str, float]
    recall: dict[str, float]
    remember: dict[str, float]
    rest: dict[str, float]
    embedding: dict[str, float]
    without_embedding: dict[str, float]
    queries: dict[str, float]
    by_kind: dict[str, dict[str, dict[str, float]]]
    memories_written: int
    recalled_per_turn: float
    replies: int
    writes_done: int
    mode: str = "immediate"
    queue_latency: dict[str, float] = field(default_factory=dict)  # enqueue -> write done, worker mode
    samples: list[dict[str, float]] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "samples"}


def seed_chat_users(count: int, per_user: int, *, progress: bool = True) -> list[Any]:
    """`count` users with the same `per_user` facts each (embedded once), loaded by COPY."""
    User = get_user_model()
    User.objects.bulk_create(User(username=f"bench-chat-{n}", password="!") for n in range(count))  # noqa: S106
    users = list(User.objects.filter(username__startswith="bench-chat-").order_by("pk"))
    texts = (memory_pool() * (per_user // 100 + 1))[:per_user]
    texts = [text if n < 100 else f"{text} ({n // 100})" for n, text in enumerate(texts)]
    vectors = get_embedder().embed(texts)
    now = timezone.now()

    def rows() -> Iterator[MemoryRow]:
        for user in users:
            for text, vector in zip(texts, vectors, strict=True):
                yield MemoryRow(user.pk, text, vector, content_hash(text), now)

    copy_memories(rows(), total=count * per_user, desc="chat: seed", progress=progress)
    return users


def turn_texts(count: int) -> list[str]:
    """Alternating questions about the users' topics and statements of new facts."""
    questions = probe_texts(count)
    return [questions[n] if n % 2 == 0 else TURNS[(n // 2) % len(TURNS)] for n in range(count)]


def _turn(user: Any, conversation: Any, text: str) -> tuple[Turn, Any]:
    user_turn = chat_user_turn(user=user, conversation=conversation, content=text)
    return user_turn, chat_reply(user=user, user_turn=user_turn)


BASE_DIR = Path(__file__).resolve().parents[1]
DRAIN_TIMEOUT = 300.0


def _start_worker() -> subprocess.Popen:
    """A memory worker on this database, as `make run` starts one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MEMORY_"))}
    env.update(DATABASE_URL=database_url(connection.settings_dict["NAME"]), MEMORY_TASK_BACKEND="worker")
    command = [sys.executable, "manage.py", "memory_worker", "--interval", "0.2"]
    return subprocess.Popen(  # noqa: S603 - our own interpreter and a fixed argument list
        [*command, "--no-reload", "--no-startup-delay", "--verbosity", "0"],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def _drain(worker: subprocess.Popen) -> None:
    """Wait until the worker has run every queued write, then stop it."""
    deadline = time.monotonic() + DRAIN_TIMEOUT
    try:
        while DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).exists():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the memory worker stopped or did not drain the queue in time")
            time.sleep(0.2)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


PACED_TURNS = 20
PACE_SECONDS = 1.0


def _paced_writes(user: Any, *, count: int, progress: bool) -> list[int]:
    """Statements sent one a second with the worker running (a person types slower than that),
    so the queue latency is that of a worker keeping up, not of a backlog. Their ids."""
    worker = _start_worker()
    conversation = conversation_create(user=user, title="")
    turns = []
    for text in tqdm(
        (TURNS * (count // len(TURNS) + 1))[:count], desc="chat: paced statements", unit="turn", disable=not progress
    ):
        started = time.monotonic()
        user_turn, _ = _turn(user, conversation, text)
        turns.append(user_turn.pk)
        time.sleep(max(0.0, PACE_SECONDS - (time.monotonic() - started)))
    _drain(worker)
    return turns


def measure_chat(
    *,
    users: int = 50,
    turns_per_user: int = 4,
    per_user: int = 100,
    progress: bool = True,
    mode: str = "immediate",
    paced_turns: int = PACED_TURNS,
) -> ChatResult:
    """`users` users each take `turns_per_user` turns in one conversation; every turn is timed whole.
    `mode` is MEMORY_TASK_BACKEND: "immediate" (the write in the turn) or "worker"."""
    assert not Memory.objects.exists(), "the chat benchmark needs a database of its own"
    with override_settings(MEMORY_TASK_BACKEND=mode):
        return _measure_chat(
            users=users, turns_per_user=turns_per_user, per_user=per_user, progress=progress, paced_turns=paced_turns
        )


def _measure_chat(*, users: int, turns_per_user: int, per_user: int, progress: bool, paced_turns: int) -> ChatResult:
    from django.conf import settings

    mode = settings.MEMORY_TASK_BACKEND
    people = seed_chat_users(users + 1, per_user, progress=progress)
    warm, people = people[0], people[1:]
    texts = turn_texts(turns_per_user)
    embedder = get_embedder()
    buckets = Buckets()
    samples: list[dict[str, float]] = []
    queries: dict[str, list[int]] = {"question": [], "statement": []}
    with (
        override_settings(LLM_ENABLED=False, MEMORY_EXTRACTOR=""),
        stopwatch(chat.services, "read_turn", buckets, "recall"),
        stopwatch(chat.tasks, "remember", buckets, "remember"),
        stopwatch(embedder, "embed", buckets, "embedding"),
    ):
        # Warm-up on a user of its own, counting the queries of each kind of turn.
        conversation = conversation_create(user=warm, title="")
        for n, text in enumerate(turn_texts(8)):
            with CaptureQueriesContext(connection) as captured:
                _turn(warm, conversation, text)
            queries["question" if n % 2 == 0 else "statement"].append(len(captured))
        buckets.take()
        replies = 0
        plan = [(user, conversation_create(user=user, title=""), text) for user in people for text in texts]
        for user, conversation, text in tqdm(plan, desc="chat: turns", unit="turn", disable=not progress):
            start = time.perf_counter()
            user_turn, outcome = _turn(user, conversation, text)
            total = time.perf_counter() - start
            replies += outcome.reply is not None
            samples.append({"total": total, "statement": float(text in TURNS), **buckets.take()})
        paced: list[int] = []
        if mode == "worker":
            # The timed turns ran with no worker competing for the cores: they measure what the
            # request does. The queue is drained now, then the latency is measured at a human pace.
            _drain(_start_worker())
            paced = _paced_writes(warm, count=paced_turns, progress=progress)
    written = Memory.objects.filter(user__in=people).count() - len(people) * per_user  # superseded rows included
    done = Turn.objects.filter(user__in=people, role=Turn.Role.USER, memory_state=Turn.MemoryState.DONE).count()
    latency = [
        (finished - enqueued).total_seconds()
        for enqueued, finished in DBTaskResult.objects.filter(
            status="SUCCESSFUL", args_kwargs__kwargs__turn_id__in=paced
        ).values_list("enqueued_at", "finished_at")
    ]
    recalled = MemoryRecall.objects.filter(user__in=people).count()

    def stats(key: str, kind: float | None = None) -> dict[str, float]:
        return percentiles([s[key] for s in samples if kind is None or s["statement"] == kind])

    for s in samples:
        s["rest"] = s["total"] - s["recall"] - s["remember"]
        s["without_embedding"] = s["total"] - s["embedding"]
    return ChatResult(
        users=len(people),
        per_user=per_user,
        turns=len(samples),
        total=stats("total"),
        recall=stats("recall"),
        remember=stats("remember"),
        rest=stats("rest"),
        embedding=stats("embedding"),
        without_embedding=stats("without_embedding"),
        by_kind={
            kind: {key: stats(key, flag) for key in ("total", "recall", "remember", "rest", "embedding")}
            for kind, flag in (("question", 0.0), ("statement", 1.0))
        },
        queries={kind: sum(counts) / len(counts) for kind, counts in queries.items()},
        memories_written=written,
        recalled_per_turn=recalled / len(samples),
        replies=replies,
        writes_done=done,
        mode=mode,
        queue_latency=percentiles(latency) if latency else {},
        samples=samples,
    )
