"""Staff review of the conversation log: "why did it say that?" on one page.

A reply's page shows the user turn it answers, every memory that was put into its request,
with similarity, rank and where each memory was learned, and every past turn quoted into it
(chat.history); a user turn's page shows what it wrote to memory and which later replies
quoted it. Conversations and turns are a log: nothing is added, edited or
deleted from the admin.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from chat.models import Conversation, HistoryRecall, Turn
from core.admin import ReadOnlyAdmin, ReadOnlyInline, admin_link, annotated, count_of, snippet, turn_label
from memoryapp.models import MemoryEvidence, MemoryRecall


def _memory_label(memory) -> str:
    state = "" if memory.deleted_at is None else " [deleted]"
    return f"{snippet(memory.text)}{state}"


class TurnInline(ReadOnlyInline):
    model = Turn
    fk_name = "conversation"
    readonly_fields = (
        "seq",
        "role",
        "turn",
        "model_name",
        "memory_state",
        "memories_recalled",
        "memories_written",
        "created_at",
    )
    fields = readonly_fields
    ordering = ["seq"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("conversation")
            .annotate(recalled=count_of(MemoryRecall, "reply_turn"), written=count_of(MemoryEvidence, "turn"))
        )

    @admin.display(description="content")
    def turn(self, obj: Turn) -> str:
        return admin_link(obj, Truncator(obj.content).chars(400))

    @admin.display(description="memories recalled")
    def memories_recalled(self, obj: Turn) -> int | str:
        return annotated(obj, "recalled") if obj.role == Turn.Role.ASSISTANT else "-"

    @admin.display(description="memories written")
    def memories_written(self, obj: Turn) -> int | str:
        return annotated(obj, "written") if obj.role == Turn.Role.USER else "-"


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["public_id", "title", "user", "temporary", "turn_count", "created_at", "updated_at"]
    list_filter = ["temporary", "created_at"]
    list_select_related = ["user"]
    search_fields = ["public_id", "title", "user__username", "turns__content"]
    ordering = ["-updated_at", "-id"]
    show_full_result_count = False
    readonly_fields = (
        "public_id",
        "user",
        "title",
        "temporary",
        "summary",
        "summary_through_seq",
        "created_at",
        "updated_at",
    )
    fields = readonly_fields
    inlines = [TurnInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        return super().get_queryset(request).annotate(turn_total=count_of(Turn, "conversation"))

    @admin.display(description="turns", ordering="turn_total")
    def turn_count(self, obj: Conversation) -> int:
        return annotated(obj, "turn_total")


class RecalledMemoryInline(ReadOnlyInline):
    """What went into this reply's request from the durable tier, in rank order."""

    model = MemoryRecall
    fk_name = "reply_turn"
    verbose_name = "recalled memory"
    verbose_name_plural = "memories recalled into this reply"
    readonly_fields = ("rank", "memory_link", "similarity", "memory_owner", "learned_from")
    fields = readonly_fields
    ordering = ["rank"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("memory__user", "memory__source_turn__conversation")
            .defer("memory__embedding")
        )

    @admin.display(description="memory")
    def memory_link(self, obj: MemoryRecall) -> str:
        return admin_link(obj.memory, _memory_label(obj.memory))

    @admin.display(description="memory belongs to")
    def memory_owner(self, obj: MemoryRecall) -> str:
        return obj.memory.user.get_username()

    @admin.display(description="learned from")
    def learned_from(self, obj: MemoryRecall) -> str:
        source = obj.memory.source_turn
        return admin_link(source, turn_label(source)) if source else "-"


