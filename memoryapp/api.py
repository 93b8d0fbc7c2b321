"""The memory REST API: the caller's own memories, through the same selectors and services as the pages.

Every lookup is keyed by `request.user`: another user's memory id is a 404, exactly like a
missing one, so the API never confirms that someone else's memory exists.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import NO_SUCH_PAGE, TOO_MANY, DetailSerializer, FormCheckedTextField, StrictCharField, validated
from core.llm import ModelUnavailable
from core.ratelimit import ChatThrottle, SearchThrottle
from core.requests import SignedInApiRequest
from memoryapp.forms import MemoryTextForm
from memoryapp.selectors import (
    memory_export,
    memory_get,
    memory_list,
    memory_recently_deleted,
    memory_search,
    memory_switches,
    memory_trace,
)
from memoryapp.serializers import (
    MemoryDeletedSerializer,
    MemoryExportSerializer,
    MemorySearchHitSerializer,
    MemorySerializer,
    MemoryTraceSerializer,
)
from memoryapp.services import (
    MemoryConflict,
    MemoryRefused,
    memory_add,
    memory_correct,
    memory_pause_set,
    memory_reference_history_set,
    memory_restore,
    memory_soft_delete,
)

EMBEDDER_DOWN = "The embedding model could not be reached; nothing was changed. Try again."
EMBEDDER_UNAVAILABLE = OpenApiResponse(DetailSerializer, description="The embedding model is unavailable.")


def _unavailable(detail: str = EMBEDDER_DOWN) -> Response:
    return Response({"detail": detail}, status=status.HTTP_503_SERVICE_UNAVAILABLE)


NOT_FOUND = OpenApiResponse(DetailSerializer, description="No such memory among the caller's own.")


def _fact_field(help_text: str) -> FormCheckedTextField:
    """A memory's text, checked as the memory page's form checks it."""
    return FormCheckedTextField(
        form_class=MemoryTextForm, form_field="text", max_chars=settings.MEMORY_MAX_FACT_CHARS, help_text=help_text
    )


class MemoryListApi(generics.ListAPIView):
    """The caller's live memories, newest first, optionally filtered by plain text; POST adds one by hand."""

    serializer_class = MemorySerializer
    throttle_classes = [ChatThrottle]  # on POST: an addition is embedded, like a message

    @extend_schema_serializer(component_name="MemoryAddition")
    class InputSerializer(serializers.Serializer):
        text = _fact_field(f"The fact, as it is to be remembered, 1 to {settings.MEMORY_MAX_FACT_CHARS} characters.")

    def get_queryset(self):
        return memory_list(user=self.request.user, text=self.request.query_params.get("q", "")[:200])

    @extend_schema(
        operation_id="memories_list",
        parameters=[OpenApiParameter("q", str, description="Only memories whose text contains this.")],
        responses={200: MemorySerializer(many=True), 404: NO_SUCH_PAGE},
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="memories_add",
        request=InputSerializer,
        responses={
            201: MemoryTraceSerializer,
            200: OpenApiResponse(MemoryTraceSerializer, description="The same fact was already remembered: refreshed."),
            400: OpenApiResponse(
                description="Empty or too long (the field's errors), or a memory that may not be kept (`detail`)."
            ),
            429: TOO_MANY,
            503: EMBEDDER_UNAVAILABLE,
        },
    )
    def post(self, request: SignedInApiRequest) -> Response:
        """Add a memory by hand: stored as written, with provenance "added by hand"."""
        data = validated(self.InputSerializer, request)
        try:
            memory, created = memory_add(user=request.user, text=data["text"])
        except MemoryRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except ModelUnavailable:
            return _unavailable()
        trace = memory_trace(user=request.user, memory_id=memory.pk)
        return Response(
            MemoryTraceSerializer(trace).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class MemoryDeletedListApi(generics.ListAPIView):
    """The caller's memories deleted in the last MEMORY_RESTORE_DAYS days, most recently deleted
    first ("Recently deleted"); POST .../{id}/restore/ brings one back."""

    serializer_class = MemoryDeletedSerializer

    def get_queryset(self):
        return memory_recently_deleted(user=self.request.user)

    @extend_schema(
        operation_id="memories_deleted", responses={200: MemoryDeletedSerializer(many=True), 404: NO_SUCH_PAGE}
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)


@extend_schema_serializer(component_name="MemorySettings")
class MemorySettingsSerializer(serializers.Serializer):
    paused = serializers.BooleanField(
        required=False,
        help_text="While true, no memory is read into a reply and nothing the caller says is written; turns said "
        "meanwhile are never written later.",
    )
    reference_history = serializers.BooleanField(
        required=False,
        help_text="Reference chat history: while true (the default), replies may quote the caller's own words "
        "from earlier conversations; false, nothing from past conversations is read.",
    )


class MemorySettingsApi(APIView):
    """The caller's memory switches; PUT or PATCH changes those given."""

    def _answer(self, request: SignedInApiRequest) -> Response:
        return Response(MemorySettingsSerializer(memory_switches(user=request.user)).data)

    @extend_schema(operation_id="memories_settings", responses={200: MemorySettingsSerializer})
    def get(self, request: SignedInApiRequest) -> Response:
        return self._answer(request)

    _change = partial(
        extend_schema,
        request=MemorySettingsSerializer,
        responses={200: MemorySettingsSerializer, 400: OpenApiResponse(description="A switch is not a boolean.")},
    )

    @_change(operation_id="memories_settings_update")
    def put(self, request: SignedInApiRequest) -> Response:
        data = validated(MemorySettingsSerializer, request)
        if "paused" in data:
            memory_pause_set(user=request.user, paused=data["paused"])
        if "reference_history" in data:
            memory_reference_history_set(user=request.user, on=data["reference_history"])
        return self._answer(request)

    @_change(operation_id="memories_settings_partial_update")
    def patch(self, request: SignedInApiRequest) -> Response:
        return self.put(request)


class MemoryDetailApi(APIView):
    """One memory with its provenance; PATCH corrects its text, DELETE soft-deletes it."""

    @extend_schema_serializer(component_name="MemoryCorrection")
    class InputSerializer(serializers.Serializer):
        text = _fact_field(f"The corrected fact, 1 to {settings.MEMORY_MAX_FACT_CHARS} characters.")

    @extend_schema(operation_id="memories_retrieve", responses={200: MemoryTraceSerializer, 404: NOT_FOUND})
    def get(self, request: SignedInApiRequest, memory_id: int) -> Response:
        trace = memory_trace(user=request.user, memory_id=memory_id)
        return Response(MemoryTraceSerializer(trace).data)

    @extend_schema(
        operation_id="memories_correct",
        request=InputSerializer,
        responses={
            200: MemoryTraceSerializer,
            400: OpenApiResponse(description="The text is empty, too long or unusable."),
            404: NOT_FOUND,
            409: OpenApiResponse(DetailSerializer, description="Another live memory already says this."),
            503: EMBEDDER_UNAVAILABLE,
        },
    )
    def patch(self, request: SignedInApiRequest, memory_id: int) -> Response:
        """Correct the text: re-embedded, provenance kept, the edit recorded in the history."""
        memory_get(user=request.user, memory_id=memory_id)  # ownership before validation: 404, not 400
        data = validated(self.InputSerializer, request)
        try:
            memory_correct(user=request.user, memory_id=memory_id, text=data["text"])
        except ValueError as exc:
            return Response({"text": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        except MemoryConflict as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except ModelUnavailable:
            return _unavailable()
        trace = memory_trace(user=request.user, memory_id=memory_id)
        return Response(MemoryTraceSerializer(trace).data)

    @extend_schema(operation_id="memories_delete", responses={204: None, 404: NOT_FOUND})
    def delete(self, request: SignedInApiRequest, memory_id: int) -> Response:
        """Soft delete: never recalled again from the next request on; restorable for a short while."""
        memory_soft_delete(user=request.user, memory_id=memory_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryRestoreApi(APIView):
    """Restore a memory deleted in the last MEMORY_RESTORE_DAYS days ("Recently deleted")."""

    @extend_schema(
        operation_id="memories_restore",
        request=None,
        responses={
            200: MemoryTraceSerializer,
            404: OpenApiResponse(DetailSerializer, description="No such deleted memory, or the undo period passed."),
            409: OpenApiResponse(DetailSerializer, description="The same fact has been remembered again since."),
        },
    )
    def post(self, request: SignedInApiRequest, memory_id: int) -> Response:
        try:
            memory_restore(user=request.user, memory_id=memory_id)
        except MemoryConflict as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        trace = memory_trace(user=request.user, memory_id=memory_id)
        return Response(MemoryTraceSerializer(trace).data)


class MemorySearchApi(APIView):
    """Semantic search over the caller's own live memories: the read path, with its similarity floor."""

    throttle_classes = [SearchThrottle]

    @extend_schema_serializer(component_name="MemorySearch")
    class InputSerializer(serializers.Serializer):
        probe = StrictCharField(max_length=2000, help_text="Text to search for by meaning.")

    @extend_schema_serializer(component_name="MemorySearchResult")
    class OutputSerializer(serializers.Serializer):
        results = MemorySearchHitSerializer(many=True)

    @extend_schema(
        operation_id="memories_search",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(description="No probe, or a blank one."),
            429: TOO_MANY,
            503: EMBEDDER_UNAVAILABLE,
        },
    )
    def post(self, request: SignedInApiRequest) -> Response:
        data = validated(self.InputSerializer, request)
        try:
            hits = memory_search(user=request.user, probe=data["probe"])
        except ModelUnavailable:
            detail = "Search is unavailable right now: the embedding model could not be reached."
            return _unavailable(detail)
        return Response(self.OutputSerializer({"results": hits}).data)


class MemoryExportApi(APIView):
    """Everything remembered about the caller, deleted memories included, with provenance, as a JSON download."""

    @extend_schema(
        operation_id="memories_export",
        responses={200: MemoryExportSerializer},
    )
    def get(self, request: SignedInApiRequest) -> Response:
        data = memory_export(user=request.user)
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        filename = f"memories-{request.user.get_username()}-{stamp}.json"
        return Response(data, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
