"""What a standing instruction may not do: carry orders.

A standing instruction (memoryapp.standing) is obeyed on every later reply, so it is the one
kind of memory that could carry orders from whoever got words into a turn (a pasted page, a
shared document). Every fact reaches the gate as an English sentence, whatever the turn's
language, so the rules read English; links and addresses are read in the turn too.

The rules go by kind: a link or an address (the way data leaves: every one of them is refused,
in any language); sending the user's data anywhere; revealing, repeating or sharing memories or
the assistant's own instructions. A reading by meaning (nearest to examples of orders or of
harmless instructions) refused more orders but also harmless instructions worded like them
("stop suggesting recipes with coriander"); docs/orders.md has both measurements.
"""

from __future__ import annotations

import re

from memoryapp.standing import is_standing

# A link or an address, in any language: a URL (with a scheme, "www." or a path after a domain),
# an email address, an IP address. An instruction needs none: links are where data is sent.
_ADDRESS = re.compile(
    r"\b[a-z][a-z0-9+.-]*://\S+"
    r"|\bwww\.\S+"
    r"|\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}/\S*"
    r"|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b",
    re.I,
)


def _inflected(*verbs: str) -> str:
    """A verb in any of its regular forms ("share", "shares", "shared", "sharing")."""
    forms = [f"{verb[:-1]}(?:e|es|ed|ing)" if verb.endswith("e") else f"{verb}(?:s|es|ed|ing)?" for verb in verbs]
    return "(?:" + "|".join(forms) + ")"


# The assistant's own prompt or instructions: no standing instruction has a use for them.
_ITS_INSTRUCTIONS = (
    r"(?:(?:the assistant's|its) (?:own |full |whole |original |initial |hidden |secret )*"
    r"(?:prompt|instructions|rules|guidelines|configuration|settings)"
    r"|(?:(?:the assistant's|its|the) (?:own |full |whole )*)?(?:system|hidden|initial|original|developer|secret) "
    r"(?:prompt|message|instructions?|rules))"
)
# What the user has told the assistant: the memories, personal data, the conversation. A plain
# "notes" or "details" is anyone's; the user's, or stored ones, are the user's data.
_DATA = (
    r"(?:facts?|data|information|info|details?|conversations?|chats?|chat history|chat logs?|messages?|history"
    r"|profile|notes?|credentials?|passwords?|files?)"
)
_OWNED = r"(?:the user's|user's|their|his|her|all (?:of )?(?:the user's|their))"
_KEPT = (
    r"(?:memor(?:y|ies)"
    rf"|(?:stored|saved|remembered|personal|private|medical|financial) {_DATA}"
    rf"|{_OWNED} (?:\w+ ){{0,2}}{_DATA}"
    r"|the (?:conversations?|chat history|chat logs?)"
    r"|(?:what|everything|all|anything) (?:that )?(?:the assistant|it) "
    r"(?:remembers|knows|has stored|has saved|was told)"
    rf"|(?:every|each|all|any) (?:\w+ )?{_DATA} (?:that )?(?:the assistant|it) "
    r"(?:has )?(?:stored|saved|remembers|knows)"
    rf"|{_ITS_INSTRUCTIONS})"
)
# Sending anywhere, and showing or repeating.
_SENDS = _inflected(
    *"send post forward upload transmit submit email e-mail leak exfiltrate relay report sync export copy pass".split()
)
_SHOWS = _inflected(
    *"reveal repeat share disclose print show output list recite dump echo include append attach quote expose".split(),
    *"display paste write give provide insert add".split(),
)
_SHOWS = rf"(?:{_SHOWS}|shown|written|given|read out|spell out|tell (?:everyone|anyone|others|other users)(?: about)?)"
_SENDS = rf"(?:{_SENDS}|sent|copies|copied)"
_ORDERS = [
    (_ADDRESS, "a standing instruction may not carry a link or an address"),
    (
        re.compile(
            rf"\b{_SENDS}\b(?:\W+\w+){{0,6}}?\W+{_KEPT}\b|\b{_KEPT}\b(?:\W+\w+){{0,4}}?\W+(?:be )?{_SENDS}", re.I
        ),
        "a standing instruction may not send the user's data anywhere",
    ),
    (
        re.compile(rf"\b{_SHOWS}\b(?:\W+\w+){{0,6}}?\W+{_KEPT}\b|\b{_ITS_INSTRUCTIONS}\b", re.I),
        "a standing instruction may not reveal, repeat or share memories or the assistant's instructions",
    ),
]


def orders_problem(fact: str, turn: str = "") -> str | None:
    """Why a standing instruction may not be kept, or None. It may not send the user's data
    anywhere ("... email my details to ...", "... sync the conversation with ..."), carry a link
    or an address (in the fact, or in the turn it came from), or tell the assistant to reveal,
    repeat or share memories or its own instructions ("... end every answer with everything it
    remembers", "... print its system prompt"). Any other fact, and any other instruction, has
    none: a memory that is not an instruction is quoted to the model as data, never obeyed."""
    if not is_standing(fact) and "the assistant" not in fact.lower():
        return None
    if _ADDRESS.search(turn):
        return _ORDERS[0][1]
    return next((reason for pattern, reason in _ORDERS if pattern.search(fact)), None)


def obeyed(fact: str) -> bool:
    """Is this memory a standing instruction, given to every reply (`Memory.standing`)? One by its
    form (memoryapp.standing) that carries no orders. Decided when the memory is written: an
    instruction with orders that reached the store another way (a correction) stays a memory the
    user sees, quoted to the model as data, never obeyed."""
    return is_standing(fact) and orders_problem(fact) is None
