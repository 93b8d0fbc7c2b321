"""The write gate and recall floor for the embedding model in use."""

from __future__ import annotations

from django.conf import settings


def _for_model(model: str, key: str, override: float | None = None) -> float:
    """The model's calibrated value, an unknown model the conservative default; the
    environment (parsed at start-up) overrides either."""
    if override is not None:
        return override
    table = settings.MEMORY_THRESHOLDS
    return float(table.get(model, table["default"])[key])


def write_gate(model: str) -> float:
    """Minimum cosine similarity of a fact to the turn it came from."""
    return _for_model(model, "write_gate", settings.MEMORY_WRITE_GATE)


def recall_floor(model: str) -> float:
    """Minimum cosine similarity of a memory to the probe for it to be recalled."""
    return _for_model(model, "recall_floor", settings.MEMORY_RECALL_FLOOR)


def lead_floor(model: str) -> float:
    """Minimum similarity of the nearest memory to a turn known to need the user's memory
    (memoryapp.need.turn_need); never above the recall floor."""
    return min(_for_model(model, "lead_floor"), recall_floor(model))


def paraphrase(model: str) -> float:
    """Similarity at which a new fact restates an existing memory in other words.

    Measured with all-MiniLM-L6-v2: paraphrases 0.92-0.95 ("lives in Milan" / "resides in
    Milan" 0.95), different values of one kind of fact lower ("two kids" / "three kids" 0.90,
    "vegetarian" / "vegan" 0.87, "Lisbon" / "Porto" 0.81).
    """
    return _for_model(model, "paraphrase")
