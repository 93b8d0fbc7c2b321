"""Requests to forget said in the other languages the app reads.

English requests are read by the parse (memoryapp.grammar: "Forget that I'm a nurse", "Delete
what I told you about my daughter"). For the other languages there is no parser here, so the
kind of request is read from its shape: a sentence that is the imperative of "forget" and what
follows it ("Olvida que soy enfermera", "Vergiss, dass ich in Berlin wohne", "忘记我是护士"), or,
in the languages that put the verb last, what comes before it ("看護師だということを忘れて",
"Hemşire olduğumu unut"). Only "forget" itself: "delete" and "remove" are also edits ("borra el
fondo de esta foto"), which English tells apart by its parse and this does not. A negated one
("No olvides que...", "Vergiss nicht...") asks to remember, not to forget.

The words are data: one entry per language, with its imperatives, its polite words and the
words that only introduce what follows ("que", "dass"); tests/memoryapp/test_forgetting.py
gives the examples each must and must not match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class Language:
    forget: tuple[str, ...]  # the imperative, familiar and polite
    please: tuple[str, ...] = ()
    that: tuple[str, ...] = ()  # a word that only introduces what is to be forgotten
    nothing: tuple[str, ...] = ()  # "it", "this": names nothing
    negation: tuple[str, ...] = ()  # right after the verb, it turns "forget" into "don't forget"
    verb_last: bool = False
    spaced: bool = True  # words end at a space (not in Chinese: "忘记我是护士")


LANGUAGES = {
    "es": Language(
        forget=("olvida", "olvide", "olvidad", "olvídate de", "olvidate de", "olvídese de"),
        please=("por favor",),
        that=("que", "lo que"),
        nothing=("eso", "esto", "lo", "todo eso"),
    ),
    "fr": Language(
        forget=("oublie", "oubliez", "oublions"),
        please=("s'il te plaît", "s'il vous plaît", "stp", "svp"),
        that=("que", "qu'", "ce que"),
        nothing=("ça", "cela", "ceci", "tout ça"),
        negation=("pas",),
    ),
    "de": Language(
        forget=("vergiss", "vergessen sie", "vergesst"),
        please=("bitte",),
        that=("dass", "was"),
        nothing=("es", "das", "dies"),
        negation=("nicht", "nie"),
    ),
    "it": Language(
        forget=("dimentica", "dimentichi", "dimenticate", "scordati", "scordatevi"),
        please=("per favore", "per piacere"),
        that=("che", "di", "quello che"),
        nothing=("questo", "quello", "tutto"),
    ),
    "pt": Language(
        forget=("esqueça", "esquece", "esqueçam", "esquecei"),
        please=("por favor",),
        that=("que", "o que", "de"),
        nothing=("isso", "isto", "tudo"),
    ),
    "nl": Language(
        forget=("vergeet",),
        please=("alsjeblieft", "alstublieft", "aub"),
        that=("dat", "wat"),
        nothing=("het", "dit", "dat"),
        negation=("niet", "nooit"),
    ),
    "pl": Language(
        forget=("zapomnij", "zapomnijcie", "zapomnij o"),
        please=("proszę",),
        that=("że", "o tym, że", "o"),
        nothing=("to", "o tym"),
    ),
    "sv": Language(
        forget=("glöm",),
        please=("snälla", "tack"),
        that=("att", "vad"),
        nothing=("det", "detta"),
        negation=("inte", "aldrig"),
    ),
    "ru": Language(
        forget=("забудь", "забудьте"),
        please=("пожалуйста",),
        that=("что", "о том, что", "про"),
        nothing=("это", "об этом"),
    ),
    "zh": Language(forget=("忘记", "忘掉", "删掉关于"), please=("请",), nothing=("吧", "这个", "这些"), spaced=False),
    "ja": Language(forget=("忘れて", "忘れてください", "忘れてくれ"), that=("ことを", "を"), verb_last=True),
    "ko": Language(
        forget=("잊어", "잊어줘", "잊어 줘", "잊어주세요", "잊어 주세요"),
        that=("것을", "걸", "을", "를"),
        verb_last=True,
    ),
    "tr": Language(forget=("unut", "unutun"), please=("lütfen",), verb_last=True),
}

_SENTENCE = re.compile(r"[^.!?。！？]+")
_EDGE = " \t\n,，、:;\"'“”«»"


def _alternatives(words) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


def _compile(language: Language) -> re.Pattern:
    please = rf"(?:(?:{_alternatives(language.please)})[\s,，]*)?" if language.please else ""
    forget = _alternatives(language.forget)
    if language.verb_last:
        return re.compile(rf"^\s*(?P<rest>.+?)\s*(?:{forget})\s*{please}$", re.I)
    # The verb ends at a word's end ("olvida", not "olvidaba"), where words have ends to find.
    end = r"\b" if language.spaced else ""
    return re.compile(rf"^\s*{please}(?P<verb>{forget}){end}[\s,:，]*(?P<rest>.*)$", re.I)


_PATTERNS = {code: _compile(language) for code, language in LANGUAGES.items()}


def _without_first(text: str, words) -> str:
    """The text without the first of `words` it opens with, as a whole word ("que soy", "qu'il")."""
    for word in sorted(words, key=len, reverse=True):
        head, tail = text[: len(word)], text[len(word) :]
        if head.lower() == word and (not tail or word.endswith("'") or not tail[0].isalnum()):
            return tail.strip(_EDGE)
    return text


def _without_last(text: str, words, *, glued: bool) -> str:
    """The text without the last of `words` it ends with; `glued`: a particle written onto the
    word before it ("ことを", "를"), so no word boundary is looked for."""
    for word in sorted(words, key=len, reverse=True):
        head = text[: len(text) - len(word)]
        if text.lower().endswith(word) and (glued or not head or not head[-1].isalnum()):
            return head.strip(_EDGE)
    return text


def _named(language: Language, rest: str) -> str | None:
    """What the rest of the sentence names, without its polite and introducing words; None for a
    pronoun ("eso", "es") or nothing at all."""
    rest = rest.strip(_EDGE)
    rest = _without_last(rest, language.please, glued=False)
    if language.verb_last:
        rest = _without_last(rest, language.that, glued=True)
    else:
        rest = _without_first(_without_first(rest, language.please), language.that)
    if not rest or rest.lower() in language.nothing:
        return None
    return rest


class Request(NamedTuple):
    language: str
    named: str | None  # None: it names nothing ("Olvídalo", "Vergiss es")


def forget_request(text: str) -> Request | None:
    """The first sentence of the text that asks, in a language other than English, to forget;
    with what it names in the user's words. None when no sentence does."""
    for sentence in _SENTENCE.findall(text):
        for code, pattern in _PATTERNS.items():
            match = pattern.match(sentence)
            if match is None:
                continue
            language = LANGUAGES[code]
            rest = match.group("rest")
            first = rest.strip(_EDGE).split(" ", 1)[0].strip(_EDGE).lower()
            if not language.verb_last and first in language.negation:
                continue
            return Request(code, _named(language, rest))
    return None
