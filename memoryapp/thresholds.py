"""The write gate and recall floor for the embedding model in use."""

from __future__ import annotations

from django.conf import settings


def _for_model(model: str, key: str, override: str | None) -> float:
    if override is not None:
        return float(override)
    table = settings.MEMORY_THRESHOLDS
    return float(table.get(model, table["default"])[key])


def write_gate(model: str) -> float:
    """Minimum cosine similarity of a fact to the turn it came from."""
    return _for_model(model, "write_gate", settings.MEMORY_WRITE_GATE)


def recall_floor(model: str) -> float:
    """Minimum cosine similarity of a memory to the probe for it to be recalled."""
    return _for_model(model, "recall_floor", settings.MEMORY_RECALL_FLOOR)
