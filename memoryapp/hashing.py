"""Content hashing: two statements of one fact get one digest."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_TRAILING_PUNCTUATION = re.compile(r"[\s.!?;:,…]+$")


def normalise_fact(text: str) -> str:
    """NFKC, case-folded, single-spaced, without trailing punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _TRAILING_PUNCTUATION.sub("", " ".join(folded.split()))


def content_hash(text: str) -> str:
    return hashlib.sha256(normalise_fact(text).encode("utf-8")).hexdigest()
