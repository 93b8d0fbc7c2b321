"""Request checks that hold for every view."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextvars import ContextVar
from urllib.parse import unquote_to_bytes

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.cache import patch_cache_control


class RejectNulMiddleware:
    """A 400 for a NUL byte in the path or the query string.

    PostgreSQL cannot store or compare text with a NUL in it, so such a value would fail in the
    first query that met it (a search, a lookup by id) with a 500. No view is meant to see it;
    none does. Form fields and JSON strings are checked by their fields, with their own message.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = unquote_to_bytes(request.META.get("QUERY_STRING", "").replace("+", " "))
        if "\x00" in request.path or b"\x00" in query:
            return HttpResponseBadRequest(
                "The request contains a NUL character, which no text here may contain.",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


request_id: ContextVar[str] = ContextVar("request_id", default="-")


class RequestIdMiddleware:
    """Give each request an id, returned as `X-Request-ID` and written on every log line of the
    request (core.logging.RequestIdFilter), so a user's report can be matched to its traceback."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = request_id.set(uuid.uuid4().hex[:16])
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id.get()
            return response
        finally:
            request_id.reset(token)


class NoStoreForUsersMiddleware:
    """`Cache-Control: no-store` on every response to a signed-in user: pages, fragments, the API
    and the export carry personal data that no browser or proxy cache should keep."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, no_store=True, private=True)
        return response
