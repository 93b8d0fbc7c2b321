"""The chat REST API: conversations and turns, through the same services as the pages.

Every lookup is keyed by `request.user`: another user's conversation id is a 404.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat.forms import TurnForm
from chat.selectors import conversation_get, conversation_list, conversation_turns, turn_views, user_turn_get
from chat.serializers import ConversationSerializer, TurnSerializer
from chat.services import (
    ReplyOutcome,
    chat_reply,
    chat_user_turn,
    conversation_create,
    conversation_delete,
    turn_redact,
)
from core.api import (
    NO_SUCH_PAGE,
    TOO_MANY,
    BoundedJSONParser,
    DetailSerializer,
    FormCheckedTextField,
    StrictCharField,
    validated,
)
from core.outage import DATABASE_UNAVAILABLE, unavailable
from core.outage import DETAIL as OUTAGE_DETAIL
from core.ratelimit import ChatThrottle, LoginThrottle
from core.requests import SignedInApiRequest
from core.tokens import token_for, token_lifetime, token_revoke

NOT_FOUND = OpenApiResponse(DetailSerializer, description="No such conversation among the caller's own.")
NO_SUCH_TURN = OpenApiResponse(DetailSerializer, description="No such user turn in the caller's conversation.")


@extend_schema_serializer(component_name="ChatExchange")
class ExchangeSerializer(serializers.Serializer):
    """A user turn and its reply; the memories the reply was given are on `reply.memories_used`."""

    user_turn = TurnSerializer()
    reply = TurnSerializer()


@extend_schema_serializer(component_name="ChatModelFailure")
class ModelFailureSerializer(serializers.Serializer):
    """The model did not answer. The user turn is saved; POST to `retry_url` to ask again."""

    detail = serializers.CharField()
    user_turn = TurnSerializer()
    retry_url = serializers.URLField()


@extend_schema_serializer(component_name="ChatUnavailable")
class OutageSerializer(serializers.Serializer):
    """The database went away while the reply was made. The user turn is saved; POST to
    `retry_url` to ask again (Retry-After says when)."""

    detail = serializers.CharField()
    retry_url = serializers.URLField()


REPLY_UNAVAILABLE = PolymorphicProxySerializer(
    component_name="ChatReplyUnavailable",
    serializers=[ModelFailureSerializer, OutageSerializer],
    resource_type_field_name=None,
)


def _reply_or_outage(request: SignedInApiRequest, conversation, user_turn, success_status: int):
    """The reply to a saved user turn (`_outcome_response`); when the database goes away while
    it is made, 503 with Retry-After that says the message was saved and where to retry, as a
    model failure does (nothing is read back from the database to say it)."""
    try:
        outcome = chat_reply(user=request.user, user_turn=user_turn)
    except DATABASE_UNAVAILABLE:
        retry = reverse("chat_api:turn_reply", args=[conversation.public_id, user_turn.seq])
        return unavailable(
            request,
            detail=f"{OUTAGE_DETAIL} Your message was saved; retry to ask again.",
            retry_url=request.build_absolute_uri(retry),
        )
    return _outcome_response(request, outcome, success_status)


def _outcome_response(request: SignedInApiRequest, outcome: ReplyOutcome, success_status: int) -> Response:
    """The exchange, or 503 with the saved user turn and where to retry when the model failed."""
    turns = [outcome.user_turn] + ([outcome.reply] if outcome.reply else [])
    views = turn_views(user=request.user, turns=turns)
    if outcome.reply is None:
        conversation = outcome.user_turn.conversation
        retry = reverse("chat_api:turn_reply", args=[conversation.public_id, outcome.user_turn.seq])
        body = {
            "detail": f"{outcome.error} Your message was saved; retry to ask again.",
            "user_turn": views[0],
            "retry_url": request.build_absolute_uri(retry),
        }
        return Response(ModelFailureSerializer(body).data, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    return Response(ExchangeSerializer({"user_turn": views[0], "reply": views[1]}).data, status=success_status)


class ConversationListApi(generics.ListAPIView):
    """The caller's conversations, most recently active first; POST starts a new one."""

    serializer_class = ConversationSerializer

    @extend_schema_serializer(component_name="ConversationCreate")
    class InputSerializer(serializers.Serializer):
        title = StrictCharField(max_length=200, required=False, default="", allow_blank=True)
        temporary = serializers.BooleanField(
            required=False,
            default=False,
            help_text="A temporary chat reads no memory, writes none, and is deleted for good "
            f"{settings.CHAT_TEMPORARY_HOURS} hours after its last turn.",
        )

    def get_queryset(self):
        return conversation_list(user=self.request.user)

    @extend_schema(
        operation_id="conversations_list", responses={200: ConversationSerializer(many=True), 404: NO_SUCH_PAGE}
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="conversations_create",
        request=InputSerializer,
        responses={201: ConversationSerializer, 400: OpenApiResponse(description="The title is too long.")},
    )
    def post(self, request: SignedInApiRequest) -> Response:
        data = validated(self.InputSerializer, request)
        conversation = conversation_create(
            user=request.user,
            title=data["title"],
            temporary=data["temporary"],
        )
        return Response(ConversationSerializer(conversation).data, status=status.HTTP_201_CREATED)


