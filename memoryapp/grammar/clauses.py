"""A clause of the user's as a sentence: its words in the third person, and what keeps a clause
from being a durable fact (a hypothetical, a question, a passing state, a word it leans on).
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING

from memoryapp import lexicon, timewords

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

from memoryapp.grammar.parsing import (
    _BETWEEN_US,
    _THIRD_PERSON,
    _TIME_NOUNS,
    _is_imperative,
    recognise,
)


def _third_person_verb(token: Token) -> str:
    """The third person singular of a present-tense verb or auxiliary said by "I" or "we"."""
    lower = token.lower_
    irregular = {
        "'m": "is",
        "m": "is",
        "am": "is",
        "’m": "is",
        "are": "is",
        "'re": "is",
        "’re": "is",
        "'ve": "has",
        "’ve": "has",
        "have": "has",
        "do": "does",
        "go": "goes",
        "were": "was",
        "ca": "can",
        "wo": "will",
        "'ll": "will",
        "’ll": "will",
    }
    if lower in irregular:
        return irregular[lower]
    if token.tag_ == "VBG" and not any(c.dep_ in {"aux", "auxpass"} for c in token.children):
        token_text = token.lemma_  # "..., mostly shooting on a Nikon" -> "shoots"
    elif token.tag_ not in {"VBP", "VB"}:
        return token.text
    else:
        token_text = token.text
    lower = token_text.lower()
    if lower in irregular:
        return irregular[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return token_text + "es"
    if re.search(r"[^aeiou]y$", lower):
        return token_text[:-1] + "ies"
    return token_text + "s"


def _word(token: Token) -> str:
    lower = token.lower_
    if lower in _THIRD_PERSON:
        return _THIRD_PERSON[lower]
    if lower in {"n't", "n’t"}:
        return "not"
    return token.text


Piece = tuple[str, str]  # a word and the whitespace after it


def _piece(token: Token, text: str | None = None) -> Piece:
    return (token.text if text is None else text, token.whitespace_)


def _sentence(pieces: list[Piece]) -> str:
    """Join the pieces with their own spacing into one sentence: capital first, full stop last."""
    text = "".join(word + space for word, space in pieces if word)
    text = re.sub(r"\s*,(?:\s*,)+", ",", text)
    text = re.sub(r"\b(does|do|is|are|was|were|has|have|had|will|would|did|could)not\b", r"\1 not", text)
    text = re.sub(r"\s+([,.;:!?%)])", r"\1", text)
    text = " ".join(text.split()).strip(" ,;:-!")
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _clause_tokens(verb: Token, drop: set[int]) -> list[Token]:
    """The tokens of the clause headed by `verb`, without its own subordinate clauses, the
    verbs it is coordinated with, and discourse words at its edges."""
    removed: set[int] = set(drop)
    so = next((c.i for c in verb.children if c.dep_ == "cc" and c.lower_ == "so"), None)
    for child in verb.children:
        if so is not None and child.i > so and child.dep_ in {"attr", "dobj"}:  # "I'm vegan, so no cheese"
            removed.update(t.i for t in child.subtree)
            continue
        if (
            child.dep_ in {"advcl", "ccomp", "parataxis", "mark", "cc", "intj", "discourse", "meta"}
            or (child.dep_ == "conj" and child.pos_ in {"VERB", "AUX"})
            or _vocative(child)
            or (child.lower_ == "there" and child.i > 0 and verb.doc[child.i - 1].pos_ == "INTJ")  # "Hi there"
            or (child.i < verb.i and {child.tag_, child.left_edge.tag_} & {"WRB", "WP", "WDT"})  # "why I", "how much I"
        ):
            removed.update(t.i for t in child.subtree)
        elif child.dep_ == "relcl" or any(g.dep_ == "neg" for g in child.children if child.pos_ in {"PROPN", "NOUN"}):
            removed.update(t.i for t in child.subtree)  # a relative clause; a contrast ("..., not Shanghai")
        elif child.i < verb.i and child.dep_ in {"advmod", "prep", "npadvmod"}:
            words = {t.lower_ for t in child.subtree}
            if words <= lexicon.words("fillers") | lexicon.words("discourse"):
                removed.update(t.i for t in child.subtree)
            elif child.dep_ == "prep" and child.lower_ == "as":  # "As a nurse, ..." is a fact of its own
                removed.update(t.i for t in child.subtree)
    for token in verb.subtree:
        if token.dep_ == "relcl" and token.i not in removed:  # "a bike that I take on the train"
            removed.update(t.i for t in token.subtree)
    tokens = [t for t in verb.subtree if t.i not in removed]
    while tokens and (
        tokens[-1].is_punct
        or tokens[-1].pos_ == "CCONJ"
        or tokens[-1].lower_ in lexicon.words("fillers") | {"too", "lol", "haha"}
        or (
            tokens[-1].lower_ in lexicon.words("address_words") and len(tokens) > 1 and tokens[-2].text == ","
        )  # "..., mum."
    ):
        gone = tokens.pop()
        while tokens and tokens[-1].head == gone and tokens[-1].dep_ == "advmod":  # the "right" of "right now"
            tokens.pop()
    while tokens and (tokens[0].is_punct or tokens[0].lower_ in lexicon.words("fillers")):
        tokens.pop(0)
    return tokens


_DATE_WORDS = frozenset([*timewords.WEEKDAYS, *timewords.MONTHS, *_TIME_NOUNS, "today", "yesterday", "tomorrow"])


def _vocative(token: Token) -> bool:
    """Is this the name of the person spoken to, set off by a comma ("Wow, Nate, I'm on fire!",
    "Yeah Maria, I'm hoping to ...", "Well done, Joanna!")? It is no part of the user's fact.
    A time set off the same way ("Last Friday, I went ...") is. So is a word people are called
    by ("I don't eat gluten, mum.", "Honestly, mate, I'm vegan")."""
    if token.dep_ != "npadvmod":
        return False
    recognise(token.doc)
    words = list(token.subtree)
    addressed = len(words) == 1 and token.lower_ in lexicon.words("address_words")
    if not addressed and (
        not any(t.pos_ == "PROPN" for t in words)
        or any(
            t.pos_ not in {"PROPN", "INTJ"} or t.lower_ in _DATE_WORDS or t.ent_type_ in {"DATE", "TIME"} for t in words
        )
    ):
        return False
    doc = token.doc
    after = doc[words[-1].i + 1] if words[-1].i + 1 < len(doc) else None
    before = doc[words[0].i - 1] if words[0].i > 0 else None
    return any(t is not None and t.text == "," for t in (before, after))


def _dangles(tokens: list[Token], subject_ids: set[int]) -> bool:
    """A clause that leans on something it does not say ("I can't stand it", "I love this series")."""
    for token in tokens:
        if token.i in subject_ids:
            continue
        if (
            token.pos_ in {"PRON", "DET"}
            and token.lower_ in lexicon.words("dangling")
            and token.dep_ not in {"expl", "mark"}
        ):
            if token.dep_ == "det" and token.head.lemma_.lower() in _TIME_NOUNS:
                continue  # "these days", "this year"
            return True
        if token.lower_ in lexicon.words("vague_nouns") and token.pos_ in {"NOUN", "PRON", "NUM"}:
            return True
    return False


def _has_content(tokens: list[Token], verb: Token, subject_ids: set[int]) -> bool:
    return any(
        t.pos_ in {"NOUN", "PROPN", "NUM", "ADJ", "X"}
        or t.dep_ in {"dobj", "pobj", "attr", "oprd"}
        or (
            t.dep_ == "xcomp"
            and t.head == verb
            and t.pos_ == "VERB"
            and verb.lemma_.lower() in lexicon.words("liking")
            and t.lemma_.lower() not in lexicon.words("not_a_fact_verbs")  # "I like to think so"
        )
        for t in tokens
        if t.i not in subject_ids and t.i != verb.i
    )


def _hypothetical(verb: Token, *, reported: bool = True) -> bool:
    """ "If I were rich", "I'd live in Monaco", "imagine I'm a pirate"."""
    head = verb
    while head.dep_ == "conj":
        head = head.head
    for child in [*verb.children, *head.children]:
        if child.dep_ == "mark" and child.lower_ in {"if", "unless", "whether"}:
            return True
        if child.dep_ == "aux" and child.lower_ in {"would", "'d", "’d", "could", "might", "should", "may"}:
            return True
        if child.dep_ == "advmod" and child.lower_ in lexicon.words("hedges"):
            return True
    # A clause under "I think", "my husband says", "imagine": an opinion, a report or a fancy;
    # but "remember that I live in Lisbon" asks for exactly this clause to be kept.
    under = reported and any(
        t.lemma_.lower() in lexicon.words("not_a_fact_verbs")
        and not (t.lemma_.lower() in lexicon.words("keep_verbs") and _is_imperative(t))
        for t in verb.ancestors
    )
    return under or verb.lemma_.lower() in {
        "imagine",
        "pretend",
        "suppose",
        "wish",
    }


def _question_clause(verb: Token, sent: Span) -> bool:
    """The clause that asks: the root of a question (inverted, or led by a question word) and
    the verbs coordinated with it. "I ran a half marathon, any recovery tips?" states; it does not ask."""
    if not sent.text.rstrip().endswith("?"):
        return False
    head = verb
    while head.dep_ == "conj":
        head = head.head
    if head != sent.root:
        return False
    subjects = [c for c in head.children if c.dep_ in {"nsubj", "nsubjpass", "expl"}]
    if not subjects:
        return True
    first = subjects[0].i
    inverted = head.i < first or any(c.dep_ in {"aux", "auxpass"} and c.i < first for c in head.children)
    asked = any(t.tag_ in {"WDT", "WP", "WP$", "WRB"} and t.i < first for t in sent)
    return inverted or asked


def _situation(verb: Token, sent: Span) -> bool:
    """ "Why does it fail when I pass a string?": the clause sets the scene of a question."""
    return (
        verb.dep_ == "advcl"
        and sent.text.rstrip().endswith("?")
        and any(c.dep_ in {"mark", "advmod"} and c.lower_ in lexicon.words("scene_marks") for c in verb.children)
    )


def _tense(verb: Token) -> str:
    auxiliaries = {c.lower_ for c in verb.children if c.dep_ in {"aux", "auxpass"}}
    if auxiliaries & {"will", "'ll", "’ll", "gonna"} or (verb.tag_ == "VBG" and auxiliaries & {"'m", "am", "are"}):
        return "future"
    return "past" if verb.tag_ in {"VBD", "VBN"} or auxiliaries & {"did", "was", "were", "had"} else "present"


def _dated(tokens: list[Token], verb: Token, said: date | None) -> tuple[dict[int, str], set[int]]:
    """Relative time words in the clause, resolved against the day the turn was said: the index
    of each phrase's first token -> its absolute form, and the indexes of the words it replaces."""
    if said is None:
        return {}, set()
    recognise(verb.doc)
    chosen = {t.i for t in tokens}
    replacements: dict[int, str] = {}
    replaced: set[int] = set()
    for entity in verb.doc.ents:
        if entity.label_ not in {"DATE", "TIME"} or not all(t.i in chosen for t in entity):
            continue
        first = entity[0]
        head = first.head if first.head.dep_ == "prep" and first.head.i == first.i - 1 else None
        phrase = (f"{head.text} " if head is not None else "") + entity.text
        resolved = timewords.resolve(phrase, said, tense=_tense(verb))
        if resolved:
            start = head.i if head is not None else first.i
            replacements[start] = resolved
            replaced.update(range(start, entity.end))
    return replacements, replaced


