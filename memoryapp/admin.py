"""Staff incident review of the durable memory tier.

One memory page answers "where did this belief come from?" (source turn, every statement
with its gate similarity) and "who else was shown this?" (every reply it was put into).
The admin is a record, not an editor: memories are never added or edited here, users
correct their own; staff only soft-delete and restore, through the same services the
users' pages call, so each change leaves both a MemoryEvent and an admin LogEntry.
Embedding vectors are never loaded, shown or editable: every queryset defers them.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from core.admin import ReadOnlyAdmin, ReadOnlyInline, admin_link, snippet, turn_label
from core.requests import SignedInRequest
from memoryapp.models import Memory, MemoryEvent, MemoryEvidence, MemoryKey, MemoryRecall
from memoryapp.services import MemoryConflict, memory_restore, memory_soft_delete


class LiveFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("live", "Live (recalled)"), ("deleted", "Deleted (never recalled)")]

    def queryset(self, request, queryset):
        if self.value() == "live":
            return queryset.filter(deleted_at__isnull=True)
        if self.value() == "deleted":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


class _HistoryInline(ReadOnlyInline):
    """Rows of a memory's history, oldest first, with the rows they name joined in."""

    fk_name = "memory"
    ordering = ["created_at", "id"]
    joined: tuple[str, ...] = ()

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*self.joined)


class EvidenceInline(_HistoryInline):
    """Every turn that stated the memory: the first statement, then restatements."""

    model = MemoryEvidence
    joined = ("conversation", "turn__conversation")
    verbose_name = "statement"
    verbose_name_plural = "stated in (evidence)"
    readonly_fields = ("stated_in", "conversation_link", "statement", "gate_similarity", "created_at")
    fields = readonly_fields

    @admin.display(description="turn")
    def stated_in(self, obj: MemoryEvidence) -> str:
        return admin_link(obj.turn, turn_label(obj.turn)) if obj.turn else "-"

    @admin.display(description="conversation")
    def conversation_link(self, obj: MemoryEvidence) -> str:
        return admin_link(obj.conversation)

    @admin.display(description="statement")
    def statement(self, obj: MemoryEvidence) -> str:
        return "first statement" if obj.created else "restatement"


class RecallInline(ReadOnlyInline):
    """Every assistant reply the memory was put into: who was shown it, when, how similar."""

    model = MemoryRecall
    fk_name = "memory"
    verbose_name = "reply given this memory"
    verbose_name_plural = "given to replies (recalls)"
    readonly_fields = (
        "shown_to",
        "reply",
        "asked",
        "conversation_link",
        "created_at",
        "similarity",
        "rank",
        "standing",
        "matched_key",
    )
    fields = readonly_fields
    ordering = ["-created_at", "-id"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("user", "conversation", "reply_turn__conversation", "probe_turn__conversation")
        )

    @admin.display(description="shown to")
    def shown_to(self, obj: MemoryRecall) -> str:
        return obj.user.get_username()

    @admin.display(description="reply turn")
    def reply(self, obj: MemoryRecall) -> str:
        return admin_link(obj.reply_turn, turn_label(obj.reply_turn))

    @admin.display(description="probe (the turn it answered)")
    def asked(self, obj: MemoryRecall) -> str:
        return admin_link(obj.probe_turn, turn_label(obj.probe_turn))

    @admin.display(description="conversation")
    def conversation_link(self, obj: MemoryRecall) -> str:
        return admin_link(obj.conversation)


