"""Does a turn need the user's memory, in any language?

The English parser decides for English turns (memoryapp.grammar.memory_need). For a turn it
cannot read, a linear decision on the turn's own embedding answers instead: the multilingual
encoder puts "Where do I live?" and "¿Dónde vivo?" close together, so weights learned from
English decisions carry over to the other languages it knows. The weights are fitted on the
labelled suite (`manage.py evaluate_memory --fit-need`, eval/need.py) and ship in
`need_weights/<embedding model>.json`; a model without weights leaves such a turn undecided,
and the read path then falls back to the recall floor alone.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import numpy as np

from memoryapp import grammar

WEIGHTS_DIR = Path(__file__).parent / "need_weights"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def weights_path(model: str) -> Path | None:
    """Where the weights for an embedding model live (None for a name that is not a plain file name)."""
    return WEIGHTS_DIR / f"{model}.json" if _SAFE_NAME.fullmatch(model) else None


@functools.cache
def _weights(model: str) -> tuple[np.ndarray, float] | None:
    path = weights_path(model)
    if path is None or not path.is_file():
        return None
    data = json.loads(path.read_text())
    return np.asarray(data["weights"], dtype=np.float32), float(data["bias"])


def score(vector: np.ndarray, model: str) -> float | None:
    """The decision's margin for one embedded turn: above 0 it needs memory; None without weights."""
    found = _weights(model)
    if found is None or len(vector) != len(found[0]):
        return None
    weights, bias = found
    return float(np.dot(vector, weights)) + bias


def turn_need(text: str, vector: np.ndarray, model: str) -> str:
    """NEEDED, NOT_NEEDED or UNDECIDED: the parser's decision, else the embedding's."""
    need = grammar.memory_need(text)
    if need != grammar.UNDECIDED:
        return need
    margin = score(vector, model)
    if margin is None:
        return grammar.UNDECIDED
    return grammar.NEEDED if margin > 0 else grammar.NOT_NEEDED


def first_at_lead(text: str, need: str) -> bool:
    """Does the turn's nearest memory pass at the lead floor? For a turn that needs memory and
    asks about the user ("What do I do for a living?" against the nurse memory), yes; for a
    how-to question ("How do I clean a cast iron pan?") the nearest memory is no answer unless
    it is close, so it waits for the recall floor like the rest."""
    return need == grammar.NEEDED and not grammar.asks_how_to(text)
