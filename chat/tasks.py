"""Background work for chat, as Django tasks (immediate by default; any worker backend in production)."""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.tasks import task

from chat.models import Turn
from core.llm import ModelUnavailable
from memoryapp.extraction import declined
from memoryapp.services import remember

logger = logging.getLogger(__name__)


@task
def remember_turn(*, user_id: int, turn_id: int) -> int:
    """Run the write path on one user turn and record how it went on the turn."""
    user = get_user_model().objects.get(pk=user_id)
    turn = Turn.objects.get(pk=turn_id, user=user)
    try:
        written = remember(user, turn)
    except ModelUnavailable as exc:
        logger.warning("memory write for turn %s failed: %s", turn_id, exc)
        Turn.objects.filter(pk=turn_id, user=user).update(memory_state=Turn.MemoryState.FAILED)
        return 0
    state = {"secret": Turn.MemoryState.WITHHELD, "forget": Turn.MemoryState.FORGET}.get(
        declined(turn.content) or "", Turn.MemoryState.DONE
    )
    Turn.objects.filter(pk=turn_id, user=user).update(memory_state=state)
    return written
