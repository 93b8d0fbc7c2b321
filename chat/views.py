from __future__ import annotations

import json
from collections.abc import Iterator

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget
from rest_framework.authtoken.models import Token

from chat.forms import DeleteAccountForm, TurnForm
from chat.selectors import (
    conversation_get,
    conversation_list,
    conversation_turns,
    memory_failure_run,
    turn_views,
    user_turn_get,
)
from chat.services import (
    ReplyOutcome,
    account_erase,
    chat_reply,
    chat_reply_stream,
    chat_user_turn,
    conversation_create,
    conversation_delete,
    conversation_delete_all,
    memory_write_enqueue,
    reply_stop_request,
    turn_memory_state,
    turn_redact,
)
from core.ratelimit import by_ip, by_user, rate_limited
from core.requests import SignedInRequest
from core.sessions import sign_out_everywhere, signed_in_sessions
from core.tokens import token_for, token_lifetime, token_revoke
from memoryapp.selectors import memory_list, memory_paused

DETAIL = "chat/conversation_detail.html"


def _turn_url(conversation, seq: int) -> str:
    return reverse("chat:conversation_detail", args=[conversation.public_id]) + f"#turn-{seq}"


@require_http_methods(["GET", "POST"])
@rate_limited("signup", by_ip)
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("chat:conversation_list")
    form: UserCreationForm = UserCreationForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("chat:conversation_list")
    return render(request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
@rate_limited("login", by_user)
def account_delete(request: SignedInRequest) -> HttpResponse:
    """Erase the account: its conversations, turns, memories, vectors and logs go with it."""
    form = DeleteAccountForm(request.POST if request.method == "POST" else None, user=request.user)
    if request.method == "POST" and form.is_valid():
        user = request.user
        logout(request)
        account_erase(user=user)
        messages.success(request, "Your account and everything remembered about you were deleted.")
        return redirect("login")
    return render(request, "registration/delete_account.html", {"form": form}, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def account_view(request: SignedInRequest) -> HttpResponse:
    """The account page: password, the API token (create, shown once; revoke), sessions, data.
    A new token's key is shown in the answer to the POST that made it, never again."""
    user = request.user
    new_key = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "revoke-token":
            revoked = token_revoke(user)
            messages.success(request, "API token revoked." if revoked else "There was no API token to revoke.")
            return redirect("account")
        if action != "create-token":
            messages.error(request, "Unknown action.")
            return redirect("account")
        new_key = token_for(user).key
    token = Token.objects.filter(user=user).first()
    context = {
        "token": token,
        "expires": token.created + token_lifetime() if token else None,
        "new_key": new_key,
        "sessions": signed_in_sessions(user=user),
    }
    response = render(request, "registration/account.html", context)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def sign_out_everywhere_view(request: SignedInRequest) -> HttpResponse:
    """End every session of the account, on every device, and revoke its API token."""
    if request.method == "POST":
        user = request.user
        ended = sign_out_everywhere(user=user)
        logout(request)
        messages.success(
            request,
            f"Signed out everywhere: {ended} session{'s' if ended != 1 else ''} ended and the API token revoked.",
        )
        return redirect("login")
    return render(request, "registration/sign_out_everywhere.html")


@login_required
@require_http_methods(["GET", "POST"])
def conversation_list_view(request: SignedInRequest) -> HttpResponse:
    if request.method == "POST":
        conversation = conversation_create(user=request.user, temporary=request.POST.get("temporary") == "on")
        return redirect("chat:conversation_detail", public_id=conversation.public_id)
    page = Paginator(conversation_list(user=request.user), 25).get_page(request.GET.get("page"))
    return render(
        request,
        "chat/conversation_list.html",
        {
            "page": page,
            "memory_paused": memory_paused(user=request.user),
            "temporary_hours": settings.CHAT_TEMPORARY_HOURS,
        },
    )


def _detail_context(request: SignedInRequest, conversation, form: TurnForm) -> dict:
    """What the conversation page shows, however it was reached. `saving`: a memory write is
    still waiting or running, so a page without JavaScript refreshes itself until it is done."""
    turns = conversation_turns(user=request.user, conversation=conversation)
    return {
        "conversation": conversation,
        "turns": turns,
        "form": form,
        "memory_paused": memory_paused(user=request.user),
        "saving": any(tv.turn.memory_state == "queued" for tv in turns),
        "failures_in_a_row": memory_failure_run(turns),
        "offline": not settings.LLM_ENABLED,
        "model_unavailable": settings.LOCAL_MODEL_UNAVAILABLE,
    }


@login_required
@require_GET
def conversation_detail(request: SignedInRequest, public_id: str) -> HttpResponse:
    conversation = conversation_get(user=request.user, public_id=public_id)
    context = _detail_context(request, conversation, TurnForm())
    context["highlight"] = request.GET.get("turn")
    return render(request, DETAIL, context)


@login_required
@require_http_methods(["GET", "POST"])
def conversation_delete_all_view(request: SignedInRequest) -> HttpResponse:
    """Delete all the user's conversations after a confirmation; memories are left as they are."""
    if request.method == "POST":
        if request.POST.get("confirm") != "on":
            messages.error(request, "Tick the box to confirm.")
            return redirect("chat:conversation_delete_all")
        count = conversation_delete_all(user=request.user)
        messages.success(request, f"Deleted {count} conversation{'' if count == 1 else 's'}.")
        return redirect("chat:conversation_list")
    count = conversation_list(user=request.user).count()
    return render(request, "chat/conversation_delete_all.html", {"count": count})


@login_required
@require_http_methods(["GET", "POST"])
def conversation_delete_view(request: SignedInRequest, public_id: str) -> HttpResponse:
    """Delete a conversation after a confirmation, optionally forgetting what was learned in it."""
    conversation = conversation_get(user=request.user, public_id=public_id)
    if request.method == "POST":
        forget = request.POST.get("forget_memories") == "on"
        forgotten = conversation_delete(user=request.user, conversation=conversation, forget_memories=forget)
        note = f" and forgot {forgotten} memor{'y' if forgotten == 1 else 'ies'} learned in it" if forget else ""
        messages.success(request, f"Deleted the conversation{note}.")
        return redirect("chat:conversation_list")
    learned = memory_list(user=request.user).filter(source_conversation=conversation)
    return render(request, "chat/conversation_delete.html", {"conversation": conversation, "learned": learned})


@login_required
@require_POST
@rate_limited("chat", by_user)
def turn_create(request: SignedInRequest, public_id: str) -> HttpResponse:
    """Store the user's turn. With htmx, answer with the turn and a placeholder that asks for
    the reply; without JavaScript, produce the reply here and go back to the page."""
    conversation = conversation_get(user=request.user, public_id=public_id)
    form = TurnForm(request.POST)
    if not form.is_valid():
        if request.htmx:
            response = render(request, f"{DETAIL}#composer-errors", {"form": form}, status=422)
            return reswap(retarget(response, "#composer-errors"), "outerHTML")
        # The page shows the message again for the user to trim, but never more of it than fits:
        # a rejected 1 MB post is not sent back whole.
        trimmed = request.POST.copy()
        trimmed["content"] = trimmed.get("content", "")[: settings.CHAT_MAX_TURN_CHARS]
        form.data = trimmed
        return render(request, DETAIL, _detail_context(request, conversation, form), status=400)

    turn = chat_user_turn(user=request.user, conversation=conversation, content=form.cleaned_data["content"])
    if request.htmx:
        (view,) = turn_views(user=request.user, turns=[turn])
        # The conversation as the append left it: its first turn gives it its title.
        return render(request, f"{DETAIL}#turn", {"conversation": turn.conversation, "tv": view, "pending": True})
    outcome = chat_reply(user=request.user, user_turn=turn)
    if outcome.error:
        messages.error(request, f"{outcome.error} Your message was saved; use Retry to ask again.")
    return redirect(_turn_url(conversation, turn.seq))


def _reply_result(request: SignedInRequest, conversation, outcome: ReplyOutcome) -> dict:
    views = turn_views(user=request.user, turns=[outcome.user_turn] + ([outcome.reply] if outcome.reply else []))
    return {
        "conversation": conversation,
        "tv": views[0],
        "reply": views[1] if outcome.reply else None,
        "error": outcome.error,
    }


@login_required
@require_POST
def turn_reply(request: SignedInRequest, public_id: str, seq: int) -> HttpResponse:
    """The assistant's reply to one user turn (made once; asking again returns the same one).
    From the page's Retry button, with `stream`, it answers with the placeholder that streams
    the reply (`turn_reply_stream`) instead of making it here."""
    conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)
    if request.htmx and request.POST.get("stream"):
        (view,) = turn_views(user=request.user, turns=[user_turn])
        return render(request, f"{DETAIL}#pending", {"conversation": conversation, "tv": view})
    outcome = chat_reply(user=request.user, user_turn=user_turn)
    if not request.htmx:
        if outcome.error:
            messages.error(request, f"{outcome.error} Your message was saved; use Retry to ask again.")
        return redirect(_turn_url(conversation, seq))
    return render(request, f"{DETAIL}#reply-result", _reply_result(request, conversation, outcome))


def _reply_events(request: SignedInRequest, conversation, steps: Iterator) -> Iterator[str]:
    for step in steps:
        if isinstance(step, ReplyOutcome):
            html = render_to_string(f"{DETAIL}#reply-result", _reply_result(request, conversation, step), request)
            yield f"event: done\ndata: {json.dumps(html)}\n\n"
        elif step.status or step.text:
            name, value = ("status", step.status) if step.status else ("text", step.text)
            yield f"event: {name}\ndata: {json.dumps(value)}\n\n"
        else:
            yield ": still writing\n\n"  # a heartbeat: keeps proxies open, and finds a reader gone


@login_required
@require_POST
def turn_reply_stream(request: SignedInRequest, public_id: str, seq: int) -> StreamingHttpResponse:
    """The reply to one user turn as server-sent events, written while the model writes it:
    `status` (what it waits for), `text` (the next piece), a comment line as a heartbeat, and
    last `done` with the finished turn's HTML (the reply with its memories, or the error and
    Retry). Made once per turn, like `turn_reply`: a turn already answered gets `done` at once."""
    conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)

    def events() -> Iterator[str]:
        # Closed with the response: a reader gone mid-reply stops the reply at once.
        steps = chat_reply_stream(user=request.user, user_turn=user_turn)
        try:
            yield from _reply_events(request, conversation, steps)
        finally:
            steps.close()

    response = StreamingHttpResponse(events(), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # a proxy in front (nginx) passes each piece on at once
    return response


@login_required
@require_POST
def turn_reply_stop(request: SignedInRequest, public_id: str, seq: int) -> HttpResponse:
    """Stop the reply being written to a user turn; it keeps what it has written."""
    conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)
    reply_stop_request(user=request.user, user_turn=user_turn)
    if not request.htmx:
        return redirect(_turn_url(conversation, seq))
    return HttpResponse(status=204)


@login_required
@require_POST
def turn_redact_view(request: SignedInRequest, public_id: str, seq: int) -> HttpResponse:
    """Remove the secret values from a user turn (and its reply) for good, then back to the turn."""
    conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)
    count = turn_redact(user=request.user, turn=user_turn)
    if count:
        messages.success(request, f"Removed {count} secret value{'s' if count != 1 else ''} from your message.")
    else:
        messages.info(request, "No password, key, card, bank or ID number was found in this message.")
    return redirect(_turn_url(conversation, seq))


@login_required
@require_http_methods(["GET", "POST"])
def turn_memory(request: SignedInRequest, public_id: str, seq: int) -> HttpResponse:
    """What a user turn did to memory; POST retries a failed memory write."""
    conversation, user_turn = user_turn_get(user=request.user, public_id=public_id, seq=seq)
    if request.method == "POST":
        memory_write_enqueue(user=request.user, turn=user_turn, retry=True)
        user_turn.memory_state = turn_memory_state(user=request.user, turn=user_turn)
        if not request.htmx:
            return redirect(_turn_url(conversation, seq))
    (view,) = turn_views(user=request.user, turns=[user_turn])
    return render(request, f"{DETAIL}#notice", {"conversation": conversation, "tv": view})
