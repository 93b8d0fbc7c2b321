"""Stopwatches around the product's own functions, for a breakdown of one timed call.

The wrapped function still runs, unchanged; the wrapper only adds its wall time to a
bucket. Used to split a chat turn into recall, remember and embedding without timing
those steps in separate passes that would see different data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any


class Buckets(dict[str, float]):
    """Seconds per named step, accumulated while the stopwatches are on."""

    def take(self) -> dict[str, float]:
        """The totals so far, and reset to zero."""
        totals = dict(self)
        for key in self:
            self[key] = 0.0
        return totals


@contextmanager
def stopwatch(owner: Any, attribute: str, buckets: Buckets, name: str) -> Iterator[None]:
    """Time every call of `owner.attribute` into `buckets[name]` inside the block."""
    original: Callable[..., Any] = getattr(owner, attribute)
    buckets.setdefault(name, 0.0)

    @wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            buckets[name] += time.perf_counter() - start

    setattr(owner, attribute, timed)
    try:
        yield
    finally:
        if isinstance(owner, type) or not hasattr(type(owner), attribute):
            setattr(owner, attribute, original)
        else:
            delattr(owner, attribute)  # an instance attribute shadowing its class's method
