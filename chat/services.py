"""Writes to the conversation log, and one chat turn end to end."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from chat import assistant, prompting
from chat.history import Excerpt, history_for_turn, history_log, quoted_before
from chat.models import Conversation, HistoryRecall, Turn
from chat.selectors import temporary_expired_before
from chat.tasks import enqueue_write, remember_turn
from core.llm import ModelUnavailable
from core.ratelimit import forget_account
from core.sessions import sign_out_everywhere
from memoryapp.models import MemorySettings
from memoryapp.parsed import parse_turn
from memoryapp.read.recall import Recalled, TurnRead, read_turn
from memoryapp.selectors import memory_paused, memory_switches, recalled_before
from memoryapp.sensitive import redact, secret_values
from memoryapp.services import memory_admin_log_erase, memory_detach_conversation, memory_forget_asked, recall_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

TITLE_CHARS = 60


def conversation_create(*, user: User, title: str = "", temporary: bool = False) -> Conversation:
    """A new conversation; a temporary one reads no memory, writes none, and is deleted for good
    CHAT_TEMPORARY_HOURS after its last turn (`conversation_purge_temporary`)."""
    return Conversation.objects.create(user=user, title=title[:200], temporary=temporary)


def conversation_purge_temporary() -> int:
    """Delete for good every temporary conversation whose last turn is CHAT_TEMPORARY_HOURS old
    (as `conversation_delete` does, owner by owner); returns how many."""
    expired = list(
        Conversation.objects.filter(temporary=True, updated_at__lt=temporary_expired_before())
        .select_related("user")
        .order_by("pk")
    )
    for conversation in expired:
        conversation_delete(user=conversation.user, conversation=conversation)
    return len(expired)


def _title_of(content: str) -> str:
    """A conversation's title from its first message, with no secret value in it."""
    return " ".join(redact(content)[0].split())[:TITLE_CHARS]


@transaction.atomic
def turn_redact(*, user: User, turn: Turn) -> int:
    """Replace the secret values (memoryapp.sensitive) in a user turn with markers that name their
    kind, for good: in the turn, in its reply, and in the conversation's summary. The turn is
    marked `redacted_at` and leaves the chat history reference (chat.history). Returns how many
    values were replaced in the turn itself."""
    locked = get_object_or_404(Turn.objects.select_for_update(), pk=turn.pk, user=user, role=Turn.Role.USER)
    values = secret_values(locked.content)
    text, count = redact(locked.content)
    now = timezone.now()
    if count:
        # Its index for the chat history reference was made from the secret words: it goes too.
        Turn.objects.filter(pk=locked.pk, user=user).update(
            content=text, redacted_at=now, embedding=None, embedding_model="", search=None
        )
    reply = Turn.objects.filter(user=user, reply_to=locked).first()
    if reply is not None:
        reply_text, in_reply = redact(reply.content, values=values)
        if in_reply:
            Turn.objects.filter(pk=reply.pk, user=user).update(content=reply_text, redacted_at=now)
    conversation = Conversation.objects.get(pk=locked.conversation_id, user=user)
    summary, in_summary = redact(conversation.summary, values=values)
    if in_summary:
        Conversation.objects.filter(pk=conversation.pk, user=user).update(summary=summary)
    turn.content, turn.redacted_at = (text, now) if count else (locked.content, locked.redacted_at)
    return count


@transaction.atomic
def turn_append(
    *,
    user: User,
    conversation: Conversation,
    role: str,
    content: str,
    reply_to: Turn | None = None,
    model_name: str = "",
) -> Turn:
    """Append a turn with the next seq. Concurrent appends to one conversation serialise on
    the conversation row, so each gets a distinct seq and none is lost. The new turn's
    `conversation` is the conversation as this append left it (its title comes from its
    first user turn); the caller's object is left as it was."""
    # The conversation may have been deleted since the caller looked it up: a 404, not a 500.
    locked = get_object_or_404(Conversation.objects.select_for_update(), pk=conversation.pk, user=user)
    last = Turn.objects.filter(conversation=locked, user=user).aggregate(last=Max("seq"))["last"] or 0
    turn = Turn.objects.create(
        conversation=locked,
        user=user,
        seq=last + 1,
        role=role,
        content=content,
        reply_to=reply_to,
        model_name=model_name,
        memory_state=Turn.MemoryState.PENDING if role == Turn.Role.USER else "",
    )
    changes: dict = {"updated_at": turn.created_at}
    if not locked.title and role == Turn.Role.USER:
        changes["title"] = _title_of(content)
    Conversation.objects.filter(pk=locked.pk, user=user).update(**changes)
    for name, value in changes.items():
        setattr(locked, name, value)
    return turn