def _between_us(verb: Token, subject: Token) -> bool:
    """Is this "we" the two people talking, or everyone? "We make a great team", "we have each
    other's backs", "we haven't talked in a while", "we all have unique paths". "We moved to
    Lisbon", "we both love hiking" and "we speak Portuguese at home" are the user's."""
    if _BETWEEN_US.search(" ".join(t.text for t in verb.subtree)):
        return True
    if any(
        c.lower_ == "all"
        for c in [*subject.children, *verb.children]
        if c.dep_ in {"det", "appos", "advmod", "dep", "predet", "nsubj"}
    ):
        return True
    return verb.lemma_.lower() in {"talk", "chat", "speak"} and not any(c.dep_ == "dobj" for c in verb.children)


def _working_at(verb: Token) -> bool:
    """Is this an ongoing "trying to" with a goal after it ("I've been trying to learn Spanish")?"""
    if verb.lemma_.lower() != "try" or verb.tag_ != "VBG":
        return False
    goal = next((c for c in verb.children if c.dep_ == "xcomp"), None)
    return goal is not None and goal.lemma_.lower() not in lexicon.words("todays_trying") | lexicon.words(
        "not_a_fact_verbs"
    )


def _searching(verb: Token) -> bool:
    """Is this "looking for" or "looking into" something sought for months, not tonight's recipe?"""
    if verb.lemma_.lower() != "look":
        return False
    sought = [
        o
        for p in verb.children
        if p.dep_ == "prep" and p.lower_ in {"for", "into"}
        for o in p.children
        if o.dep_ == "pobj"
    ]
    return any(t.lemma_.lower() in lexicon.words("lasting_searches") for o in sought for t in [o, *o.conjuncts])


