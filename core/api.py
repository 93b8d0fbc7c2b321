"""Pieces every REST API of the project shares: strict text fields and the common error answers."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.fields import empty


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


# Error answers every API shares, for their OpenAPI descriptions.
NO_SUCH_PAGE = OpenApiResponse(DetailSerializer, description="No such page: past the last one, or not a number.")
TOO_MANY = OpenApiResponse(
    DetailSerializer, description="Rate limited: too many requests; the Retry-After header says when to try again."
)
