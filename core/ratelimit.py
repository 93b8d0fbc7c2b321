"""Per-user and per-client rate limits, counted in PostgreSQL.

Fixed windows: a key may make `limit` requests per `period` seconds. The count is one atomic
`INSERT ... ON CONFLICT DO UPDATE ... RETURNING`, shared by every process; no cache server is
needed (cache-based limiters need memcached or Redis for atomic increments).
"""

from __future__ import annotations

import functools
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework.throttling import BaseThrottle

from core.models import RateLimitCounter

_HIT = f"""
    INSERT INTO {RateLimitCounter._meta.db_table} (key, window_start, count)
    VALUES (%s, %s, 1)
    ON CONFLICT (key, window_start) DO UPDATE SET count = {RateLimitCounter._meta.db_table}.count + 1
    RETURNING count
"""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int


def hit(key: str, *, limit: int, period: int) -> Decision:
    """Count one request for `key`; allowed while the window's count is within `limit`."""
    now = time.time()
    start = int(now) // period * period
    with connection.cursor() as cursor:
        # A key is built from what the client sent (a username): PostgreSQL refuses a NUL in text.
        cursor.execute(_HIT, [key.replace("\x00", "")[:200], datetime.fromtimestamp(start, tz=UTC)])
        (count,) = cursor.fetchone()
    return Decision(allowed=count <= limit, retry_after=max(1, int(start + period - now)))


def purge_stale(*, older_than: timedelta = timedelta(days=1)) -> int:
    """Delete windows that ended long ago (they count nothing any more); returns how many."""
    deleted, _ = RateLimitCounter.objects.filter(window_start__lt=timezone.now() - older_than).delete()
    return deleted


def account_name(username: str) -> str:
    """The account a username names, as a limit counts it: in its compatibility form (NFKC), as
    the sign-in form and the token endpoint read it before looking the account up, so "ｕ13"
    (a fullwidth u) counts against "u13"; and case-folded, so that every name that could reach
    one account shares one budget."""
    return unicodedata.normalize("NFKC", username).strip().casefold()


def forget_account(*, username: str, user_id: int) -> int:
    """Delete the counters keyed by an account (its username, its id) when it is erased."""
    deleted, _ = RateLimitCounter.objects.filter(
        Q(key__endswith=f":username:{account_name(username)}") | Q(key__endswith=f":user:{user_id}")
    ).delete()
    return deleted


def client_ip(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


def too_many_requests(retry_after: int, what: str) -> HttpResponse:
    response = HttpResponse(
        f"Too many {what}. Please wait {retry_after} seconds and try again.",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(retry_after)
    return response


def rate_limited(scope: str, *keys: Callable[[HttpRequest], str | None], methods: tuple[str, ...] = ("POST",)):
    """Limit a view by each key function (None skips a key) using settings.RATE_LIMITS[scope]."""

    def decorate(view):
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs):
            if request.method in methods:
                limit, period, what = settings.RATE_LIMITS[scope]
                for key in keys:
                    value = key(request)
                    if value is None:
                        continue
                    decision = hit(f"{scope}:{value}", limit=limit, period=period)
                    if not decision.allowed:
                        return too_many_requests(decision.retry_after, what)
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


def by_user(request: HttpRequest) -> str | None:
    return f"user:{request.user.pk}" if request.user.is_authenticated else None


def by_ip(request: HttpRequest) -> str:
    return f"ip:{client_ip(request)}"


def by_username(request: HttpRequest) -> str | None:
    username = request.POST.get("username", "")
    return f"username:{account_name(username)}" if isinstance(username, str) and username.strip() else None


class PostgresThrottle(BaseThrottle):
    """The same limits for the REST API, as a DRF throttle (DRF authenticates tokens inside the
    view, so the user is known only there). Subclasses name their scope."""

    scope = ""
    methods: tuple[str, ...] = ("POST",)

    def __init__(self) -> None:
        self._wait = 0

    def allow_request(self, request, view) -> bool:
        if request.method not in self.methods:
            return True
        limit, period, _ = settings.RATE_LIMITS[self.scope]
        decision = hit(f"{self.scope}:{by_user(request) or by_ip(request)}", limit=limit, period=period)
        self._wait = decision.retry_after
        return decision.allowed

    def wait(self) -> int:
        return self._wait


class ChatThrottle(PostgresThrottle):
    scope = "chat"


class SearchThrottle(PostgresThrottle):
    scope = "search"


class LoginThrottle(PostgresThrottle):
    """Credential requests count against the account they name and the address they come from,
    whoever the caller is: a caller with a token of their own still guesses against the same
    per-username budget as anyone else."""

    scope = "login"

    def allow_request(self, request, view) -> bool:
        if request.method not in self.methods:
            return True
        limit, period, _ = settings.RATE_LIMITS[self.scope]
        username = request.data.get("username") if hasattr(request.data, "get") else None
        keys = [by_ip(request)]
        if isinstance(username, str) and username.strip():
            keys.insert(0, f"username:{account_name(username)}")
        decisions = [hit(f"{self.scope}:{key}", limit=limit, period=period) for key in keys]
        self._wait = max(d.retry_after for d in decisions)
        return all(d.allowed for d in decisions)