class ConversationDetailApi(APIView):
    """One conversation; DELETE removes it and its turns (memories learned in it stay unless
    `?forget_memories=true`)."""

    @extend_schema(operation_id="conversations_retrieve", responses={200: ConversationSerializer, 404: NOT_FOUND})
    def get(self, request: SignedInApiRequest, public_id: str) -> Response:
        return Response(ConversationSerializer(conversation_get(user=request.user, public_id=public_id)).data)

    @extend_schema(
        operation_id="conversations_delete",
        parameters=[
            OpenApiParameter(
                "forget_memories",
                bool,
                description="Also soft-delete the memories first learned in this conversation.",
                default=False,
            )
        ],
        responses={204: None, 404: NOT_FOUND},
    )
    def delete(self, request: SignedInApiRequest, public_id: str) -> Response:
        conversation = conversation_get(user=request.user, public_id=public_id)
        forget = request.query_params.get("forget_memories", "").lower() in {"1", "true", "yes", "on"}
        conversation_delete(user=request.user, conversation=conversation, forget_memories=forget)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TurnListApi(APIView):
    """A conversation's turns in order; POST says something and gets the reply."""

    throttle_classes = [ChatThrottle]

    @extend_schema_serializer(component_name="TurnCreate")
    class InputSerializer(serializers.Serializer):
        content = FormCheckedTextField(
            form_class=TurnForm,
            form_field="content",
            max_chars=settings.CHAT_MAX_TURN_CHARS,
            help_text="What the user says (not empty, not too long).",
        )

    @extend_schema(operation_id="turns_list", responses={200: TurnSerializer(many=True), 404: NOT_FOUND})
    def get(self, request: SignedInApiRequest, public_id: str) -> Response:
        conversation = conversation_get(user=request.user, public_id=public_id)
        views = conversation_turns(user=request.user, conversation=conversation)
        return Response(TurnSerializer(views, many=True).data)

    @extend_schema(
        operation_id="turns_create",
        request=InputSerializer,
        responses={
            201: ExchangeSerializer,
            400: OpenApiResponse(description="The message is empty, too long or contains a NUL; nothing was saved."),
            404: NOT_FOUND,
            429: TOO_MANY,
            503: REPLY_UNAVAILABLE,
        },
    )
    def post(self, request: SignedInApiRequest, public_id: str) -> Response:
        """Save the user turn first, then ask for the reply; when the model fails the turn stays saved."""
        conversation = conversation_get(user=request.user, public_id=public_id)
        data = validated(self.InputSerializer, request)
        turn = chat_user_turn(user=request.user, conversation=conversation, content=data["content"])
        return _reply_or_outage(request, conversation, turn, status.HTTP_201_CREATED)


