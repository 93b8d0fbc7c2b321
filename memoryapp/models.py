"""The durable tier: facts about a user, each with where it came from and where it went.

Three tables answer the incident questions with one query each:
- Memory: the belief itself, with its first source (conversation, turn).
- MemoryEvidence: every turn that stated it (first statement and restatements).
- MemoryRecall: every assistant reply it was put into, with similarity and rank,
  so "why did it say that?" and "who else was shown this?" are lookups, not forensics.

Every key here includes the owner, as chat.models describes: primary keys (user_id, id), unique
constraints with `user_id`, and composite foreign keys made by migrations in place of Django's.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from pgvector.django import VectorField


class Memory(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    text = models.TextField()
    # No fixed dimension: each row records the model that made it, and recall compares a
    # probe only with rows of the same model, so changing models never mixes spaces.
    embedding = VectorField()
    embedding_model = models.CharField(max_length=100)
    content_hash = models.CharField(max_length=64)
    # A single-valued kind of fact ("home", "name", ...): a newer fact in the slot retires this one.
    slot = models.CharField(max_length=64, blank=True, default="", db_default="")
    # A special category of personal data ("health", "a child", "religion", ...; memoryapp.keys):
    # such a memory is given only to a turn on its topic, never as a near miss.
    sensitive = models.CharField(max_length=32, blank=True, default="", db_default="")
    # A standing instruction (memoryapp.standing), given to every reply whatever the turn.
    standing = models.BooleanField(default=False, db_default=False)
    # Where it came from: a chat turn (the source below), or the user's own hand on the memory page.
    added_by_hand = models.BooleanField(default=False, db_default=False)
    # The embedding model its keys (MemoryKey) were last written with; "" before they were.
    keys_model = models.CharField(max_length=100, blank=True, default="", db_default="")
    # Whether those keys include the fact asked as a question: a heavy user's recall finds such a
    # memory by its fact asked, and looks for the others by their text (memoryapp.user_index).
    asked = models.BooleanField(default=False, db_default=False)
    source_conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False
    )
    source_turn = models.ForeignKey(
        "chat.Turn", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False
    )
    times_seen = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # A restated fact refreshes the live row; after a delete it may live again as a new row.
            models.UniqueConstraint(
                fields=["user", "content_hash"],
                condition=models.Q(deleted_at__isnull=True),
                name="memory_live_hash_unique_per_user",
            ),
        ]
        indexes = [
            # Recall scans one user's live rows of one model and sorts them exactly: no
            # approximate index, so no row of the user's true top-k can be lost to a filter.
            models.Index(
                fields=["user", "embedding_model"],
                condition=models.Q(deleted_at__isnull=True),
                name="memory_live_user_model",
            ),
            models.Index(fields=["user", "-created_at"], name="memory_user_created"),
            # Every turn reads the user's standing instructions, most recently stated first.
            models.Index(
                fields=["user", "-last_seen"],
                condition=models.Q(deleted_at__isnull=True, standing=True),
                name="memory_live_standing",
            ),
        ]
        verbose_name_plural = "memories"

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def is_live(self) -> bool:
        return self.deleted_at is None


class MemoryKey(models.Model):
    """A need a memory answers, as the user would voice it ("What do I do for a living?"), with
    its embedding: recall scores a memory by the best of its text and its keys.

    Written with the memory (and again when it is corrected or re-embedded), by the memory's
    kind (memoryapp.keys) or by the model; the owner is on the row so that every statement
    that reads keys names the user, as every statement on memories does.
    """

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="keys", db_constraint=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")

    class Kind(models.TextChoices):
        # the fact asked as the user would ask it: its own words, so it counts as the text does
        QUESTION = "question", "The fact, asked"
        # a need of the fact's kind ("What do I do for a living?"): counted the key offset lower,
        # since it shares its form with every turn that asks the same of another fact
        NEED = "need", "A need of its kind"

    text = models.CharField(max_length=200)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.NEED)
    embedding = VectorField()
    embedding_model = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "memory", "embedding_model", "text"], name="memory_key_once_per_model"
            )
        ]
        indexes = [
            models.Index(fields=["user", "memory", "embedding_model"], name="memory_key_user_memory"),
            # a wording's memories in id order (MemoryNeed), and whether any key has it still
            models.Index(
                fields=["user", "embedding_model", "text", "memory"],
                condition=~models.Q(kind="question"),
                name="memory_key_need_wording",
            ),
        ]

    def __str__(self) -> str:
        return self.text


class MemoryNeed(models.Model):
    """A need (MemoryKey of kind NEED) once per user, embedding model and wording, with its
    embedding. Needs repeat: every memory of a kind has the same ones ("Where do I live?"), so a
    heavy user's 100,000 memories have some 180,000 need keys in a few thousand wordings.
    Recall's approximate form (memoryapp.read.recall) scans these wordings and then takes, for
    each, the memories that have it in id order, which is the order in which the exact sort
    breaks their tie.

    Written with the keys (memoryapp.write.store.write_keys); a wording no key has any more is
    removed by `purge_deleted`. Keyed by its owner and natural key, so it distributes with the
    user's other rows (core.distribution).
    """

    pk = models.CompositePrimaryKey("user", "embedding_model", "text")
    # found by the primary key, which begins with the user
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    embedding_model = models.CharField(max_length=100)
    text = models.CharField(max_length=200)
    embedding = VectorField()

    def __str__(self) -> str:
        return self.text


class MemoryEvidence(models.Model):
    """One statement of a fact: which turn said it, and how well the fact matched it."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="evidence", db_constraint=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.SET_NULL, null=True, related_name="+", db_constraint=False
    )
    turn = models.ForeignKey(
        "chat.Turn", on_delete=models.SET_NULL, null=True, related_name="memory_evidence", db_constraint=False
    )
    created = models.BooleanField(help_text="True when this statement created the memory.")
    gate_similarity = models.FloatField(help_text="Cosine similarity of the fact to the turn that stated it.")
    # The memory's words as this statement left them: the chat's notice keeps saying what was
    # saved then, though the memory is corrected later.
    text = models.TextField(blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "memory", "turn"], name="evidence_once_per_turn")]
        indexes = [models.Index(fields=["user", "turn"], name="evidence_user_turn")]
        verbose_name_plural = "memory evidence"

    def __str__(self) -> str:
        return f"memory {self.memory_id} stated in turn {self.turn_id}"


