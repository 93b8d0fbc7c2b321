"""Relative time words resolved against the moment a turn was said.

"Last Friday" means a different day every week; a memory that keeps the words keeps the wrong
day. A fact is stored with the date the words meant when the turn was said: "last Friday" said
on Monday 8 May 2023 is "on 5 May 2023", "last month" is "in April 2023", "two years ago" is
"in 2021". Words that already name a date ("on 3 March 2021") or a span ("for three years")
are left as they are.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month (northern)
# A timezone as people write one: UTC or GMT with an offset ("UTC+5:30", "GMT -3"), an
# abbreviation ("CET", "AEST"), or a zone name ("Europe/Lisbon").
TIMEZONE = r"(?:UTC|GMT)(?:\s?[+-]\s?\d{1,2}(?::?\d{2})?)?|[A-Z]{2,5}T|[A-Z][a-z]+/[A-Z][A-Za-z_]+"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_NUMBERS |= {"eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}


def _day(d: date) -> str:
    return f"on {d.day} {d:%B %Y}"


def _month(year: int, month: int) -> str:
    return f"in {MONTHS[month - 1].capitalize()} {year}"


def _months_back(d: date, n: int) -> tuple[int, int]:
    total = d.year * 12 + d.month - 1 - n
    return total // 12, total % 12 + 1


def _season_start(year: int, month: int) -> tuple[int, int]:
    """(year, first month) of the season the month is in; winter starts in December."""
    if month == 12:
        return year, 12
    if month < 3:
        return year - 1, 12
    return year, 3 + 3 * ((month - 3) // 3)


def _season(which: str, name: str, said: date, tense: str) -> str:
    wanted = SEASONS[name]
    current = _season_start(said.year, said.month)
    index = current[0] * 12 + current[1] - 1  # months since year 0 of the current season's start

    def occurrence(step: int) -> tuple[int, int]:
        year, month0 = divmod(index + 3 * step, 12)
        return year, month0 + 1

    if which == "last" or (which == "this" and tense == "past"):
        steps = range(0 if which == "this" else -1, -5, -1)
    else:
        steps = range(0 if which == "this" else 1, 5)
    for step in steps:
        year, month = occurrence(step)
        if month == wanted:
            return f"in {'autumn' if name == 'fall' else name} {year}"
    return f"in {name}"


def resolve(phrase: str, said: date, *, tense: str = "past") -> str | None:
    """The absolute form of a relative time phrase said on `said`, or None when it is not one
    this knows. `tense` ("past", "present" or "future") decides "in March" and "on Friday"."""
    text = " ".join(phrase.lower().replace("the day before yesterday", "2 days ago").split())
    text = re.sub(r"^(?:on|in|at|during|over)\s+", "", text)
    if text in {"yesterday", "last night"}:
        return _day(said - timedelta(days=1))
    if text in {"today", "this morning", "this afternoon", "this evening", "tonight"}:
        return _day(said)
    if text == "tomorrow":
        return _day(said + timedelta(days=1))
    match = re.fullmatch(r"(last|this|next)?\s*(" + "|".join(WEEKDAYS) + r")", text)
    if match:
        wanted = WEEKDAYS.index(match.group(2))
        if match.group(1) == "next" or (match.group(1) is None and tense == "future"):
            return _day(said + timedelta(days=(wanted - said.weekday() - 1) % 7 + 1))
        if match.group(1) == "this" and tense != "past":
            return _day(said + timedelta(days=(wanted - said.weekday()) % 7))
        return _day(said - timedelta(days=(said.weekday() - wanted - 1) % 7 + 1))
    if text == "last week":
        monday = said - timedelta(days=said.weekday() + 7)
        return f"in the week of {monday.day} {monday:%B %Y}"
    if text in {"last month", "this month", "next month"}:
        year, month = _months_back(said, {"last month": 1, "this month": 0, "next month": -1}[text])
        return _month(year, month)
    if text in {"last year", "this year", "next year"}:
        return f"in {said.year + {'last year': -1, 'this year': 0, 'next year': 1}[text]}"
    match = re.fullmatch(r"(last|this|next)?\s*(" + "|".join(MONTHS) + r")", text)
    if match:
        month = MONTHS.index(match.group(2)) + 1
        year = said.year
        if match.group(1) == "last" or (match.group(1) is None and tense == "past"):
            year -= month > said.month or (match.group(1) == "last" and month == said.month)
        elif match.group(1) == "next" or tense == "future":
            year += month < said.month or (match.group(1) == "next" and month == said.month)
        return _month(year, month)
    match = re.fullmatch(r"(last|this|next)\s+(" + "|".join(SEASONS) + r")", text)
    if match:
        return _season(match.group(1), match.group(2), said, tense)
    match = re.fullmatch(r"(\d+|" + "|".join(_NUMBERS) + r")\s+(day|week|month|year)s?\s+ago", text)
    if match:
        n = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1)]
        unit = match.group(2)
        if unit == "day":
            return _day(said - timedelta(days=n))
        if unit == "week":
            monday = said - timedelta(days=said.weekday() + 7 * n)
            return f"in the week of {monday.day} {monday:%B %Y}"
        if unit == "month":
            return _month(*_months_back(said, n))
        return f"in {said.year - n}"
    return None


_RELATIVE = re.compile(
    r"\b(?:the day before yesterday|yesterday|last night|today|tonight|tomorrow|this (?:morning|afternoon|evening)"
    rf"|(?:(?:on|in) )?(?:(?:last|this|next) )?(?:{'|'.join([*WEEKDAYS, *MONTHS, *SEASONS])})"
    r"|(?:last|this|next) (?:week|month|year)"
    rf"|(?:\d+|{'|'.join(_NUMBERS)}) (?:day|week|month|year)s? ago)\b",
    re.I,
)


def as_worded(fact: str, turn: str, said: date | None) -> str:
    """The fact with each date it was given for a relative time word of the turn put back in the
    turn's words: "The user went to a pride parade on 11 August 2023." from "I went to a pride
    parade last Friday" said on 14 August 2023 reads "... a pride parade last Friday.". A date
    that no time word of the turn means is left as it is."""
    if said is None:
        return fact
    for match in _RELATIVE.finditer(turn):
        for tense in ("past", "present", "future"):
            resolved = resolve(match.group(0), said, tense=tense)
            if resolved and resolved in fact:
                fact = fact.replace(resolved, match.group(0))
                break
    return fact