@transaction.atomic
def chat_user_turn(*, user: User, conversation: Conversation, content: str) -> Turn:
    """Step 1 of a chat turn: store what the user said, before any model is involved.

    - A turn that asks to forget ("Forget that I'm a nurse") deletes what it names at once, with
      the turn, so that none of it reaches this turn's reply
      (memoryapp.services.memory_forget_asked). A deletion the user asks for is carried out
      even in a temporary chat or while memory is paused.
    - A turn that carries a secret value (memoryapp.sensitive) is WITHHELD at once; the value
      never reaches a model (chat.prompting) and the page offers to remove it (`turn_redact`).
    - A turn in a temporary chat, or said while memory is paused, is marked so.
    Such turns are never written to memory: only a PENDING turn has its write queued."""
    turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content)
    state = None
    said = parse_turn(content)
    declines = said.declined
    if declines == "forget":
        forgotten = memory_forget_asked(user=user, turn=turn, said=said)
        state = Turn.MemoryState.FORGET
        logger.info("turn %s asked to forget; %d memories deleted", turn.pk, len(forgotten))
    elif declines == "secret":
        state = Turn.MemoryState.WITHHELD
    elif turn.conversation.temporary:
        state = Turn.MemoryState.TEMPORARY
    elif memory_paused(user=user):
        state = Turn.MemoryState.PAUSED
    if state is not None:
        Turn.objects.filter(pk=turn.pk, user=user).update(memory_state=state)
        turn.memory_state = state
    return turn


@dataclass
class ReplyOutcome:
    user_turn: Turn
    reply: Turn | None = None
    recalled: list[Recalled] = field(default_factory=list)
    excerpts: list[Excerpt] = field(default_factory=list)  # of the user's past conversations
    error: str | None = None


def _memory_off(conversation: Conversation, switches: MemorySettings) -> str:
    """Why a reply in this conversation reads no memory ("temporary", "paused"), or ""."""
    if conversation.temporary:
        return "temporary"
    return "paused" if switches.paused else ""


def _read_safely(user: User, user_turn: Turn, *, memory_off: str, indexed_model: str) -> TurnRead | None:
    """The memories for a reply; none in a temporary chat or while memory is paused. The probe
    is the turn as a model may read it: it is embedded, maybe by an endpoint elsewhere."""
    if memory_off:
        return None
    try:
        return read_turn(user, prompting.model_text(user_turn), indexed_model=indexed_model)
    except ModelUnavailable:
        # Memory helps the answer; its absence must not cost the user their reply.
        logger.warning("recall failed; answering without memories")
        return None


def _excerpts(user: User, user_turn: Turn, conversation: Conversation, read: TurnRead | None) -> list[Excerpt]:
    """The excerpts of the user's past conversations for a reply (chat.history) that fit its
    request; the caller gives no `read` when memory is off for it or the user turned the
    reference off. The turn a memory given to the reply was learned from is not quoted too: the
    memory is there."""
    if read is None:
        return []
    found = history_for_turn(
        user=user,
        text=prompting.model_text(user_turn),
        read=read,
        conversation=conversation,
        known_turn_ids=[item.memory.source_turn_id for item in read.recalled if item.memory.source_turn_id],
    )
    return prompting.excerpts_within(found)


def _recall(user: User, user_turn: Turn, conversation: Conversation) -> tuple[str, TurnRead | None, ReplyOutcome]:
    """The first step of a reply: why memory is off for it, if it is; what the read path found;
    and the outcome so far, with the memories and the excerpts of past conversations it is given."""
    switches = memory_switches(user=user)
    memory_off = _memory_off(conversation, switches)
    read = _read_safely(user, user_turn, memory_off=memory_off, indexed_model=switches.indexed_model)
    outcome = ReplyOutcome(
        user_turn=user_turn,
        recalled=read.recalled if read else [],
        excerpts=_excerpts(user, user_turn, conversation, read if switches.reference_history else None),
    )
    return memory_off, read, outcome


