"""Pleasantries: a turn made only of greetings, thanks and acknowledgements states nothing.

The write gate refuses every fact proposed for such a turn: a model asked for facts about
"morning!" answers "The user is a morning person.", and about "Yo" "The user says yo.", and both
score above the gate against a turn that short. The words are those of the languages the
multilingual encoder reads; a turn with any other word is left to the gate's other rules.
"""

from __future__ import annotations

import re

from memoryapp import lexicon

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def is_pleasantry(text: str) -> bool:
    """Is the turn only a greeting, a thanks or an acknowledgement ("morning!", "thanks a bunch!",
    "Buongiorno!", "你好！")? A turn with no letters at all (an emoji) is one too."""
    if re.search(r"\d", text):  # a number is something said ("ok, 42")
        return False
    words = _WORD.findall(text.lower().replace("’", "'"))
    if not words:
        return True
    return "".join(words) in lexicon.words("pleasantry_phrases") or all(
        word in lexicon.words("pleasantry_words") or word in lexicon.words("pleasantry_phrases") for word in words
    )
