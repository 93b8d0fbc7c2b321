"""Whose fact is it? A check that a fact about the user is told by the user about themselves.

The write gate's similarity measures topic, not subject: "My colleague Dr. Alvarez prefers
tea." and "The user's name is Dr. Alvarez." share their words, so an extractor that puts the
colleague's name on the user passes it (measured 0.62 against a gate of 0.49). This module
reads who each clause of the turn is about and rejects a fact whose best supporting clause is
about someone else, or only imagined:
- a clause whose subject is another person ("my sister ...", "he ...", "Dana works ...");
- a hypothetical ("if I were rich ...", "I'd love to ...");
- a name that the turn gives to someone else ("my colleague Dr. Alvarez"), put on the user.
A fact that names the relation itself ("The user's wife is named Sara.") is about the user's
family and stays. The rules are English; other languages pass unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RELATIONS = (
    "colleague", "coworker", "co-worker", "friend", "boss", "manager", "lead", "ceo", "cto", "founder",
    "son", "daughter", "kid", "child", "baby", "brother", "sister", "sibling", "mother", "mom", "mum",
    "father", "dad", "parent", "wife", "husband", "partner", "spouse", "fiancé", "fiancée", "fiance",
    "boyfriend", "girlfriend", "neighbor", "neighbour", "roommate", "flatmate", "housemate", "teacher",
    "doctor", "dentist", "therapist", "cousin", "aunt", "uncle", "niece", "nephew", "grandmother",
    "grandfather", "grandma", "grandpa", "grandson", "granddaughter", "client", "customer", "landlord",
    "mentor", "student", "classmate", "teammate", "assistant", "ex", "in-law", "family", "team",
    "accountant", "lawyer", "coach", "trainer", "tutor", "nanny", "babysitter", "chef", "barber",
    "hairdresser", "mechanic", "vet", "supervisor", "professor",
)  # fmt: skip
_RELATION = r"(?:" + "|".join(re.escape(r) for r in RELATIONS) + r")(?:s|es)?"
_FILLER = r"(?:(?:well|so|also|actually|oh|yes|yeah|ok|okay|honestly|btw|and|but|now|then|plus|anyway)\W+)*"
_THIRD_PARTY = re.compile(
    rf"^{_FILLER}(?:(?:my|our|his|her|their)\s+(?:[\w'-]+\s+){{0,2}}?{_RELATION}\b|(?:he|she|they|his|her|their)\b)",
    re.IGNORECASE,
)
_NAMED_SUBJECT = re.compile(
    r"^(?:(?:Dr|Mr|Ms|Mrs|Prof)\.?\s+)?(?!I\b|I'|I’|We\b)[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*\s+"
    r"(?:is|was|are|were|has|had|lives|lived|works|worked|loves|likes|prefers|moved|grew|wants|hates|"
    r"plays|speaks|comes|came|was born|owns|uses|eats|drinks)\b"
)
# The person spoken to: a clause led by "you" or "your", or a question asked of them ("How did you
# get into running?"). In a chat between two people that is the other one; a remark about the
# assistant is the instruction rules' business (memoryapp.grammar), not a fact about the user.
_TO_THE_LISTENER = re.compile(
    rf"^{_FILLER}(?:(?:how|what|when|where|why|which|who)\s+(?:[\w'’-]+\s+){{0,2}}?)?"
    r"(?:(?:do|did|does|are|were|was|have|had|will|would|can|could|should|must)\s+)?"
    r"(?:you|you're|you’re|youre|you've|you’ve|you'll|you’ll|you'd|you’d|your|yours|u|ur)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|im|i've|i’ve|i'll|me|myself|mine)\b|\bmy\b", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|wish|imagine|pretend|suppose|hypothetically|someday|i'd|i’d|dream of|fantasi[sz]e)\b",
    re.IGNORECASE,
)
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Ms|Mrs|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e)\.$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# "Me and my dad have been restoring a Beetle": the user is in the subject, so the clause is not
# split after "Me" and left to the dad (read as "Me with my dad ...").
_WITH_ME = re.compile(r"^(\W*(?:me|i))\s+(?:and|&)(?=\s)", re.IGNORECASE)
# "And" and "but" in the other languages the multilingual encoder reads, so that "Sou desenvolvedor e
# moro em Belo Horizonte." is two clauses, each close to its own fact. Not the words that are also
# common words elsewhere: Dutch "en" ("in" in Spanish), Polish "i" (English "I"), Italian "ma"
# (Polish "has").
_CLAUSE = re.compile(
    r",\s*|\s+(?:and|but|so|because|while|although|whereas|et|mais|und|aber|y|pero|e|ed|ve|ama|и|но)\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    text: str
    subject: str  # "user", "other", "listener", "hypothetical" or "unknown"
    relation: str | None = None  # the relation word when the subject is "my <relation>"


def sentences(text: str) -> list[str]:
    """Sentences, not cut after a title or common abbreviation ("Dr. Alvarez")."""
    parts: list[str] = []
    for piece in _SENTENCE.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if parts and _ABBREVIATION.search(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


_NAMES_ME = re.compile(r"\b(?:call|calls|called|know|knows)\s+me\b", re.IGNORECASE)


def _subject(clause: str, inherited: str) -> tuple[str, str | None]:
    if _HYPOTHETICAL.search(clause):
        return "hypothetical", None
    if _NAMES_ME.search(clause):  # "my friends call me Priya" is about the user
        return "user", None
    if _TO_THE_LISTENER.match(clause) and not _FIRST_PERSON.search(clause):  # not "can you help me plan my trip"
        return "listener", None
    third = _THIRD_PARTY.match(clause)
    if third:
        relation = re.search(_RELATION, third.group(0), re.IGNORECASE)
        return "other", relation.group(0).lower() if relation else None
    if _NAMED_SUBJECT.match(clause):
        return "other", None
    if _FIRST_PERSON.search(clause):
        return "user", None
    return inherited, None


def clauses(text: str) -> list[Clause]:
    """The turn's clauses, each with who it is about; a clause with no subject of its own
    ("... and is a lawyer") is about whoever the previous clause of the sentence was."""
    result: list[Clause] = []
    for sentence in sentences(text):
        subject, relation = "unknown", None
        parts = _CLAUSE.split(_WITH_ME.sub(r"\1 with", sentence))
        for part in parts:
            part = part.strip(" .!?;")
            if len(part) < 3:
                continue
            found, found_relation = _subject(part, subject)
            if found != subject or found_relation:
                subject, relation = found, found_relation
            result.append(Clause(part, subject, relation if subject == "other" else None))
    return result


def _about_relation(fact: str, relation: str) -> bool:
    """Whether the fact is about the user's relation as such ("The user's wife is named Sara.",
    "The user has two sons."), rather than putting the relation's traits on the user."""
    word = re.escape(relation.lower().rstrip("s") if len(relation) > 3 else relation.lower())
    return (
        re.search(
            rf"\b(?:user's|user’s|their)\s+(?:[\w-]+\s+){{0,2}}{word}|\bhas\s+(?:[\w-]+\s+){{0,2}}{word}",
            fact,
            re.IGNORECASE,
        )
        is not None
    )


