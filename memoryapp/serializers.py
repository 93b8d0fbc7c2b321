"""Serializers shared by the memory and chat APIs. Embedding vectors are never serialised."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.fields import empty

from memoryapp.models import MemoryEvent


class StrictCharField(serializers.CharField):
    """A string field that takes only strings: DRF's own turns 123 into "123"."""

    default_error_messages = {"not_a_string": "Must be a string, not {kind}."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string", kind=type(data).__name__)
        return super().to_internal_value(data)


class FormCheckedTextField(StrictCharField):
    """Text checked by one field of a Django form, so the API and the pages keep one rule and one message.

    Blank and NUL are left to the form too, so the API answers with exactly the words the page uses.
    """

    def __init__(self, *, form_class: type[forms.Form], form_field: str, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, trim_whitespace=False, **kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]
        self.form_class, self.form_field = form_class, form_field

    def run_validation(self, data: Any = empty) -> str:
        value = super().run_validation(data)
        form = self.form_class(data={self.form_field: value})
        if not form.is_valid():
            raise serializers.ValidationError(form.errors[self.form_field])
        return form.cleaned_data[self.form_field]


class DetailSerializer(serializers.Serializer):
    """An error or refusal, in DRF's usual shape."""

    detail = serializers.CharField()


# Error answers shared by the memory and chat APIs, for their OpenAPI descriptions.
NO_SUCH_PAGE = OpenApiResponse(DetailSerializer, description="No such page: past the last one, or not a number.")
TOO_MANY = OpenApiResponse(
    DetailSerializer, description="Rate limited: too many requests; the Retry-After header says when to try again."
)


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
    source = MemorySourceSerializer(source="*")


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
    evidence = MemoryEvidenceSerializer(many=True)
    recalled_in = MemoryRecallSerializer(many=True, source="recalls", help_text="Newest first.")
    history = MemoryEventSerializer(many=True, source="events", help_text="Oldest first.")


class MemorySearchHitSerializer(serializers.Serializer):
    """A memory found by meaning (a `memoryapp.selectors.Recalled`)."""

    id = serializers.IntegerField(source="memory.pk")
    text = serializers.CharField(source="memory.text")
    created_at = serializers.DateTimeField(source="memory.created_at")
    last_seen = serializers.DateTimeField(source="memory.last_seen")
    times_seen = serializers.IntegerField(source="memory.times_seen")
    similarity = serializers.FloatField(help_text="Cosine similarity to the probe.")
    rank = serializers.IntegerField(help_text="1 is the nearest.")
