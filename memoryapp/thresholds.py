"""The write gate and the recall floors for the embedding model in use."""

from __future__ import annotations

from django.conf import settings


def _for_model(model: str, key: str, override: float | None = None) -> float:
    """The model's calibrated value, an unknown model (or a value its entry leaves out) the
    conservative default; the environment (parsed at start-up) overrides either."""
    if override is not None:
        return override
    table = settings.MEMORY_THRESHOLDS
    return float(table.get(model, {}).get(key, table["default"][key]))


def write_gate(model: str) -> float:
    """Minimum cosine similarity of a fact to the turn it came from."""
    return _for_model(model, "write_gate", settings.MEMORY_WRITE_GATE)


def recall_floor(model: str) -> float:
    """Minimum cosine similarity of a memory to the probe for it to be recalled."""
    return _for_model(model, "recall_floor", settings.MEMORY_RECALL_FLOOR)


def history_floor(model: str) -> float:
    """Minimum cosine similarity of a past turn to the current one for the chat history reference
    to quote it to a turn that states or requests something (chat.history)."""
    return _for_model(model, "history_floor", settings.CHAT_HISTORY_FLOOR)


def history_question_floor(model: str) -> float:
    """The same for a turn that asks a question (chat.history.asks); never above `history_floor`."""
    return min(_for_model(model, "history_question_floor", settings.CHAT_HISTORY_QUESTION_FLOOR), history_floor(model))


def sensitive_floor(model: str) -> float:
    """Minimum similarity of a sensitive memory's text to the turn when none of its keys clears
    the recall floor (memoryapp.selectors); never under the recall floor."""
    return max(_for_model(model, "sensitive_floor"), recall_floor(model))


def recall_gap(model: str) -> float:
    """How far under the first memory given another may score and still be given."""
    return _for_model(model, "recall_gap")


def key_offset(model: str) -> float:
    """How much less a memory's key counts than its text, in similarity: a key is a question or
    a request, and shares that form with every turn that asks anything (memoryapp.keys)."""
    return _for_model(model, "key_offset")


def question_offset(model: str) -> float:
    """How much less the fact asked as a question counts than the fact as written: it shares the
    form of a question about the user with every such question ("Do I like black coffee?" meets
    "How can I get red wine out of a carpet?" at 0.33)."""
    return _for_model(model, "question_offset")


def paraphrase(model: str) -> float:
    """Similarity at which a new fact restates an existing memory in other words.

    Measured with all-MiniLM-L6-v2: paraphrases 0.92-0.95 ("lives in Milan" / "resides in
    Milan" 0.95), different values of one kind of fact lower ("two kids" / "three kids" 0.90,
    "vegetarian" / "vegan" 0.87, "Lisbon" / "Porto" 0.81).
    """
    return _for_model(model, "paraphrase")