@dataclass(frozen=True)
class ModelRequest:
    """What goes to the model for one reply: the user's standing instructions, the head summary,
    the recent turns that fit the window and the memory note of each user turn among them that
    had one (this turn's from its recall, earlier ones from the recall log). `unsummarised` are
    older turns that no longer fit and are not in the summary yet; `summary_fold` folds them in."""

    standing: str
    summary: str
    summary_through_seq: int
    notes: dict[int, str]
    recent: list[Turn]
    unsummarised: list[Turn]

    @property
    def messages(self) -> list[dict[str, str]]:
        return prompting.build_messages(
            standing=self.standing, summary=self.summary, notes=self.notes, recent=self.recent
        )


def build_request(
    *,
    conversation: Conversation,
    user_turn: Turn,
    recalled: list[Recalled],
    memory_off: str = "",
    excerpts: list[Excerpt] | None = None,
) -> ModelRequest:
    """The request for the reply to `user_turn`: the conversation's summary, and the recent turns
    up to this one that fit the window, each user turn with the memories and the excerpts of past
    conversations its reply was given (none at all while memory is off for this conversation: a
    temporary chat, or paused). Reads only."""
    history = list(
        Turn.objects.filter(
            conversation=conversation,
            user=user_turn.user_id,
            seq__gt=conversation.summary_through_seq,
            seq__lte=user_turn.seq,
        ).order_by("seq")
    )
    notes: dict[int, str] = {}
    if not memory_off:
        earlier = [turn.pk for turn in history if turn.role == Turn.Role.USER and turn.pk != user_turn.pk]
        given = recalled_before(user_id=user_turn.user_id, turn_ids=earlier) if earlier else {}
        given[user_turn.pk] = recalled
        quoted = quoted_before(user_id=user_turn.user_id, turn_ids=earlier) if earlier else {}
        quoted[user_turn.pk] = excerpts or []
        for turn_id in given.keys() | quoted.keys():
            parts = [prompting.memory_note(given.get(turn_id, [])), prompting.history_note(quoted.get(turn_id, []))]
            if note := "\n\n".join(part for part in parts if part):
                notes[turn_id] = note
    standing = prompting.standing_note(recalled)
    window = prompting.fit_window(
        turns=history,
        fixed_tokens=prompting.fixed_tokens(standing=standing, summary=conversation.summary),
        budget=settings.CHAT_CONTEXT_TOKENS,
        max_turns=settings.CHAT_MAX_RECENT_TURNS,
        notes=notes,
    )
    return ModelRequest(
        standing=standing,
        summary=conversation.summary,
        summary_through_seq=conversation.summary_through_seq,
        notes={turn.pk: notes[turn.pk] for turn in window.recent if turn.pk in notes},
        recent=window.recent,
        unsummarised=[turn for turn in window.overflow if turn.seq > conversation.summary_through_seq],
    )


def _request_for(conversation: Conversation, outcome: ReplyOutcome, *, memory_off: str) -> ModelRequest:
    """The request for the reply an outcome is for, with what its recall step gave it."""
    return build_request(
        conversation=conversation,
        user_turn=outcome.user_turn,
        recalled=outcome.recalled,
        memory_off=memory_off,
        excerpts=outcome.excerpts,
    )


def summary_fold(request: ModelRequest) -> ModelRequest:
    """The request with its unsummarised turns folded into the head summary (by the model when
    there is one, else extractively). Writes nothing: the new summary is saved with the reply."""
    if not request.unsummarised:
        return request
    return replace(
        request,
        summary=assistant.summarise(request.summary, request.unsummarised),
        summary_through_seq=request.unsummarised[-1].seq,
        unsummarised=[],
    )


def _summary_save(*, user: User, conversation: Conversation, request: ModelRequest) -> None:
    """Keep the summary a reply was built on; a summary that reaches further, saved by a
    concurrent reply, is never replaced by an older one."""
    if request.summary_through_seq > conversation.summary_through_seq:
        Conversation.objects.filter(
            pk=conversation.pk, user=user, summary_through_seq__lt=request.summary_through_seq
        ).update(summary=request.summary, summary_through_seq=request.summary_through_seq)


def _reply_check(*, user: User, user_turn: Turn) -> Turn | None:
    """The reply `user_turn` already has, if any; refuses a turn that is not this user's."""
    if user_turn.user_id != user.pk or user_turn.role != Turn.Role.USER:
        raise PermissionError("a reply needs a user turn of this user")
    return Turn.objects.filter(user=user, reply_to=user_turn).first()


