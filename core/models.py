"""Shared tables: rate-limit counters."""

from __future__ import annotations

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
