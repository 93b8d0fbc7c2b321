"""A user turn as the write path reads it, built once and carried through every stage.

`parse_turn` parses the turn once (`grammar.analyse`: the user's own words, a left-out "I" put
back); what a stage asks of the turn beyond that (whether it is English, its clauses and whose
each is, whether it is declined, what a request to forget names, whether it is only a
pleasantry) is worked out the first time it is asked and kept on the object, so the chat's
request thread, which asks only whether the turn is declined, does no more than that. Extraction, the gate
and each of the gate's checks read this one object, so no stage parses or splits the turn again.
A turn in another language may carry its English reading by the model (`with_reading`), itself a
parsed turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING

from memoryapp import attribution, grammar, sensitive, smalltalk
from memoryapp.forgetting import Request, forget_request

if TYPE_CHECKING:
    from spacy.tokens import Doc


@dataclass(frozen=True, eq=False)
class ParsedTurn:
    text: str  # the turn as the user sent it
    doc: Doc  # the parse of the user's own words (grammar.analyse)
    said_on: date | None = None  # the day it was said: relative time words become dates
    reading: ParsedTurn | None = None  # the model's English reading of a turn in another language

    @property
    def told(self) -> ParsedTurn:
        """The turn in English words: its reading when it has one, as facts are English."""
        return self.reading or self

    @cached_property
    def english(self) -> bool:
        """Whether an English parse of it means anything (grammar.looks_english)."""
        return grammar.looks_english(self.doc)

    @cached_property
    def own_text(self) -> str:
        """The turn in the user's own words: code and quoted sentences blanked out
        (grammar.not_own_blanked). A fact is weighed against these words only, so the words of
        a sentence the user asks to translate, judge or debug are never theirs."""
        return grammar.not_own_blanked(self.text)

    @property
    def quotes(self) -> bool:
        """Whether it holds words that are not the user's own: a quoted sentence or code."""
        return self.own_text != self.text

    @cached_property
    def clauses(self) -> tuple[attribution.Clause, ...]:
        """The clauses of its own words, each with whose it is (memoryapp.attribution)."""
        return tuple(attribution.clauses(self.own_text))

    @cached_property
    def declined(self) -> str | None:
        """Why nothing from this turn may be kept, whatever it says: "secret" when it carries a
        password, key, card, bank or id number (memoryapp.sensitive), "forget" when it asks to
        forget or not to remember (in English by its parse, in other languages by
        memoryapp.forgetting). None for an ordinary turn."""
        if sensitive.secret_kind(self.text):
            return "secret"
        if grammar.is_forget_request(self.doc) or self._forget_abroad is not None:
            return "forget"
        return None

    @cached_property
    def _forget_abroad(self) -> Request | None:
        """The sentence that asks to forget in another language (memoryapp.forgetting), or None."""
        return forget_request(self.text)

    @cached_property
    def forget_named(self) -> str | None:
        """What a request to forget names, in the user's words ("that I'm a nurse", "my
        address"); in another language, what the sentence after "olvida", "vergiss", "忘记" names.
        None when it names nothing ("Forget it.") or does not ask to forget."""
        named = grammar.forget_object(self.doc)
        if named is None and self._forget_abroad is not None:
            named = self._forget_abroad.named
        return named

    @cached_property
    def pleasantry(self) -> bool:
        """Whether it is only a greeting, thanks or acknowledgement (memoryapp.smalltalk)."""
        return smalltalk.is_pleasantry(self.text)

    def with_reading(self, reading: str | None) -> ParsedTurn:
        """This turn with its English reading, parsed; unchanged when there is none."""
        return self if reading is None else replace(self, reading=parse_turn(reading, said_on=self.said_on))


def parse_turn(text: str, *, said_on: date | None = None) -> ParsedTurn:
    """The turn, parsed once."""
    return ParsedTurn(text, grammar.analyse(text), said_on)