def _reply_save(
    *,
    user: User,
    conversation: Conversation,
    outcome: ReplyOutcome,
    request: ModelRequest,
    read: TurnRead | None,
    text: str,
) -> ReplyOutcome:
    """Keep a reply: the turn, its recall log and the folded summary commit together; then the
    user turn's memory write is queued. A concurrent request that answered first wins."""
    user_turn = outcome.user_turn
    try:
        with transaction.atomic():
            reply = turn_append(
                user=user,
                conversation=conversation,
                role=Turn.Role.ASSISTANT,
                content=text,
                reply_to=user_turn,
                model_name=assistant.model_name(),
            )
            recall_log(user=user, probe_turn=user_turn, reply_turn=reply, recalled=outcome.recalled)
            history_log(user=user, probe_turn=user_turn, reply_turn=reply, excerpts=outcome.excerpts)
            _summary_save(user=user, conversation=conversation, request=request)
    except IntegrityError:
        # One reply per turn: theirs stands.
        return ReplyOutcome(user_turn=user_turn, reply=Turn.objects.get(user=user, reply_to=user_turn))
    outcome.reply = reply
    # Only once the model has answered: while the endpoint is failing, a second call for
    # the memory write would only double the user's wait. Retrying the reply queues it.
    memory_write_enqueue(user=user, turn=user_turn, read=read)
    return _reply_settled(user=user, outcome=outcome)


def _reply_settled(*, user: User, outcome: ReplyOutcome) -> ReplyOutcome:
    # The turn as it stands now (its memory write may have run already), not the caller's copy.
    outcome.user_turn = Turn.objects.select_related("conversation").get(pk=outcome.user_turn.pk, user=user)
    return outcome


def chat_reply(*, user: User, user_turn: Turn) -> ReplyOutcome:
    """Step 2 of a chat turn: recall, build the request, answer, log, then remember.

    Idempotent per user turn: a turn that already has a reply gets it back, so a retried
    or doubled request never produces two answers. When the model fails, the user's turn is
    kept, nothing else is written (the reply, its recall log and the folded summary commit
    together), and the outcome carries a message for a retry button. The durable-memory
    write is queued once per user turn, after its reply.
    """
    existing = _reply_check(user=user, user_turn=user_turn)
    if existing is not None:
        return ReplyOutcome(user_turn=user_turn, reply=existing)
    conversation = get_object_or_404(Conversation, pk=user_turn.conversation_id, user=user)
    memory_off, read, outcome = _recall(user, user_turn, conversation)
    try:
        request = summary_fold(_request_for(conversation, outcome, memory_off=memory_off))
        text = assistant.generate_reply(
            request.messages, outcome.recalled, memory_off=memory_off, excerpts=outcome.excerpts
        )
    except ModelUnavailable as exc:
        outcome.error = str(exc)
        return _reply_settled(user=user, outcome=outcome)
    return _reply_save(user=user, conversation=conversation, outcome=outcome, request=request, read=read, text=text)


STOPPED_NOTE = "\n\n[Stopped before the end.]"


@dataclass(frozen=True)
class ReplyProgress:
    """One step of a streamed reply: what it is waiting for, or the next piece of its text.
    Neither ("") is a heartbeat: the reply is still being written."""

    status: str = ""
    text: str = ""


def reply_stop_request(*, user: User, user_turn: Turn) -> bool:
    """Ask the reply being written to `user_turn` to stop; it keeps what it has so far."""
    return bool(
        Turn.objects.filter(pk=user_turn.pk, user=user, role=Turn.Role.USER).update(
            reply_stop_requested_at=timezone.now()
        )
    )


def _stop_requested(*, user: User, user_turn: Turn) -> bool:
    return Turn.objects.filter(pk=user_turn.pk, user=user, reply_stop_requested_at__isnull=False).exists()


