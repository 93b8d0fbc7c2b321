"""Does a turn need the user's memory at all? The read path's one decision.

A turn about the user, or a request whose best answer depends on who asks, does; a general
question does not, however many words it shares with a stored fact ("Who founded Tesla?"
against "The user drives a Tesla."): such a turn is given nothing by similarity.

The English parser decides for English turns (`memory_need`). For a turn it cannot read, a
linear decision on the turn's own embedding answers instead: the multilingual encoder puts
"Where do I live?" and "¿Dónde vivo?" close together, so weights learned from English decisions
carry over to the other languages it knows. The weights are fitted on the labelled suite
(`manage.py evaluate_memory --fit-need`, eval/need.py) and ship in
`need_weights/<embedding model>.json`; a model without weights leaves such a turn undecided.

A turn that needs memory is not owed one: whatever the decision, a memory is given only when
its text or one of its keys clears the recall floor (memoryapp.selectors). The decision only
keeps memory out of turns that need none.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memoryapp import lexicon
from memoryapp.grammar import FIRST_PERSON, analyse, looks_english

NEEDED, NOT_NEEDED, UNDECIDED = "needed", "not needed", "undecided"


# "What do you know about me?": a turn that asks for the user's whole profile, in any language
# the encoder knows: the request in other languages scores well above other questions against
# the nearest of these (measured: docs/quality/2026-12-06-constants.md).
PROFILE_REQUESTS = (
    "What do you know about me?",
    "What do you remember about me?",
    "What have you learned about me?",
    "Show me everything you remember about me.",
)
PROFILE_SIMILARITY = 0.62

WEIGHTS_DIR = Path(__file__).parent / "need_weights"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def memory_need(text: str) -> str:
    """Whether a turn needs the user's memory, as the English parser reads it: NEEDED,
    NOT_NEEDED, or UNDECIDED for a turn that is not English (`turn_need` then decides from the
    turn's embedding).

    An English turn needs it when it speaks in the first person ("Where do I live?", "my
    diet"), except "me" as the one told or given a general thing ("Tell me a joke."); when it
    asks for advice, a plan or a pick ("Recommend a film for tonight."); and when it places the
    answer where the user is ("around here").
    """
    doc = analyse(text)
    words = [t for t in doc if t.is_alpha]
    if not words or not (looks_english(doc) or words[0].lower_ in lexicon.words("openers")):
        return UNDECIDED
    for token in doc:
        word = token.lower_
        if (
            word in lexicon.words("advice")
            or token.lemma_.lower() in lexicon.words("advice")
            or word in lexicon.words("nearby")
        ):
            return NEEDED
        if word not in FIRST_PERSON:
            continue
        told = (
            word == "me"
            and token.dep_ in {"dative", "dobj", "iobj"}
            and token.head.lemma_.lower() in lexicon.words("telling")
        )
        if not told:
            return NEEDED
    return NOT_NEEDED


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


def score(vector: np.ndarray | Sequence[float], model: str) -> float | None:
    """The decision's margin for one embedded turn: above 0 it needs memory; None without weights."""
    found = _weights(model)
    if found is None or len(vector) != len(found[0]):
        return None
    weights, bias = found
    return float(np.dot(vector, weights)) + bias


@functools.cache
def _profile_vectors(model: str) -> np.ndarray:
    from memoryapp.embeddings import get_embedder

    embedder = get_embedder()
    if embedder.name != model:
        return np.zeros((0, 0), dtype=np.float32)
    return embedder.embed(list(PROFILE_REQUESTS))


def asks_for_profile(vector: np.ndarray, model: str) -> bool:
    """Does the turn ask what is remembered about the user ("What do you know about me?", "¿Qué
    sabes de mí?")? Such a turn is answered with the user's profile, not by similarity."""
    requests = _profile_vectors(model)
    if requests.size == 0 or requests.shape[1] != len(vector):
        return False
    return float(np.max(requests @ np.asarray(vector, dtype=requests.dtype))) >= PROFILE_SIMILARITY


def turn_need(text: str, vector: np.ndarray | Sequence[float], model: str) -> str:
    """NEEDED, NOT_NEEDED or UNDECIDED: the parser's decision, else the embedding's."""
    need = memory_need(text)
    if need != UNDECIDED:
        return need
    margin = score(vector, model)
    if margin is None:
        return UNDECIDED
    return NEEDED if margin > 0 else NOT_NEEDED
