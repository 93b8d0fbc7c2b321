"""Serializers for the chat API. A turn carries what memory did around it: recalled, quoted or written."""

from __future__ import annotations

from rest_framework import serializers

from chat.models import Turn


class ConversationSerializer(serializers.Serializer):
    public_id = serializers.CharField()
    title = serializers.CharField()
    temporary = serializers.BooleanField(help_text="Reads no memory and writes none; deleted for good at `expires_at`.")
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="On a temporary conversation: its last turn plus CHAT_TEMPORARY_HOURS."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MemoryUsedSerializer(serializers.Serializer):
    """A memory given to a reply (a MemoryRecall row)."""

    memory_id = serializers.IntegerField()
    text = serializers.CharField(source="memory.text")
    similarity = serializers.FloatField()
    rank = serializers.IntegerField()
    standing = serializers.BooleanField(help_text="Given as a standing instruction, whatever its similarity.")


class HistoryUsedSerializer(serializers.Serializer):
    """A past turn of the user's quoted into a reply (a HistoryRecall row: chat.history)."""

    conversation = serializers.CharField(source="source_turn.conversation.public_id")
    seq = serializers.IntegerField(source="source_turn.seq")
    said_at = serializers.DateTimeField(source="source_turn.created_at")
    text = serializers.CharField(source="source_turn.content")
    similarity = serializers.FloatField()
    rank = serializers.IntegerField()


class MemoryWrittenSerializer(serializers.Serializer):
    """A memory a user turn created or restated (a MemoryEvidence row)."""

    memory_id = serializers.IntegerField()
    text = serializers.CharField(source="memory.text", help_text="The memory's words now.")
    text_then = serializers.CharField(source="text", help_text="The memory's words as this turn left them.")
    created = serializers.BooleanField(help_text="True when this turn created the memory, false when it restated it.")


class TurnSerializer(serializers.Serializer):
    """A turn as `chat.selectors.TurnView`."""

    seq = serializers.IntegerField(source="turn.seq")
    role = serializers.ChoiceField(source="turn.role", choices=Turn.Role.choices)
    content = serializers.CharField(source="turn.content")
    created_at = serializers.DateTimeField(source="turn.created_at")
    model_name = serializers.CharField(source="turn.model_name", help_text="On a reply: the model that wrote it.")
    memory_state = serializers.ChoiceField(
        source="turn.memory_state",
        choices=Turn.MemoryState.choices,
        help_text="On a user turn: where the memory write stands.",
    )
    answered = serializers.BooleanField(help_text="On a user turn: whether it has a reply.")
    redacted_at = serializers.DateTimeField(
        source="turn.redacted_at", allow_null=True, help_text="When secret values were removed from this turn."
    )
    memories_used = MemoryUsedSerializer(many=True, source="recalled", help_text="On a reply, in rank order.")
    history_used = HistoryUsedSerializer(
        many=True, source="quoted", help_text="On a reply: past turns quoted from earlier conversations, by rank."
    )
    memories_written = MemoryWrittenSerializer(many=True, source="written", help_text="On a user turn.")