class EventInline(_HistoryInline):
    model = MemoryEvent
    joined = ("actor",)
    verbose_name_plural = "history (corrections, deletes, restores)"
    readonly_fields = ("action", "actor", "old_text", "new_text", "created_at")
    fields = readonly_fields


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ["short_text", "user", "is_live", "embedding_model", "times_seen", "created_at", "last_seen"]
    # The user filter lists users, not a DISTINCT over every memory: it scales with accounts, not rows.
    list_filter = [LiveFilter, "user", "embedding_model", "created_at"]
    list_select_related = ["user"]
    search_fields = ["text", "user__username"]
    ordering = ["-created_at", "-id"]
    list_per_page = 50
    show_full_result_count = False  # a second COUNT over every memory buys nothing here
    actions = ["soft_delete_memories", "restore_memories"]
    exclude = ["embedding"]
    fieldsets = [
        (None, {"fields": ["text", "user", "is_live", "deleted_at", "sensitive", "answers"]}),
        ("Provenance", {"fields": ["source_conversation_link", "source_turn_link", "shown_to"]}),
        (
            "Bookkeeping",
            {"fields": ["embedding_model", "content_hash", "times_seen", "created_at", "last_seen", "updated_at"]},
        ),
    ]
    readonly_fields = [
        "text",
        "user",
        "is_live",
        "deleted_at",
        "sensitive",
        "answers",
        "source_conversation_link",
        "source_turn_link",
        "shown_to",
        "embedding_model",
        "content_hash",
        "times_seen",
        "created_at",
        "last_seen",
        "updated_at",
    ]
    inlines = [EvidenceInline, RecallInline, EventInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Memory]:
        # Every memory, deleted ones included; the vector never leaves the database.
        return super().get_queryset(request).defer("embedding")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # The page of one memory is a read-only record; the list keeps change permission
        # so that the soft delete and restore actions (which need it) are offered.
        return obj is None and super().has_change_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # A hard delete would destroy what incident review needs; soft delete is the action.
        return False

    @admin.display(description="text", ordering="text")
    def short_text(self, obj: Memory) -> str:
        return snippet(obj.text)

    @admin.display(description="recalled for questions like")
    def answers(self, obj: Memory) -> str:
        keys = MemoryKey.objects.filter(user_id=obj.user_id, memory=obj, embedding_model=obj.embedding_model)
        return " · ".join(keys.order_by("id").values_list("text", flat=True)) or "its own words only"

    @admin.display(description="live", boolean=True, ordering="deleted_at")
    def is_live(self, obj: Memory) -> bool:
        return obj.is_live

    @admin.display(description="source conversation")
    def source_conversation_link(self, obj: Memory) -> str:
        return admin_link(obj.source_conversation)

    @admin.display(description="source turn")
    def source_turn_link(self, obj: Memory) -> str:
        return admin_link(obj.source_turn, turn_label(obj.source_turn)) if obj.source_turn else "-"

    @admin.display(description="shown to")
    def shown_to(self, obj: Memory) -> str:
        """Which users' replies were given this memory, and how often: one grouped query."""
        rows = (
            MemoryRecall.objects.filter(memory=obj)
            .values("user__username")
            .annotate(replies=Count("id"))
            .order_by("user__username")
        )
        if not rows:
            return "never recalled"
        url = reverse("admin:memoryapp_memoryrecall_changelist") + f"?memory__id__exact={obj.pk}"
        return format_html(
            '{} (<a href="{}">every recall</a>)',
            ", ".join(f"{row['user__username']} ({row['replies']} replies)" for row in rows),
            url,
        )

    def _each(
        self,
        request: SignedInRequest,
        queryset: QuerySet[Memory],
        act: Callable[[Memory], object],
        *,
        logged: str,
        done_as: str,
        skipped_as: str,
    ) -> None:
        """Carry out `act` on each selected memory in its own transaction, log it on the memory,
        and tell the reviewer how many were done and how many were skipped (`act` raised
        Http404: the memory was not in the state the action needs). A memory that may not be
        restored is named in a message of its own."""
        done, skipped = 0, 0
        for memory in queryset.select_related("user"):
            try:
                with transaction.atomic():
                    act(memory)
                    self.log_change(request, memory, logged)
            except Http404:
                skipped += 1
                continue
            except MemoryConflict:
                self.message_user(
                    request,
                    f"Not restored: “{Truncator(memory.text).chars(60)}” ({memory.user.get_username()}) "
                    "has been remembered again since, as a new live memory.",
                    messages.ERROR,
                )
                continue
            done += 1
        self.message_user(request, f"{done_as} {done} memories.", messages.SUCCESS)
        if skipped:
            self.message_user(request, f"{skipped} selected memories {skipped_as}.", messages.WARNING)

    @admin.action(description="Soft delete selected memories (never recalled again)", permissions=["change"])
    def soft_delete_memories(self, request: SignedInRequest, queryset: QuerySet[Memory]) -> None:
        self._each(
            request,
            queryset,
            lambda memory: memory_soft_delete(user=memory.user, memory_id=memory.pk, actor=request.user),
            logged="Soft deleted: hidden from recall; the row is kept for review.",
            done_as="Soft deleted",
            skipped_as="were already deleted",  # by the user or another reviewer
        )

    @admin.action(description="Restore selected deleted memories", permissions=["change"])
    def restore_memories(self, request: SignedInRequest, queryset: QuerySet[Memory]) -> None:
        self._each(
            request,
            queryset,
            lambda memory: memory_restore(user=memory.user, memory_id=memory.pk, actor=request.user, window=False),
            logged="Restored: recalled again from the next request on.",
            done_as="Restored",
            skipped_as="were not deleted",
        )


@admin.register(MemoryRecall)
class MemoryRecallAdmin(ReadOnlyAdmin):
    """Every memory given to every reply: the long form of "who was shown this?"."""

    list_display = ["memory_link", "shown_to", "reply", "similarity", "rank", "standing", "created_at"]
    list_filter = ["user", "created_at"]
    list_select_related = ["user", "memory", "reply_turn__conversation"]
    search_fields = ["memory__text", "user__username", "conversation__public_id"]
    ordering = ["-created_at", "-id"]
    show_full_result_count = False

    fields = [
        "memory",
        "user",
        "conversation",
        "probe_turn",
        "reply_turn",
        "similarity",
        "rank",
        "standing",
        "matched_key",
        "created_at",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryRecall]:
        return super().get_queryset(request).select_related("memory").defer("memory__embedding")

    @admin.display(description="memory")
    def memory_link(self, obj: MemoryRecall) -> str:
        return admin_link(obj.memory, snippet(obj.memory.text))

    @admin.display(description="shown to", ordering="user__username")
    def shown_to(self, obj: MemoryRecall) -> str:
        return obj.user.get_username()

    @admin.display(description="reply turn")
    def reply(self, obj: MemoryRecall) -> str:
        return admin_link(obj.reply_turn, turn_label(obj.reply_turn))
