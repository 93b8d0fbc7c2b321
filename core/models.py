"""Shared tables: rate-limit counters, signed-in sessions."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class RateLimitCounter(models.Model):
    """Requests per key (a user, an IP, a username) in one fixed time window.

    Counting happens in PostgreSQL with an atomic upsert, so every web process shares the
    same counts without a cache server.
    """

    key = models.CharField(max_length=200)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "window_start"], name="core_ratelimit_key_window_unique")]
        indexes = [models.Index(fields=["window_start"], name="core_ratelimit_window")]

    def __str__(self) -> str:
        return f"{self.key} @ {self.window_start:%H:%M}: {self.count}"


class SignedInSession(models.Model):
    """A browser session a user signed in with, so every one of them can be ended at once.

    Django's session table does not say whose a session is without decoding each row; this one
    does. A row goes with its session (expired sessions cleared by `clearsessions` take theirs)
    and with its user.
    """

    session = models.OneToOneField("sessions.Session", on_delete=models.CASCADE, primary_key=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    signed_in_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user_id} since {self.signed_in_at:%Y-%m-%d %H:%M}"