class MemoryRecall(models.Model):
    """A memory put into the request for one assistant reply."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="recalls", db_constraint=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    probe_turn = models.ForeignKey(
        "chat.Turn", on_delete=models.CASCADE, related_name="recalls_probed", db_constraint=False
    )
    reply_turn = models.ForeignKey(
        "chat.Turn", on_delete=models.CASCADE, related_name="recalls_used", db_constraint=False
    )
    similarity = models.FloatField()
    rank = models.PositiveSmallIntegerField()
    # A standing instruction goes with every reply, whatever its similarity to the message.
    standing = models.BooleanField(default=False)
    # Why it was given: the key of the memory that matched the turn, or "" for its text.
    matched_key = models.CharField(max_length=200, blank=True, default="", db_default="")
    # Given because the turn asked what is remembered about the user ("What do you know about me?").
    profile = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "reply_turn", "memory"], name="recall_once_per_reply")]
        indexes = [
            models.Index(fields=["memory", "created_at"], name="recall_memory_created"),
            models.Index(fields=["user", "reply_turn"], name="recall_user_reply"),
        ]
        ordering = ["reply_turn_id", "rank"]

    def __str__(self) -> str:
        return f"memory {self.memory_id} in reply {self.reply_turn_id} (rank {self.rank}, {self.similarity:.2f})"


class MemoryEvent(models.Model):
    """Append-only history of changes to a memory after it was written: who, what, when.

    Corrections keep the text before and after, so a belief can be traced through edits.
    """

    class Action(models.TextChoices):
        CORRECTED = "corrected", "Corrected"
        DELETED = "deleted", "Deleted"
        RESTORED = "restored", "Restored"
        SUPERSEDED = "superseded", "Superseded by a newer fact"
        EXTENDED = "extended", "Restated with more detail"
        ADDED = "added", "Added by hand"

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="events", db_constraint=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    action = models.CharField(max_length=16, choices=Action.choices)
    old_text = models.TextField(blank=True)
    new_text = models.TextField(blank=True)
    # On "superseded": the memory that replaced this one.
    replaced_by = models.ForeignKey(
        Memory, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False
    )
    # On "deleted" by a request in chat ("Forget that I'm a nurse"): the turn that asked.
    turn = models.ForeignKey(
        "chat.Turn", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["user", "memory", "created_at"], name="event_user_memory_created")]
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"memory {self.memory_id} {self.action}"


class MemorySettings(models.Model):
    """A user's switches for the memory store. No row is the default: memory on."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+")
    # Paused: no memory is read into a reply and nothing is written from a turn said meanwhile
    # (its turn is marked so, and never written later).
    paused = models.BooleanField(default=False)
    # Reference chat history: excerpts of the user's past conversations may go into a reply
    # (chat.history). Off: nothing from past conversations is read; saved memories still are.
    reference_history = models.BooleanField(default=True, db_default=True)
    # Not a switch: the embedding model whose approximate indexes the user has, "" for none
    # (memoryapp.user_index). Recall reads it with the switches, to know which statement to send.
    indexed_model = models.CharField(max_length=100, blank=True, default="", db_default="", editable=False)
    # Not a switch: when those indexes were last checked against the user's rows (user_index.ensure).
    indexes_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "memory settings"

    def __str__(self) -> str:
        history = "referenced" if self.reference_history else "not referenced"
        return f"user {self.user_id}: memory {'paused' if self.paused else 'on'}, chat history {history}"