def chat_reply_stream(
    *, user: User, user_turn: Turn, poll: float = 0.25
) -> Generator[ReplyProgress | ReplyOutcome, None, None]:
    """`chat_reply`, told as it happens: progress, then the reply's text piece by piece, then
    the ReplyOutcome. The same rules hold (one reply per turn, the user's turn kept on any
    failure). Every `poll` seconds it looks for a stop request (`reply_stop_request`), and
    while the model is silent it yields a heartbeat:
    a stopped reply keeps the text it has, marked as stopped, or none if it had not begun. A
    reader that goes away mid-reply (the page was closed) stops it the same way."""
    existing = _reply_check(user=user, user_turn=user_turn)
    if existing is not None:
        yield ReplyOutcome(user_turn=user_turn, reply=existing)
        return
    conversation = get_object_or_404(Conversation, pk=user_turn.conversation_id, user=user)
    Turn.objects.filter(pk=user_turn.pk, user=user).update(reply_stop_requested_at=None)
    yield ReplyProgress(status="Recalling memories")
    memory_off, read, outcome = _recall(user, user_turn, conversation)
    parts: list[str] = []
    stream = None
    try:
        request = _request_for(conversation, outcome, memory_off=memory_off)
        if request.unsummarised:
            yield ReplyProgress(status="Summarising earlier turns")
            request = summary_fold(request)
        yield ReplyProgress(status="Waiting for the model")
        stream = assistant.reply_stream(
            request.messages, outcome.recalled, memory_off=memory_off, excerpts=outcome.excerpts
        )
        stopped = yield from _streamed(stream, user=user, user_turn=user_turn, poll=poll, parts=parts)
    except ModelUnavailable as exc:
        outcome.error = str(exc)
        yield _reply_settled(user=user, outcome=outcome)
        return
    except GeneratorExit:
        # The reader went away: keep what was written, as a stop would.
        if stream is not None:
            stream.stop()
            if parts:
                _reply_save(
                    user=user,
                    conversation=conversation,
                    outcome=outcome,
                    request=request,
                    read=read,
                    text="".join(parts).rstrip() + STOPPED_NOTE,
                )
        raise
    text = "".join(parts).rstrip()
    if stopped:
        if not text:
            outcome.error = "You stopped the reply before it began."
            yield _reply_settled(user=user, outcome=outcome)
            return
        text += STOPPED_NOTE
    yield _reply_save(user=user, conversation=conversation, outcome=outcome, request=request, read=read, text=text)


def _streamed(
    stream: assistant.ReplyStream, *, user: User, user_turn: Turn, poll: float, parts: list[str]
) -> Generator[ReplyProgress, None, bool]:
    """The stream's pieces as progress, each kept in `parts` as it comes (a heartbeat while the
    model is silent); every `poll` seconds, a look for a stop request, which stops the stream.
    Returns whether it was stopped."""
    checked = time.monotonic()
    for piece in stream.pieces(wait=poll):
        if piece:
            parts.append(piece)
        yield ReplyProgress(text=piece)
        if time.monotonic() - checked >= poll:
            checked = time.monotonic()
            if _stop_requested(user=user, user_turn=user_turn):
                stream.stop()
                return True
    return False


def turn_memory_state(*, user: User, turn: Turn) -> str:
    return Turn.objects.filter(pk=turn.pk, user=user).values_list("memory_state", flat=True).get()


def memory_write_enqueue(*, user: User, turn: Turn, retry: bool = False, read: TurnRead | None = None) -> bool:
    """Queue the durable-memory write for a user turn, once (or again after a failure). With
    the turn's `read`, its embedding goes along, so the write does not embed the turn again."""
    allowed = [Turn.MemoryState.PENDING] + ([Turn.MemoryState.FAILED] if retry else [])
    claimed = Turn.objects.filter(pk=turn.pk, user=user, role=Turn.Role.USER, memory_state__in=allowed).update(
        memory_state=Turn.MemoryState.QUEUED
    )
    if claimed:
        vector, model = None, None
        if read is not None and read.vector is not None:
            vector, model = [float(x) for x in read.vector], read.embedding_model
        transaction.on_commit(
            lambda: enqueue_write(user_id=user.pk, turn_id=turn.pk, turn_vector=vector, embedding_model=model)
        )
    return bool(claimed)


def _memory_write_tasks(*, user_id: int):
    """The task rows of a user's memory writes, queued or finished. A running one is left to its
    worker (deleting it under the worker would fail the worker's own update); the
    retention prune (`prune_db_task_results`) takes it later."""
    return DBTaskResult.objects.filter(
        task_path=remember_turn.module_path, args_kwargs__kwargs__user_id=user_id
    ).exclude(status="RUNNING")


class WorkerLost(Exception):
    """The worker running a memory write stopped before finishing it (killed, or its machine died)."""


# Two workers looking for abandoned writes at once would both queue the same turn again.
_REQUEUE_LOCK = 0x6D656D77  # any constant of our own: one requeue at a time, across processes


