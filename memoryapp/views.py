from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.llm import ModelUnavailable
from core.ratelimit import by_user, rate_limited
from core.requests import SignedInRequest
from memoryapp.forms import ForgetAllForm, MemoryTextForm
from memoryapp.read.recall import PROFILE_MAX
from memoryapp.selectors import (
    memory_export,
    memory_get,
    memory_groups,
    memory_list,
    memory_recently_deleted,
    memory_search,
    memory_switches,
    memory_trace,
)
from memoryapp.services import (
    MemoryConflict,
    MemoryRefused,
    UndoExpired,
    memory_add,
    memory_correct,
    memory_forget_all,
    memory_pause_set,
    memory_reference_history_set,
    memory_restore,
    memory_soft_delete,
)

LIST = "memoryapp/memory_list.html"
DETAIL = "memoryapp/memory_detail.html"
PROFILE = "memoryapp/memory_profile.html"
FORGOTTEN_UNDONE = "memoryapp/forgotten_undone.html"
DELETED = "memoryapp/memory_deleted.html"
PAGE_SIZE = 25
# The page's searches travel in the URL, and a server reads a request line of at most 4,094
# bytes (gunicorn's default). A character takes up to 12 bytes there (four UTF-8 bytes, each
# %-escaped), so the two fields together stay under it: 12 x (250 + 80) = 3,960 bytes. A longer
# search by meaning goes through the API (POST /api/memories/search/, 2,000 characters).
SEARCH_MAX_CHARS = 250
FILTER_MAX_CHARS = 80


def _list_context(request: SignedInRequest, **values) -> dict:
    """What the memory page shows besides its rows: the searches, the two switches, the add form."""
    return {
        "q": "",
        "s": "",
        "results": None,
        "page": None,
        "search_error": None,
        "search_max": SEARCH_MAX_CHARS,
        "filter_max": FILTER_MAX_CHARS,
        "switches": memory_switches(user=request.user),
        **values,
    }


def _searching_user(request: HttpRequest) -> str | None:
    return by_user(request) if request.GET.get("s", "").strip() else None


@login_required
@require_GET
@rate_limited("search", _searching_user, methods=("GET",))
def memory_list_view(request: SignedInRequest) -> HttpResponse:
    """The user's live memories, newest first; `q` filters by text, `s` searches by meaning."""
    text = request.GET.get("q", "")
    probe = request.GET.get("s", "")
    context = _list_context(request, q=text[:FILTER_MAX_CHARS], s=probe[:SEARCH_MAX_CHARS])
    fields = [("A search by meaning", probe, SEARCH_MAX_CHARS), ("A filter", text, FILTER_MAX_CHARS)]
    too_long = [
        f"{what} is at most {limit} characters (this has {len(value)})."
        for what, value, limit in fields
        if len(value) > limit
    ]
    if too_long:
        context["search_error"] = " ".join(too_long)
        template = f"{LIST}#memory-rows" if request.htmx and not request.htmx.boosted else LIST
        return render(request, template, context, status=400)
    if probe.strip():
        try:
            context["results"] = memory_search(user=request.user, probe=probe)
        except ModelUnavailable:
            context["search_error"] = "Search is unavailable right now: the embedding model could not be reached."
    else:
        context["page"] = Paginator(memory_list(user=request.user, text=text), PAGE_SIZE).get_page(
            request.GET.get("page")
        )
    template = f"{LIST}#memory-rows" if request.htmx and not request.htmx.boosted else LIST
    return render(request, template, context)


@login_required
@require_POST
@rate_limited("chat", by_user)
def memory_add_view(request: SignedInRequest) -> HttpResponse:
    """Add a memory by hand (memoryapp.services.memory_add). On a refusal the list comes back with
    the text kept in the field and the reason beside it."""
    form = MemoryTextForm(request.POST)
    error = None
    if form.is_valid():
        try:
            memory, created = memory_add(user=request.user, text=form.cleaned_data["text"])
        except (MemoryRefused, ValueError) as exc:
            error = str(exc)
        except ModelUnavailable:
            error = "The memory could not be added: the embedding model could not be reached. Try again."
        else:
            note = "Added" if created else "Already remembered; refreshed"
            messages.success(request, f"{note} “{memory.text}”.")
            return redirect("memoryapp:memory_list")
    else:
        error = " ".join(str(e) for e in form.errors["text"])
    page = Paginator(memory_list(user=request.user), PAGE_SIZE).get_page(1)
    context = _list_context(request, page=page, add_text=request.POST.get("text", ""), add_error=error)
    return render(request, LIST, context, status=400)


@login_required
@require_POST
def memory_pause_view(request: SignedInRequest) -> HttpResponse:
    """The pause switch: `paused` is "on" or "off". Goes back to `next` when it is a page of this site."""
    paused = memory_pause_set(user=request.user, paused=request.POST.get("paused") == "on")
    messages.success(
        request,
        "Memory paused: nothing you say is remembered, and nothing remembered is used in replies."
        if paused
        else "Memory is on again.",
    )
    return _back(request)


def _back(request: SignedInRequest) -> HttpResponse:
    """To `next` when it is a page of this site, else the memory page."""
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(target)
    return redirect("memoryapp:memory_list")


@login_required
@require_POST
def memory_reference_history_view(request: SignedInRequest) -> HttpResponse:
    """The "Reference chat history" switch: `on` is "on" or "off". Goes back to `next` when it is a
    page of this site."""
    on = memory_reference_history_set(user=request.user, on=request.POST.get("on") == "on")
    messages.success(
        request,
        "Chat history is referenced again: replies may quote what you said in earlier conversations."
        if on
        else "Chat history is no longer referenced: nothing from your past conversations is read into a reply. "
        "Saved memories still are.",
    )
    return _back(request)


