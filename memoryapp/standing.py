"""Standing instructions: memories of how the user wants to be answered.

"The user wants the assistant to answer in British English.", "The user prefers short
answers.", "The user does not want bullet points in answers." Such a memory holds for every
reply, so it is not left to similarity ("Explain how black holes form." is nowhere near
"British English"): the read path gives it to every turn (memoryapp.selectors), and it needs
no keys (memoryapp.keys).
"""

from __future__ import annotations

import re

# A PostgreSQL regular expression (`\y` is a word boundary there), matched case-insensitively
# inside the recall statement; `is_standing` reads the same pattern in Python.
STANDING = (
    r"^the user (wants|would like|prefers|asks|does not want|doesn't want|dislikes)\y.*"
    r"\y(the assistant|answers?|repl(y|ies)|responses?)\y"
)
_STANDING = re.compile(STANDING.replace(r"\y", r"\b"), re.I)


def is_standing(fact: str) -> bool:
    """Is this memory a standing instruction?"""
    return _STANDING.search(fact) is not None