class TurnReplyApi(APIView):
    """The reply to one user turn: made once, so asking again returns the same reply (the retry)."""

    throttle_classes = [ChatThrottle]

    @extend_schema(
        operation_id="turns_reply",
        request=None,
        responses={
            200: ExchangeSerializer,
            404: NO_SUCH_TURN,
            429: TOO_MANY,
            503: REPLY_UNAVAILABLE,
        },
    )
    def post(self, request: SignedInApiRequest, public_id: str, seq: int) -> Response:
        conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)
        return _reply_or_outage(request, conversation, user_turn, status.HTTP_200_OK)


class TurnRedactApi(APIView):
    """Remove the secret values (passwords, keys, card, bank and ID numbers) from one user turn
    and its reply, for good: each is replaced by a marker naming its kind."""

    @extend_schema_serializer(component_name="TurnRedaction")
    class OutputSerializer(serializers.Serializer):
        removed = serializers.IntegerField(help_text="How many secret values were replaced in the turn.")
        turn = TurnSerializer()

    @extend_schema(
        operation_id="turns_redact",
        request=None,
        responses={
            200: OutputSerializer,
            404: NO_SUCH_TURN,
        },
    )
    def post(self, request: SignedInApiRequest, public_id: str, seq: int) -> Response:
        conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)
        removed = turn_redact(user=request.user, turn=user_turn)
        (view,) = turn_views(user=request.user, turns=[user_turn])
        return Response(self.OutputSerializer({"removed": removed, "turn": view}).data)


class TokenRequestSerializer(AuthTokenSerializer):
    """DRF's username-and-password check, with text fields that say in the schema what they refuse."""

    username = StrictCharField(label="Username", write_only=True)
    password = StrictCharField(
        label="Password", style={"input_type": "password"}, trim_whitespace=False, write_only=True
    )

    def validate(self, attrs: dict) -> dict:
        # The name in its compatibility form (NFKC), as the sign-in form reads it: one account
        # has one name on every way in, and the limit counts the name looked up.
        attrs["username"] = get_user_model().normalize_username(attrs["username"])
        return super().validate(attrs)


class TokenObtainApi(ObtainAuthToken):
    """A token for programs: username and password in, `Authorization: Token <key>` out, valid
    for API_TOKEN_DAYS from its creation (the same token until then, a new one after) and
    revoked by a password change; DELETE revokes the caller's token. Limited like sign-ins."""

    throttle_classes = [LoginThrottle]
    serializer_class = TokenRequestSerializer

    def perform_authentication(self, request: Request) -> None:
        # Lazily, on DELETE only: a program renewing its expired token with its password may
        # still send the old `Authorization` header, which must not refuse the renewal.
        pass

    # ObtainAuthToken names its own parsers; these are the project's, with the JSON depth bound.
    parser_classes = [BoundedJSONParser, FormParser, MultiPartParser]

    @extend_schema_serializer(component_name="Token")
    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()
        expires_at = serializers.DateTimeField()

    @extend_schema(
        operation_id="auth_token",
        request=TokenRequestSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(description="Wrong username or password, or a missing field."),
            429: TOO_MANY,
        },
        auth=[],
    )
    def post(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = token_for(serializer.validated_data["user"])
        # A credential: no cache, shared or private, keeps a copy.
        return Response(
            {"token": token.key, "expires_at": token.created + token_lifetime()},
            headers={"Cache-Control": "no-store"},
        )

    @extend_schema(
        operation_id="auth_token_revoke",
        request=None,
        responses={204: None, 401: OpenApiResponse(DetailSerializer, description="Not signed in.")},
    )
    def delete(self, request: Request, *args, **kwargs) -> Response:
        if not request.user.is_authenticated:
            return Response({"detail": "Sign in or send your token to revoke it."}, status=status.HTTP_401_UNAUTHORIZED)
        token_revoke(request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
