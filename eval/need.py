"""Fit the embedding-based memory-need decision (memoryapp/read/need.py) on the labelled suite.

Examples: every suite probe, labelled by whether it expects a memory, and every suite turn and
probe the English parser decides, labelled by its decision. A logistic regression with L2
penalty and the two classes weighted equally (turns that need memory outnumber the rest four
to one), fitted by full-batch gradient descent: deterministic, and about ten lines of numpy.
The unseen set is never used here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from eval.suite import Suite
from memoryapp.embeddings import Embedder
from memoryapp.read import need

PENALTY = 0.01
STEPS = 3000
RATE = 0.5


def examples(suite: Suite) -> list[tuple[str, int]]:
    labelled = []
    for user in suite.users:
        for text in [t.text for t in user.turns] + [p.text for p in user.probes]:
            decided = need.memory_need(text)
            if decided != need.UNDECIDED:
                labelled.append((text, int(decided == need.NEEDED)))
        labelled += [(p.text, int(bool(p.expect))) for p in user.probes]
    return labelled


def fit(vectors: np.ndarray, labels: Sequence[int]) -> tuple[np.ndarray, float]:
    x = vectors.astype(np.float64)
    y = np.asarray(labels, dtype=np.float64)
    balance = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    weights, bias = np.zeros(x.shape[1]), 0.0
    for _ in range(STEPS):
        error = (1 / (1 + np.exp(-(x @ weights + bias))) - y) * balance
        weights -= RATE * (x.T @ error / len(y) + PENALTY * weights)
        bias -= RATE * error.mean()
    return weights, bias


def fit_suite(suite: Suite, embedder: Embedder) -> dict:
    labelled = examples(suite)
    vectors = embedder.embed([text for text, _ in labelled])
    weights, bias = fit(vectors, [label for _, label in labelled])
    predicted = (vectors.astype(np.float64) @ weights + bias) > 0
    agree = float(np.mean(predicted == np.array([label for _, label in labelled], dtype=bool)))
    return {
        "model": embedder.name,
        "examples": len(labelled),
        "needed": sum(label for _, label in labelled),
        "training_agreement": round(agree, 4),
        "bias": round(float(bias), 6),
        "weights": [round(float(w), 6) for w in weights],
    }


def write(data: dict, path: Path) -> None:
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
