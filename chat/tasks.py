"""Background work for chat, as Django tasks: the memory write of a user turn.

`MEMORY_TASK_BACKEND` picks where it runs: "worker" queues it in the database for
`manage.py memory_worker` (django-tasks-db's worker: chat.worker), "immediate" runs it in the request
once its transaction commits.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.tasks import task, task_backends
from django.utils import timezone

from chat.history import turn_index
from chat.models import Turn
from core.llm import ModelUnavailable
from memoryapp import user_index
from memoryapp.embeddings import get_embedder
from memoryapp.write import remember

logger = logging.getLogger(__name__)

BACKENDS = {"worker": "worker", "immediate": "default"}  # MEMORY_TASK_BACKEND -> TASKS alias
RETRY_BASE_SECONDS = 2.0


def memory_backend() -> str:
    return BACKENDS[settings.MEMORY_TASK_BACKEND]


def enqueue_write(
    *,
    user_id: int,
    turn_id: int,
    attempt: int = 1,
    delay: float = 0.0,
    turn_vector: Sequence[float] | None = None,
    embedding_model: str | None = None,
) -> None:
    """Queue the write of one turn on the configured backend (`delay` only where it can defer).
    `turn_vector` is the turn's embedding from its read path, by `embedding_model`."""
    alias = memory_backend()
    queued = remember_turn.using(backend=alias)
    if delay and task_backends[alias].supports_defer:
        queued = queued.using(run_after=timezone.now() + timedelta(seconds=delay))
    vector = None if turn_vector is None else [round(float(x), 7) for x in turn_vector]
    queued.enqueue(
        user_id=user_id, turn_id=turn_id, attempt=attempt, turn_vector=vector, embedding_model=embedding_model
    )


@task
def remember_turn(
    *,
    user_id: int,
    turn_id: int,
    attempt: int = 1,
    turn_vector: list[float] | None = None,
    embedding_model: str | None = None,
) -> int:
    """Run the write path on one user turn and record how it went on the turn.

    The turn stays QUEUED while its write waits or runs. A model failure is tried again with
    back-off, up to MEMORY_WRITE_ATTEMPTS in all, where the backend can defer; then the turn is
    FAILED and the chat offers "Retry memory". Running a write twice stores nothing twice: the
    upsert and the evidence row are keyed by content and by turn. The turn's embedding from its
    read path is used when it is by the model this process embeds with. A turn whose write ran
    (not one that carried a secret or asked to forget) is then indexed for the chat history
    reference (chat.history) with that embedding. A write that leaves the user at
    MEMORY_USER_INDEX_AT memories makes their approximate indexes (memoryapp.user_index).
    """
    user = get_user_model().objects.get(pk=user_id)
    turn = Turn.objects.filter(pk=turn_id, user=user).first()
    if turn is None:  # deleted with its conversation while the write waited
        return 0
    embedder = get_embedder()
    vector = None
    if turn_vector is not None and embedding_model == embedder.name:
        vector = np.asarray(turn_vector, dtype=np.float32)
    try:
        if vector is None:
            vector = embedder.embed([turn.content])[0]
        written = remember(user, turn, turn_vector=vector)
    except ModelUnavailable as exc:
        retry = attempt < settings.MEMORY_WRITE_ATTEMPTS and task_backends[memory_backend()].supports_defer
        logger.warning(
            "memory write for turn %s failed (attempt %d): %s%s", turn_id, attempt, exc, "; retrying" if retry else ""
        )
        if retry:
            enqueue_write(
                user_id=user_id,
                turn_id=turn_id,
                attempt=attempt + 1,
                delay=RETRY_BASE_SECONDS**attempt,
                turn_vector=turn_vector,
                embedding_model=embedding_model,
            )
        else:
            Turn.objects.filter(pk=turn_id, user=user).update(memory_state=Turn.MemoryState.FAILED)
        return 0
    state = {"secret": Turn.MemoryState.WITHHELD, "forget": Turn.MemoryState.FORGET}.get(
        written.declined, Turn.MemoryState.DONE
    )
    with transaction.atomic():
        Turn.objects.filter(pk=turn_id, user=user).update(memory_state=state)
        if state == Turn.MemoryState.DONE:
            turn_index(user=user, turn=turn, vector=vector, embedding_model=embedder.name)
    if written.stored:  # a user who has just reached the mark gets approximate indexes
        user_index.ensure(user.pk, embedder.name, len(vector), unless_checked_within=user_index.RECHECK_AFTER)
    return written.stored
