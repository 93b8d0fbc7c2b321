"""Pieces every REST API of the project shares: strict text fields, the common error answers, a
JSON parser with a depth bound, the reading of a request's body, and page numbers that refuse an
empty page."""

from __future__ import annotations

import io
from typing import Any

from django import forms
from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import pagination, serializers
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.fields import empty
from rest_framework.parsers import JSONParser
from rest_framework.request import Request


class StrictCharField(serializers.CharField):
    """A string field that takes only strings: DRF's own turns 123 into "123"."""

    default_error_messages = {"not_a_string": "Must be a string, not {kind}."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string", kind=type(data).__name__)
        return super().to_internal_value(data)


class FormCheckedTextField(StrictCharField):
    """Text checked by one field of a Django form, so the API and the pages keep one rule and one message.

    NUL and white space are left to the form too, so the API answers with exactly the words the page uses.
    `max_chars` is the form's length limit, for the schema (a form may check it in its own clean method).
    """

    def __init__(self, *, form_class: type[forms.Form], form_field: str, max_chars: int, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]
        self.form_class, self.form_field, self.max_chars = form_class, form_field, max_chars
        checked = form_class.base_fields[form_field]
        self.allow_blank = not checked.required
        # An empty string stops here, before the form: with the form's own words.
        self.error_messages["blank"] = checked.error_messages["required"]

    def run_validation(self, data: Any = empty) -> str:
        value = super().run_validation(data)
        form = self.form_class(data={self.form_field: value})
        if not form.is_valid():
            raise serializers.ValidationError([str(error) for error in form.errors[self.form_field]])
        return form.cleaned_data[self.form_field]


# What a text field takes, as an OpenAPI (ECMA-262) pattern: no NUL anywhere and, unless blank is
# allowed, at least one character that is not white space (the fields strip it).
TEXT_PATTERN = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"
TEXT_OR_BLANK_PATTERN = r"^[^\u0000]*$"
UNSTRIPPED_TEXT_PATTERN = r"^[^\u0000]+$"  # a password: white space is kept and counts


class StrictCharFieldSchema(OpenApiSerializerFieldExtension):
    """The schema of a text field says what it refuses (NUL, a blank value, more than its limit), so a
    client, or a fuzzer, can tell a valid request from an invalid one without asking."""

    target_class = StrictCharField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction != "request":
            return schema
        field = self.target
        if isinstance(field, FormCheckedTextField):
            schema["maxLength"] = field.max_chars
            stripped = True  # by the form
        else:
            stripped = field.trim_whitespace
        if field.allow_blank:
            schema["pattern"] = TEXT_OR_BLANK_PATTERN
        else:
            schema["pattern"] = TEXT_PATTERN if stripped else UNSTRIPPED_TEXT_PATTERN
            schema["minLength"] = max(schema.get("minLength", 1), 1)
        return schema


class DetailSerializer(serializers.Serializer):
    """An error or refusal, in DRF's usual shape."""

    detail = serializers.CharField()


def validated(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """The request's body as `serializer_class` reads it; a 400 with each field's errors when it
    cannot."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


# Error answers every API shares, for their OpenAPI descriptions.
NO_SUCH_PAGE = OpenApiResponse(DetailSerializer, description="No such page: past the last one, or not a number.")
TOO_MANY = OpenApiResponse(
    DetailSerializer, description="Rate limited: too many requests; the Retry-After header says when to try again."
)


MAX_JSON_DEPTH = 64

_BAD_REQUEST = "Bad request: a NUL character in the path or query string, or malformed input."


_UNAVAILABLE = "The database is briefly unreachable (core.outage); the Retry-After header says when to try again."


def document_shared_errors(result: dict, **kwargs: Any) -> dict:
    """drf-spectacular postprocessing hook: any operation can answer 400 (core.middleware.RejectNulMiddleware
    runs before every view) and 503 (a database outage, core.outage), so every operation documents them."""
    for path in result.get("paths", {}).values():
        for operation in path.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault("400", {"description": _BAD_REQUEST})
                operation["responses"].setdefault("503", {"description": _UNAVAILABLE})
    return result


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing nesting deeper than MAX_JSON_DEPTH with a 400 before parsing:
    Python's decoder would otherwise recurse until RecursionError, a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read() if stream is not None else b""
        if _too_deep(body):
            raise ParseError(f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep.")
        data = super().parse(io.BytesIO(body), media_type, parser_context)
        if _has_lone_surrogate(data):
            raise ParseError(
                "JSON parse error - text must be valid Unicode: an unpaired surrogate escape "
                "(such as \\ud800) is not a character."
            )
        return data


def _has_lone_surrogate(value: Any) -> bool:
    """JSON's \\u escapes can spell half of a surrogate pair, which is no character at all and
    cannot be stored or even encoded as UTF-8; anywhere in a body (a key, a value) it is a 400."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


def _too_deep(body: bytes) -> bool:
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    depth, in_string, escaped = 0, False, False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False


class PageNumberPagination(pagination.PageNumberPagination):
    """DRF's page numbers, except that a `page` given empty is the invalid page it is (404, as
    for "abc" or 0), not the first: the schema says a page is an integer."""

    def get_page_number(self, request: Request, paginator: Any) -> Any:
        if request.query_params.get(self.page_query_param) == "":
            raise NotFound(self.invalid_page_message)
        return super().get_page_number(request, paginator)
