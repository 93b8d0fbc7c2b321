"""Serializers of the memory API. Embedding vectors are never serialised."""

from __future__ import annotations

from rest_framework import serializers

from memoryapp.models import MemoryEvent


class MemorySourceSerializer(serializers.Serializer):
    """Where a memory was first stated."""

    conversation = serializers.CharField(source="source_conversation.public_id", allow_null=True)
    turn_seq = serializers.IntegerField(source="source_turn.seq", allow_null=True)
    turn_text = serializers.CharField(source="source_turn.content", allow_null=True)


class MemorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    times_seen = serializers.IntegerField(help_text="How many turns stated this fact.")
    deleted_at = serializers.DateTimeField(allow_null=True, help_text="Set while the memory is deleted.")
    sensitive = serializers.CharField(
        help_text="Its special category (health, a child, religion, ...), or empty; a sensitive memory is given "
        "only to a message on its topic."
    )
    # A declared field: DRF's metaclass takes it off the class, so it never shadows Field.source.
    source = MemorySourceSerializer(source="*")  # type: ignore[assignment]
    added_by_hand = serializers.BooleanField(help_text="Written by the user on the memory page or through the API.")


class MemoryDeletedSerializer(MemorySerializer):
    """A memory under "Recently deleted"."""

    how = serializers.CharField(
        help_text='How it was deleted: "you deleted it", "forgotten in chat" or "replaced by a newer fact".'
    )


class MemoryEvidenceSerializer(serializers.Serializer):
    """One turn that stated the memory."""

    conversation = serializers.CharField(source="conversation.public_id", allow_null=True)
    turn_seq = serializers.IntegerField(source="turn.seq", allow_null=True)
    turn_text = serializers.CharField(source="turn.content", allow_null=True)
    first_statement = serializers.BooleanField(source="created", help_text="True for the turn that created it.")
    similarity_to_turn = serializers.FloatField(source="gate_similarity")
    created_at = serializers.DateTimeField()


class MemoryRecallSerializer(serializers.Serializer):
    """One assistant reply the memory was given to."""

    conversation = serializers.CharField(source="conversation.public_id")
    probe_turn_seq = serializers.IntegerField(source="probe_turn.seq", help_text="The user turn that recalled it.")
    reply_turn_seq = serializers.IntegerField(source="reply_turn.seq")
    reply_text = serializers.CharField(source="reply_turn.content")
    similarity = serializers.FloatField()
    rank = serializers.IntegerField()
    standing = serializers.BooleanField(help_text="Given as a standing instruction, whatever its similarity.")
    matched_key = serializers.CharField(
        help_text="The need of the memory's the message matched (see `answers`), or empty when its text did."
    )
    profile = serializers.BooleanField(help_text="Given because the message asked what is remembered about the user.")
    created_at = serializers.DateTimeField()


class MemoryEventSerializer(serializers.Serializer):
    """A correction, delete or restore."""

    action = serializers.ChoiceField(choices=MemoryEvent.Action.choices)
    old_text = serializers.CharField()
    new_text = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemoryTraceSerializer(serializers.Serializer):
    """A memory with its provenance: every statement, every reply it went into, every change."""

    memory = MemorySerializer()
    answers = serializers.ListField(
        child=serializers.CharField(), source="keys", help_text="The needs it is recalled for, besides its own words."
    )
    evidence = MemoryEvidenceSerializer(many=True)
    recalled_in = MemoryRecallSerializer(many=True, source="recalls", help_text="Newest first.")
    history = MemoryEventSerializer(many=True, source="events", help_text="Oldest first.")


class MemorySearchHitSerializer(serializers.Serializer):
    """A memory found by meaning (a `memoryapp.read.recall.Recalled`)."""

    id = serializers.IntegerField(source="memory.pk")
    text = serializers.CharField(source="memory.text")
    created_at = serializers.DateTimeField(source="memory.created_at")
    last_seen = serializers.DateTimeField(source="memory.last_seen")
    times_seen = serializers.IntegerField(source="memory.times_seen")
    similarity = serializers.FloatField(help_text="Cosine similarity to the probe.")
    rank = serializers.IntegerField(help_text="1 is the nearest.")


class MemoryExportSerializer(serializers.Serializer):
    """Everything remembered about a user: each memory, deleted ones included, as its trace."""

    user = serializers.CharField(help_text="The username.")
    memories = MemoryTraceSerializer(many=True, help_text="Oldest first.")
