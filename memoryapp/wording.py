"""A fact about the user in the words the user would say it.

Every extractor writes facts in the third person ("The user is 40 years old."); turns are in
the first person ("I'm 40."), and an encoder scores the two wordings of one claim far apart. The
write gate compares a fact with its turn in both wordings (memoryapp.services), and a memory's
keys ask it in the user's words (memoryapp.keys).
"""

from __future__ import annotations

import re

from memoryapp import grammar

# A standing instruction is stored as a fact about the user ("The user wants the assistant to
# keep its answers short.") but said as an imperative ("Please keep your answers short from now
# on."), and the rewording alone costs it the gate (docs/quality/2026-12-06-constants.md). It is also compared as said.
INSTRUCTION = re.compile(r"^the user wants the assistant (not )?to (.+?)\.?$", re.I)


# Any other fact is compared in the first person too: "I am 40 years old." is far closer to
# "I'm 40 years old." than "The user is 40 years old." is (docs/quality/2026-12-06-constants.md).
_USER_VERB = re.compile(
    r"^the user ((?:(?:always|never|often|usually|also|still|really|only|sometimes|mostly|rarely) )?)"
    r"(\w+n't|\w+)\b(.*)$",
    re.I | re.S,
)
_FIRST_PERSON = {
    "is": "am",
    "isn't": "am not",
    "was": "was",
    "wasn't": "wasn't",
    "has": "have",
    "does": "do",
    "doesn't": "don't",
}


def _first_person_verb(verb: str) -> str | None:
    low = verb.lower()
    if low in _FIRST_PERSON:
        return _FIRST_PERSON[low]
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if re.search(r"(ch|sh|ss|x|z|o)es$", low):
        return low[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return low[:-1]
    return None  # not a present-tense verb ("The user moved ...", "The user can ..."): left as is


def as_said(fact: str) -> str | None:
    """The fact as the user would have said it: an instruction as an imperative, any other fact
    about the user in the first person; None when no rewording applies."""
    match = INSTRUCTION.match(fact)
    if match:
        said = re.sub(r"\bits\b", "your", match.group(2))
        return f"Don't {said}." if match.group(1) else f"{said[0].upper()}{said[1:]}."
    if fact[:11].lower() == "the user's ":
        return "My " + fact[11:]
    match = _USER_VERB.match(fact)
    if not match:
        return None
    adverb, verb, rest = match.groups()
    said_verb = _first_person_verb(verb)
    if said_verb is None and (
        re.fullmatch(r"\w+ed|can|can't|will|would|should|must", verb, re.I) or grammar.past_tense_verb(fact)
    ):
        said_verb = verb
    if said_verb is None:
        return None
    rest = re.sub(r"\b(?:the user's|their)\b", "my", rest, flags=re.I)
    return f"I {adverb}{said_verb}{rest}"