@login_required
@require_GET
def memory_deleted_view(request: SignedInRequest) -> HttpResponse:
    """Recently deleted: the user's memories deleted in the last MEMORY_RESTORE_DAYS days, each
    with Restore; after that the purge removes them for good."""
    context = {"memories": memory_recently_deleted(user=request.user), "days": settings.MEMORY_RESTORE_DAYS}
    return render(request, DELETED, context)


@login_required
@require_GET
def memory_profile_view(request: SignedInRequest) -> HttpResponse:
    """The user's memories by kind: what a chat gets when asked "What do you know about me?"."""
    groups = memory_groups(user=request.user)
    count = sum(len(memories) for _, memories in groups)
    return render(request, PROFILE, {"groups": groups, "capped": count > PROFILE_MAX, "cap": PROFILE_MAX})


@login_required
@require_GET
def memory_detail(request: SignedInRequest, memory_id: int) -> HttpResponse:
    """The trace page: where a memory came from, who restated it, which replies used it."""
    trace = memory_trace(user=request.user, memory_id=memory_id)
    return render(request, DETAIL, {"trace": trace, "form": MemoryTextForm(initial={"text": trace.memory.text})})


@login_required
@require_POST
def memory_edit(request: SignedInRequest, memory_id: int) -> HttpResponse:
    """Correct a memory's text: re-embedded, provenance kept, the edit recorded."""
    memory_get(user=request.user, memory_id=memory_id)  # ownership before validation: 404, not 400
    form = MemoryTextForm(request.POST)
    error = None
    if form.is_valid():
        try:
            memory_correct(user=request.user, memory_id=memory_id, text=form.cleaned_data["text"])
        except (ValueError, MemoryConflict) as exc:
            error = str(exc)
        except ModelUnavailable:
            error = "The memory could not be re-embedded right now; nothing was changed. Try again."
    else:
        error = " ".join(str(e) for e in form.errors["text"])
    if error is None:
        if request.htmx:
            trace = memory_trace(user=request.user, memory_id=memory_id)
            form = MemoryTextForm(initial={"text": trace.memory.text})
            return render(request, f"{DETAIL}#memory-head", {"trace": trace, "form": form, "saved": True})
        messages.success(request, "Memory corrected.")
        return redirect("memoryapp:memory_detail", memory_id=memory_id)
    trace = memory_trace(user=request.user, memory_id=memory_id)
    context = {"trace": trace, "form": form, "edit_error": error}
    if request.htmx:
        return render(request, f"{DETAIL}#memory-head", context, status=422)
    return render(request, DETAIL, context, status=400)


@login_required
@require_POST
def memory_delete(request: SignedInRequest, memory_id: int) -> HttpResponse:
    """Soft delete: never recalled again from the next request on; undo for a short while."""
    memory = memory_soft_delete(user=request.user, memory_id=memory_id)
    if request.htmx:
        return render(request, f"{LIST}#memory-undo", {"memory": memory})
    messages.success(request, f"Deleted “{memory.text}”.")
    return redirect("memoryapp:memory_list")


@login_required
@require_POST
def memory_undo(request: SignedInRequest, memory_id: int) -> HttpResponse:
    try:
        memory = memory_restore(user=request.user, memory_id=memory_id)
    except (MemoryConflict, UndoExpired) as exc:
        message = str(exc)
        if request.htmx and request.POST.get("in") == "chat":
            return render(request, FORGOTTEN_UNDONE, {"memory_id": memory_id, "undo_error": message})
        if request.htmx:
            return render(request, f"{LIST}#memory-undo", {"memory": {"pk": memory_id}, "undo_error": message})
        messages.error(request, message)
        return redirect("memoryapp:memory_deleted" if request.POST.get("in") == "deleted" else "memoryapp:memory_list")
    in_chat = request.POST.get("in") == "chat"  # the Undo of a forget request in chat
    if request.htmx and in_chat:
        return render(request, FORGOTTEN_UNDONE, {"memory": memory})
    if request.htmx:
        row = memory_list(user=request.user).get(pk=memory.pk)
        return render(request, f"{LIST}#memory-row", {"memory": row})
    messages.success(request, f"Restored “{memory.text}”.")
    if in_chat:
        return redirect("memoryapp:memory_detail", memory.pk)
    if request.POST.get("in") == "deleted":
        return redirect("memoryapp:memory_deleted")
    return redirect("memoryapp:memory_list")


@login_required
@require_http_methods(["GET", "POST"])
def memory_forget_all_view(request: SignedInRequest) -> HttpResponse:
    form = ForgetAllForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        count = memory_forget_all(user=request.user)
        messages.success(
            request,
            f"Forgot {count} memor{'y' if count == 1 else 'ies'}. They will not be used again. Your conversations "
            "stay, and the assistant still reads a conversation's earlier messages when you continue it.",
        )
        return redirect("memoryapp:memory_list")
    live = memory_list(user=request.user).count()
    status = 400 if form.errors else 200
    return render(request, "memoryapp/forget_all.html", {"form": form, "live": live}, status=status)


@login_required
@require_GET
def memory_export_view(request: SignedInRequest) -> HttpResponse:
    """Download everything remembered about the user, with provenance, as JSON."""
    data = memory_export(user=request.user)
    response = HttpResponse(json.dumps(data, indent=2, ensure_ascii=False), content_type="application/json")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="memories-{request.user.get_username()}-{stamp}.json"'
    return response
