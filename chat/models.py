"""The conversation log: every turn, in order, owned by one user.

Distribution by user: every table here holds one user's rows, and its primary key (user_id, id),
its unique constraints and its foreign keys to the other tables of users' data all include
`user_id`, so the schema can be spread over database nodes by user (docs/scale-out.md). Django's
single-column constraints on those relations are off (`db_constraint=False`): migrations make
composite ones instead, (user_id, memory_id) -> (user_id, id), which also keep a row from
pointing at another user's. Deletes still cascade through Django, as before.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import VectorField


def new_public_id() -> str:
    return "c-" + secrets.token_hex(4)


class Conversation(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    # Unique per user (below): every address of a conversation names its owner too.
    public_id = models.CharField(max_length=16, default=new_public_id, editable=False)
    title = models.CharField(max_length=200, blank=True)
    # The head summary: turns with seq <= summary_through_seq are folded into `summary`
    # and left out of the model's request (the log itself keeps them).
    summary = models.TextField(blank=True)
    summary_through_seq = models.PositiveIntegerField(default=0)
    # A temporary chat reads no memory and writes none, and is deleted for good
    # CHAT_TEMPORARY_HOURS after its last turn (`purge_deleted`).
    temporary = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "public_id"], name="conversation_public_id_per_user")]
        indexes = [models.Index(fields=["user", "-updated_at"], name="conversation_user_recent")]

    def __str__(self) -> str:
        return f"{self.public_id} {self.title}".strip()

    @property
    def expires_at(self):
        """When a temporary conversation is deleted for good: CHAT_TEMPORARY_HOURS after its last turn."""
        if not self.temporary:
            return None
        return self.updated_at + timedelta(hours=settings.CHAT_TEMPORARY_HOURS)


class TurnManager(models.Manager):
    """Turns without their index for the chat history reference (a 512-float embedding and a
    tsvector), which only chat.history reads, in SQL of its own."""

    def get_queryset(self):
        return super().get_queryset().defer("embedding", "search")


class Turn(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns", db_constraint=False)
    # Denormalised from the conversation so every statement on turns carries the owner.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="turns")
    seq = models.PositiveIntegerField()

    class MemoryState(models.TextChoices):
        """Where the durable-memory write for a user turn stands."""

        PENDING = "pending", "Not yet processed"
        QUEUED = "queued", "Queued"
        DONE = "done", "Processed"
        FAILED = "failed", "Failed (can be retried)"
        WITHHELD = "withheld", "Nothing kept: it carried a secret"
        FORGET = "forget", "Nothing kept: a request to forget"
        PAUSED = "paused", "Nothing kept: memory was paused"
        TEMPORARY = "temporary", "Nothing kept: a temporary chat"
        NOT_APPLICABLE = "", "Not a user turn"

    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    # On an assistant turn: the user turn it answers, and the model that wrote it.
    reply_to = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="replies", db_constraint=False
    )
    model_name = models.CharField(max_length=100, blank=True)
    memory_state = models.CharField(max_length=16, choices=MemoryState.choices, blank=True, default="")
    # Set when the user presses Stop on the reply being written to this turn; a streamed
    # reply looks for it between pieces and keeps what it has written so far.
    reply_stop_requested_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Set when the user had the secret values in this turn replaced by markers (`turn_redact`).
    redacted_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # The chat history reference (chat.history): a user turn whose memory write has run is
    # indexed for later conversations by its embedding (the read path's, by `embedding_model`)
    # and its words (`search`, in its language's text search configuration and `simple`).
    embedding = VectorField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=100, blank=True, default="", db_default="", editable=False)
    search = SearchVectorField(null=True, blank=True, editable=False)

    objects = TurnManager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "conversation", "seq"], name="turn_seq_unique_in_conversation"),
            models.UniqueConstraint(fields=["user", "reply_to"], name="turn_one_reply"),
        ]
        indexes = [
            # A user's indexed turns of one embedding model, sorted exactly by the reference.
            models.Index(
                fields=["user", "embedding_model"],
                condition=models.Q(embedding__isnull=False),
                name="turn_indexed_user_model",
            ),
            GinIndex(fields=["search"], name="turn_search"),
        ]
        ordering = ["conversation_id", "seq"]

    def __str__(self) -> str:
        return f"{self.conversation_id}#{self.seq} {self.role}"


class HistoryRecall(models.Model):
    """A past turn of the user's quoted into the request for one assistant reply (chat.history):
    for the chat history reference what MemoryRecall is for memories, so "why did it say that?"
    is a lookup. It goes with the quoted turn: a deleted conversation leaves no record of its words."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    probe_turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="history_probed", db_constraint=False)
    reply_turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="history_used", db_constraint=False)
    source_turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="history_quoted", db_constraint=False)
    similarity = models.FloatField()
    rank = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "reply_turn", "source_turn"], name="history_recall_once_per_reply")
        ]
        indexes = [
            models.Index(fields=["user", "reply_turn"], name="history_recall_user_reply"),
            models.Index(fields=["user", "source_turn", "created_at"], name="history_recall_user_source"),
        ]
        ordering = ["reply_turn_id", "rank"]

    def __str__(self) -> str:
        return f"turn {self.source_turn_id} in reply {self.reply_turn_id} (rank {self.rank}, {self.similarity:.2f})"


class WorkerLease(models.Model):
    """A memory worker that is alive (chat.worker): it renews `renewed_at` from a thread of its own
    every few seconds. A memory write still running under a worker whose lease has lapsed was
    abandoned (the worker was killed, or its machine died) and is queued again by the next
    worker that looks. Not user data: a worker serves every user."""

    worker_id = models.CharField(max_length=64, primary_key=True)
    hostname = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    renewed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.worker_id} ({self.hostname}:{self.pid})"
