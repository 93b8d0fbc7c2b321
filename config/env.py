"""Typed readers for the environment that fail loudly on malformed values.

Each raises ImproperlyConfigured naming the variable, so a bad value stops start-up
(`manage.py check`, the web server, a worker) instead of failing at first use.
"""

from __future__ import annotations

import math
import os
from typing import overload

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None = None) -> str | None: ...
def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {value!r}")


def _in_range(name: str, value: float, minimum: float | None, maximum: float | None, raw: str) -> None:
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        low = "" if minimum is None else f"at least {minimum:g}"
        high = "" if maximum is None else f"at most {maximum:g}"
        bounds = " and ".join(part for part in (low, high) if part)
        raise ImproperlyConfigured(f"{name} must be {bounds}, got {raw!r}")


@overload
def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None) -> float: ...
@overload
def env_float(
    name: str, default: None, *, minimum: float | None = None, maximum: float | None = None
) -> float | None: ...
def env_float(
    name: str, default: float | None, *, minimum: float | None = None, maximum: float | None = None
) -> float | None:
    """A number; unset or empty gives `default` (which may be None: "not overridden")."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {value!r}")
    _in_range(name, number, minimum, maximum, value)
    return number


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
    _in_range(name, number, minimum, maximum, value)
    return number


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default) or default
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value
