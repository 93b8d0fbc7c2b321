"""Admin building blocks shared by the apps: read-only pages and inlines, links between records.

The admin is where staff answer "why did it say that?": a record of what happened, so most
pages are read-only. Nothing is registered here.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, IntegerField, Model, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

SNIPPET_CHARS = 120


class ReadOnlyMixin:
    """Nothing is added, changed or deleted through this page or inline."""

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ReadOnlyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """View permission only: the page is a record of what happened."""


class ReadOnlyInline(ReadOnlyMixin, admin.TabularInline):
    """An inline that shows history."""

    extra = 0
    can_delete = False
    show_change_link = False


def annotated(obj: Model, name: str) -> Any:
    """A value the admin's queryset annotated the row with (`.annotate(...)` in `get_queryset`)."""
    return vars(obj)[name]


def count_of(model: type[Model], field: str) -> Coalesce:
    """How many rows of `model` refer to the row through `field`, counted in a subquery that names
    the owner too. Not `Count` over a join: that groups by the row's id alone, and a table keyed
    by (user_id, id) (core.distribution) must be grouped by its whole key."""
    rows = model._default_manager.filter(**{field: OuterRef("pk"), "user": OuterRef("user")}).order_by().values(field)
    return Coalesce(Subquery(rows.annotate(total=Count("*")).values("total"), output_field=IntegerField()), 0)


def admin_link(obj: Model | None, label: str | None = None) -> str:
    """A link to the object's admin change page, or a dash when provenance was lost."""
    if obj is None:
        return "-"
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label if label is not None else str(obj))


def snippet(text: str) -> str:
    """The first SNIPPET_CHARS characters of a text."""
    return Truncator(text).chars(SNIPPET_CHARS)


def turn_label(turn) -> str:
    """`c-1a2b3c4d #3 user: first words…`; needs the turn's conversation loaded."""
    return f"{turn.conversation.public_id} #{turn.seq} {turn.role}: {snippet(' '.join(turn.content.split()))}"