def _name_given_to_someone_else(fact: str, turn: str) -> str | None:
    for name in re.findall(r"(?:(?:Dr|Mr|Ms|Mrs|Prof)\.?\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*", fact):
        if name in {"The", "User"} or name.startswith("The "):
            continue
        last = name.split()[-1]
        owner = re.search(
            rf"\b(?i:({_RELATION}))\b\W+(?i:(?:named|called|,)\W*)?(?:(?:Dr|Mr|Ms|Mrs|Prof)\.?\s+)?"
            rf"(?:[A-Z][\w'’-]+\s+){{0,2}}{re.escape(last)}\b",
            turn,
        )
        if owner and not _about_relation(fact, owner.group(1)):
            return f"the turn gives the name {name!r} to the user's {owner.group(1).lower()}"
    return None


_GREETING = r"(?:hi|hey|hello|dear|thanks|thank you|congrats|bye|wow|yeah|yes|sorry|agreed|ok|okay|oh)"
# How a turn gives the user a name ("Call me Priya", "I'm Noor"); memoryapp.grammar reads it too.
SELF_NAMING = r"call me|I'm|I’m|I am|my name is|my name's|my name’s|this is"


def _name_of_the_listener(fact: str, turn: str) -> str | None:
    """The name the turn calls the person it speaks to ("Hey Jon!", "Who supports you, Mel?")
    is theirs, not the user's: "The user's name is Mel." from such a turn is the incident this
    product exists to prevent."""
    if not re.search(r"\b(?:name|named|called|calls)\b", fact, re.I):
        return None
    for name in re.findall(r"\b[A-Z][\w'’-]+", fact):
        if name in {"The", "User"} or re.search(rf"\b(?:{SELF_NAMING}|it's|it’s)\s+{re.escape(name)}\b", turn, re.I):
            continue
        spoken_to = re.search(
            rf"(?:^|[.!?]\s+|\b{_GREETING}\W+){re.escape(name)}\s*[,!?]|,\s*{re.escape(name)}\s*(?:[!?.,]|$)",
            turn,
            re.I,
        )
        if spoken_to:
            return f"the turn speaks to {name}: the name is the listener's, not the user's"
    return None


_ABOUT_THE_ASSISTANT = re.compile(r"\bthe assistant\b|\b(?:answers?|repl(?:y|ies)|responses?)\b", re.IGNORECASE)


def misattribution(fact: str, clause: Clause, turn: str) -> str | None:
    """Why `fact` is not the user's own statement about themselves, or None when it is."""
    named = _name_given_to_someone_else(fact, turn) or _name_of_the_listener(fact, turn)
    if named:
        return named
    if clause.subject == "hypothetical":
        return "the supporting clause is hypothetical"
    if clause.subject == "other" and not (clause.relation and _about_relation(fact, clause.relation)):
        return "the supporting clause is about someone else"
    if clause.subject == "listener" and not _ABOUT_THE_ASSISTANT.search(fact):
        return "the supporting clause is about the person the user speaks to"
    return None