class QuotedTurnInline(ReadOnlyInline):
    """What went into this reply's request from the user's past conversations, in rank order."""

    model = HistoryRecall
    fk_name = "reply_turn"
    verbose_name = "quoted past turn"
    verbose_name_plural = "past turns quoted into this reply"
    readonly_fields = ("rank", "source", "similarity")
    fields = readonly_fields
    ordering = ["rank"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("source_turn__conversation")

    @admin.display(description="said in")
    def source(self, obj: HistoryRecall) -> str:
        return admin_link(obj.source_turn, f"{turn_label(obj.source_turn)}: {snippet(obj.source_turn.content)}")


class QuotedInInline(ReadOnlyInline):
    """Every later reply this user turn was quoted into: "who else was shown this?" for the chat
    history reference."""

    model = HistoryRecall
    fk_name = "source_turn"
    verbose_name = "quoted into a reply"
    verbose_name_plural = "quoted into later replies"
    readonly_fields = ("reply", "shown_to", "similarity", "created_at")
    fields = readonly_fields
    ordering = ["-created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("reply_turn__conversation", "user")

    @admin.display(description="reply")
    def reply(self, obj: HistoryRecall) -> str:
        return admin_link(obj.reply_turn, turn_label(obj.reply_turn))

    @admin.display(description="shown to")
    def shown_to(self, obj: HistoryRecall) -> str:
        return obj.user.get_username()


class WrittenMemoryInline(ReadOnlyInline):
    """What this user turn wrote to the durable tier: new memories and restatements."""

    model = MemoryEvidence
    fk_name = "turn"
    verbose_name = "memory written"
    verbose_name_plural = "memories written from this turn"
    readonly_fields = ("memory_link", "statement", "gate_similarity", "created_at")
    fields = readonly_fields
    ordering = ["id"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("memory").defer("memory__embedding")

    @admin.display(description="memory")
    def memory_link(self, obj: MemoryEvidence) -> str:
        return admin_link(obj.memory, _memory_label(obj.memory))

    @admin.display(description="statement")
    def statement(self, obj: MemoryEvidence) -> str:
        return "first statement (created it)" if obj.created else "restatement (refreshed it)"


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "conversation_link", "seq", "role", "user", "short_text", "memory_state", "created_at"]
    list_display_links = ["__str__"]
    list_filter = ["role", "memory_state", "model_name", "created_at"]
    list_select_related = ["conversation", "user"]
    search_fields = ["content", "conversation__public_id", "user__username"]
    ordering = ["-created_at", "-id"]
    show_full_result_count = False
    readonly_fields = (
        "conversation_link",
        "user",
        "seq",
        "role",
        "content",
        "answers",
        "answered_by",
        "model_name",
        "memory_state",
        "redacted_at",
        "created_at",
    )
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Turn]:
        return super().get_queryset(request).select_related("conversation", "user", "reply_to__conversation")

    def get_inlines(self, request: HttpRequest, obj: Turn | None) -> list:
        if obj is None:
            return []
        if obj.role == Turn.Role.ASSISTANT:
            return [RecalledMemoryInline, QuotedTurnInline]
        return [WrittenMemoryInline, QuotedInInline]

    @admin.display(description="conversation", ordering="conversation__public_id")
    def conversation_link(self, obj: Turn) -> str:
        return admin_link(obj.conversation, obj.conversation.public_id)

    @admin.display(description="content")
    def short_text(self, obj: Turn) -> str:
        return snippet(obj.content)

    @admin.display(description="answers (the user turn, the probe for recall)")
    def answers(self, obj: Turn) -> str:
        return admin_link(obj.reply_to, turn_label(obj.reply_to)) if obj.reply_to else "-"

    @admin.display(description="answered by")
    def answered_by(self, obj: Turn) -> str:
        if obj.role != Turn.Role.USER:
            return "-"
        reply = Turn.objects.filter(reply_to=obj, user=obj.user_id).select_related("conversation").first()
        return admin_link(reply, turn_label(reply)) if reply else "not answered"


@admin.register(HistoryRecall)
class HistoryRecallAdmin(ReadOnlyAdmin):
    """Every past turn quoted into every reply (chat.history)."""

    list_display = ["source", "shown_to", "reply", "similarity", "rank", "created_at"]
    list_filter = ["user", "created_at"]
    list_select_related = ["user", "source_turn__conversation", "reply_turn__conversation"]
    search_fields = ["source_turn__content", "user__username", "conversation__public_id"]
    ordering = ["-created_at", "-id"]
    show_full_result_count = False
    fields = ["source_turn", "user", "conversation", "probe_turn", "reply_turn", "similarity", "rank", "created_at"]

    @admin.display(description="quoted turn")
    def source(self, obj: HistoryRecall) -> str:
        return admin_link(obj.source_turn, f"{turn_label(obj.source_turn)}: {snippet(obj.source_turn.content)}")

    @admin.display(description="shown to", ordering="user__username")
    def shown_to(self, obj: HistoryRecall) -> str:
        return obj.user.get_username()

    @admin.display(description="reply turn")
    def reply(self, obj: HistoryRecall) -> str:
        return admin_link(obj.reply_turn, turn_label(obj.reply_turn))