def memory_writes_requeue(
    *, older_than: timedelta, abandoned: Callable[[list[str]], bool] | None = None
) -> dict[str, int]:
    """Queue again the memory writes a dead worker left behind; returns what was done.

    A write claimed by a worker that was killed (-9) stays RUNNING in the queue for ever, and
    its turn QUEUED. This marks such a task failed and queues the turn's write again; it also
    queues a QUEUED turn whose task never reached the queue (the process died between the
    commit and the enqueue), `older_than` ago or more. A running write is taken as abandoned
    when `abandoned` says so of the workers that claimed it (chat.worker asks whether the last
    one's lease has lapsed), however long it has run; without `abandoned`, when it has run for
    longer than `older_than` (`make run` passes 0 minutes at start, when no other worker is
    alive). One requeue runs at a time (a
    transaction-wide lock), so two workers never queue one turn twice; and nothing is written
    twice: the write path is keyed by content and by turn.
    """
    cutoff = timezone.now() - older_than
    path = remember_turn.module_path
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_REQUEUE_LOCK])
        running = DBTaskResult.objects.select_for_update(skip_locked=True).filter(task_path=path, status="RUNNING")
        if abandoned is None:
            stale = list(running.filter(started_at__lt=cutoff))
        else:
            stale = [result for result in running if abandoned(result.worker_ids)]
        for result in stale:
            result.set_failed(WorkerLost(f"worker {', '.join(result.worker_ids) or '?'} stopped mid-write"))
        waiting = {
            result.args_kwargs["kwargs"].get("turn_id")
            for result in DBTaskResult.objects.filter(task_path=path, status__in=["READY", "RUNNING"])
        }
        orphans = [
            (turn_id, user_id)
            for turn_id, user_id in Turn.objects.filter(
                role=Turn.Role.USER, memory_state=Turn.MemoryState.QUEUED, created_at__lt=cutoff
            ).values_list("pk", "user_id")
            if turn_id not in waiting
        ]
        for turn_id, user_id in orphans:
            enqueue_write(user_id=user_id, turn_id=turn_id)
    return {"stale tasks failed": len(stale), "writes queued again": len(orphans)}


@transaction.atomic
def account_erase(*, user: User) -> None:
    """Delete a user and, by cascade, every conversation, turn, memory (with its vector),
    evidence, recall and history row that belongs to them; and what would still name them:
    the admin log of their memories (it keeps each memory's text), the rate-limit counters
    keyed by their username or id, their memory writes in the task queue (each carries its
    turn's embedding), and their sessions on every device."""
    sign_out_everywhere(user=user)
    memory_admin_log_erase(user=user)
    _memory_write_tasks(user_id=user.pk).delete()
    forget_account(username=user.get_username(), user_id=user.pk)
    get_user_model().objects.filter(pk=user.pk).delete()


@transaction.atomic
def conversation_delete_all(*, user: User) -> int:
    """Delete every conversation of the user, each as `conversation_delete` does (memories stay);
    returns how many. The chat log is the tier that still shows the model what the user said
    after "Forget everything", so the forget page offers this."""
    conversations = list(Conversation.objects.filter(user=user).order_by("pk"))
    for conversation in conversations:
        conversation_delete(user=user, conversation=conversation)
    return len(conversations)


@transaction.atomic
def conversation_delete(*, user: User, conversation: Conversation, forget_memories: bool = False) -> int:
    """Delete a conversation and all its turns. Memories learned in it stay (they are the
    user's to keep or delete), without a source turn to point to, unless `forget_memories`
    soft-deletes them too. Returns how many memories were forgotten.

    Each statement names the owner: the memory tier lets go of the conversation first
    (memoryapp.services.memory_detach_conversation), then its turns and the conversation go
    by explicit deletes rather than a cascade that would select rows by id alone.
    """
    locked = get_object_or_404(Conversation.objects.select_for_update(), pk=conversation.pk, user=user)
    forgotten = memory_detach_conversation(user=user, conversation_id=locked.pk, forget_learned=forget_memories)
    # What its replies quoted, and every quotation of its turns in other conversations' replies.
    HistoryRecall.objects.filter(user=user).filter(
        Q(conversation_id=locked.pk) | Q(source_turn__conversation_id=locked.pk, source_turn__user=user)
    ).delete()
    turn_ids = list(
        Turn.objects.filter(conversation=locked, user=user, role=Turn.Role.USER).values_list("pk", flat=True)
    )
    # A write not run yet finds its turn gone and does nothing; its row (with the turn's
    # embedding) goes with the conversation.
    _memory_write_tasks(user_id=user.pk).filter(args_kwargs__kwargs__turn_id__in=turn_ids).delete()
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {Turn._meta.db_table} WHERE conversation_id = %s AND user_id = %s", [locked.pk, user.pk]
        )
        cursor.execute(
            f"DELETE FROM {Conversation._meta.db_table} WHERE id = %s AND user_id = %s", [locked.pk, user.pk]
        )
    return forgotten