def _had(token: Token, had: set[int]) -> str:
    """A word of what the user is glad to have, said of the user: "my husband and kids" is "a
    husband and kids"; "my" before anything else ("in my life") is "their"."""
    if token.dep_ == "poss" and token.lower_ in {"my", "our"} and token.head.i in had:
        return "a" if token.head.tag_ in {"NN", "NNP"} else ""
    return _word(token)


def _glad_to_have(verb: Token) -> str | None:
    """What a feeling says the user has or is: "I'm lucky to have my husband and kids" -> "The user
    has a husband and kids.", "I'm proud to be a nurse" -> "The user is a nurse.". The feeling
    itself is of the day; what it is about lasts."""
    feelings = [c for c in verb.children if c.dep_ == "acomp" and c.lower_ in lexicon.words("glad_of")]
    if verb.lower_ in lexicon.words("glad_of") and any(c.dep_ == "auxpass" for c in verb.children):
        feelings.append(verb)  # "I'm blessed to have ...", parsed as a passive
    for feeling in feelings:
        for what in feeling.children:
            if what.dep_ != "xcomp" or what.lemma_.lower() not in {"have", "be"}:
                continue
            having = what.lemma_.lower() == "have"
            objects = [c for c in what.children if c.dep_ == ("dobj" if having else "attr")]
            if not objects or objects[0].pos_ not in {"NOUN", "PROPN"}:
                continue
            words = [t for t in what.subtree if t.i > what.i]
            words = words[:-1] if words and words[-1].is_punct else words
            had = {o.i for o in [objects[0], *objects[0].conjuncts]}
            pieces = [_piece(t, _had(t, had) if having else _word(t)) for t in words]
            return _sentence([("The user", " "), ("has" if having else "is", " "), *pieces])
    return None
