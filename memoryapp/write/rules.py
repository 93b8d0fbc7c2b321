"""A rule-based fact extractor for the offline default.

It recognises common first-person self-disclosures (name, timezone, location, work,
preferences and dislikes, family, diet and allergies, languages, tools and devices)
and states each as a standalone third-person sentence about "the user". Everything
else writes nothing: pleasantries, questions, hypotheticals, remarks about the
assistant, and statements whose subject is someone other than the user.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memoryapp import lexicon, timewords
from memoryapp.attribution import sentences

# A clause ends at punctuation or at a conjunction that starts a new thought.
_VALUE = (
    r"(?P<v>[^,.;!?()\n]+?)(?=\s*(?:[,.;!?()\n]|\band\b|\bbut\b|\bbecause\b|\bso\b|\bsince\b|\bwhich\b|"
    r"\bwhere\b|\bwho\b|\bwhile\b|\bwhen\b|\balthough\b|\bthough\b|$))"
)
_QUESTION_START = re.compile(
    r"^\s*(?:"
    + "|".join(map(re.escape, sorted(lexicon.words("question_words") | lexicon.words("question_auxiliaries"))))
    + r")\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|wish|might|maybe|perhaps|imagine|pretend|hypothetically|suppose|someday|"
    r"i'd|i’d|wanna|want to|going to|planning to|thinking about|considering)\b",
    re.IGNORECASE,
)
_IM = r"(?:i'm|i am|i’m|im)"
_NAME = r"(?P<v>(?:Dr\.?\s|Mr\.?\s|Ms\.?\s|Mrs\.?\s)?[A-Z][\w'’-]+(?:\s[A-Z][\w'’-]+){0,2})"
_OCCUPATION = (
    r"(?:engineer|developer|programmer|designer|teacher|professor|lecturer|nurse|doctor|physician|surgeon|"
    r"dentist|lawyer|attorney|accountant|architect|artist|writer|author|journalist|editor|chef|cook|baker|"
    r"student|researcher|scientist|analyst|consultant|manager|director|founder|entrepreneur|pilot|"
    r"pharmacist|therapist|psychologist|musician|photographer|translator|librarian|farmer|electrician|"
    r"plumber|carpenter|mechanic|firefighter|officer|paramedic|veterinarian|vet|economist|"
    r"data scientist|product manager|software engineer|web developer|administrator|"
    r"[a-z]+(?:ist|ian|er|or))"
)
_DIET = (
    r"(?P<v>vegetarian|vegan|pescatarian|pescetarian|lactose[- ]intolerant|gluten[- ]free|"
    r"coeliac|celiac|diabetic|teetotal|sober|kosher|halal|keto|on a [\w -]+ diet)"
)
_RELATIVE = (
    r"(?:wife|husband|partner|spouse|son|daughter|brother|sister|mother|mom|mum|father|dad|"
    r"boyfriend|girlfriend|dog|cat)"
)
_DISLIKE = r"(?:hate|dislike|detest|loathe|can't stand|cannot stand|can’t stand|don't like|do not like|don’t like)"
_COUNT = r"(?:a|an|one|two|three|four|five|six|\d+)"
_FAMILY_NOUN = (
    r"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|"
    r"dogs?|cats?|pets?|parrots?|rabbits?|horses?|twins)"
)
_PLACE = r"(?P<v>[A-ZÀ-Þ][\w'’-]+(?:[ -][A-ZÀ-Þ][\w'’-]+){0,2})"
_INSTRUMENT = "(?:" + "|".join(map(re.escape, lexicon.ordered("instruments"))) + ")"
_SPORT = "(?:" + "|".join(map(re.escape, lexicon.ordered("sports_played"))) + ")"
_TIMEZONE = rf"(?P<v>{timewords.TIMEZONE})"

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]]


_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
# When a fact started is not part of it: "moved to Porto last month" -> "Porto".
_SINCE_WHEN = re.compile(
    r"\s+(?:(?:last|this|next)\s+(?:week|month|year|summer|winter|spring|autumn|fall)|"
    r"(?:in|since)\s+(?:"
    + _MONTH
    + r"|\d{4})|yesterday|recently|(?:a|one|two|three|\d+)\s+(?:weeks?|months?|years?)\s+ago)$",
    re.I,
)
# First person inside a value becomes third person: "on all my machines" -> "on all their machines".
_FIRST_PERSON = {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves"}


def _clean(value: str) -> str:
    value = re.sub(r"\s+", " ", value).strip(" '\"“”‘’")
    value = re.sub(r"\s+(?:too|as well|though|anyway|now|these days|nowadays|lately|really)$", "", value, flags=re.I)
    value = _SINCE_WHEN.sub("", value)
    return value


def _third_person(value: str) -> str:
    return re.sub(r"\b(?:my|me|mine|myself)\b", lambda m: _FIRST_PERSON[m.group(0).lower()], value, flags=re.I)


def _phrase(template: str, *, max_words: int = 8, lower: bool = False) -> Callable[[re.Match[str]], str | None]:
    def build(match: re.Match[str]) -> str | None:
        value = _clean(match.group("v"))
        if not value or len(value.split()) > max_words:
            return None
        if re.search(r"\b(?:you|your|yours|yourself|he|she|they|him|her|them|his|their|i|we|our)\b", value, re.I):
            return None  # about the assistant, someone else or a group, not about the user alone
        value = _third_person(value)
        if lower:
            value = value.lower()
        return template.format(v=value)

    return build


def _name(match: re.Match[str]) -> str | None:
    value = _clean(match.group("v"))
    first = value.split()[0]
    if first in lexicon.words("name_stop"):
        return None
    return f"The user's name is {value}."


# Facts are English sentences, so a place named in another language gets its English name;
# otherwise "Abito a Milano" and "I live in Milan" would store the same fact twice.
_ENGLISH_PLACE_NAMES = {
    "milano": "Milan",
    "roma": "Rome",
    "firenze": "Florence",
    "napoli": "Naples",
    "venezia": "Venice",
    "torino": "Turin",
    "genova": "Genoa",
    "lisboa": "Lisbon",
    "sevilla": "Seville",
    "zaragoza": "Saragossa",
    "münchen": "Munich",
    "köln": "Cologne",
    "wien": "Vienna",
    "praha": "Prague",
    "warszawa": "Warsaw",
    "bruxelles": "Brussels",
    "brussel": "Brussels",
    "antwerpen": "Antwerp",
    "genève": "Geneva",
    "den haag": "The Hague",
    "københavn": "Copenhagen",
    "göteborg": "Gothenburg",
    "moskva": "Moscow",
    "athína": "Athens",
    "kraków": "Krakow",
}


def _lives_in_place(match: re.Match[str]) -> str | None:
    value = _clean(match.group("v"))
    return f"The user lives in {_ENGLISH_PLACE_NAMES.get(value.casefold(), value)}."


def _occupation(match: re.Match[str]) -> str | None:
    value = _clean(match.group("v"))
    if value.split()[-1].lower() in lexicon.words("not_occupation") or len(value.split()) > 5:
        return None
    return f"The user is {match.group('art').lower()} {value}."


def _family(match: re.Match[str]) -> str | None:
    count = match.group("n").lower()
    noun = match.group("noun").lower()
    named = match.group("named")
    text = f"The user has {count} {noun}"
    if named:
        text += f" named {_clean(named)}"
    return text + "."


def _relative_name(match: re.Match[str]) -> str | None:
    return f"The user's {match.group('rel').lower()} is named {_clean(match.group('v'))}."


_RULES: list[Rule] = [
    # Name
    (re.compile(r"\b(?i:call me|my name is|my name's|i go by|you can call me|people call me)\s+" + _NAME), _name),
    (re.compile(r"\b(?i:hi|hello|hey)(?:\s+(?i:there|all|everyone))?\b[,!]?\s+(?i:i'm|i am|i’m|im)\s+" + _NAME), _name),
    (
        re.compile(
            r"\b(?:me llamo|mi nombre es|je m'appelle|je m’appelle|ich heiße|ich heisse|(?:o\s+)?meu nome é|"
            r"mi chiamo)\s+" + _NAME,
            re.I,
        ),
        _name,
    ),
    # Timezone
    (re.compile(r"\bmy time ?zone is\s+" + _TIMEZONE, re.I), lambda m: f"The user's timezone is {m.group('v')}."),
    (
        re.compile(
            r"\b(?i:i'm|i am|i’m|im)\s+(?i:always\s+|usually\s+|mostly\s+|normally\s+|based\s+)?(?i:in|on)\s+"
            + _TIMEZONE
            + r"(?:\s+time(?:zone)?)?\b"
        ),
        lambda m: f"The user's timezone is {m.group('v')}.",
    ),
    # Location
    (
        re.compile(r"\bi(?:'ve| have)?\s+(?:just\s+|recently\s+|now\s+)?(?:moved|relocated)\s+to\s+" + _VALUE, re.I),
        _phrase("The user lives in {v}.", max_words=5),
    ),
    (
        re.compile(r"\bi\s+(?:now\s+|currently\s+)?live\s+in\s+" + _VALUE, re.I),
        _phrase("The user lives in {v}.", max_words=5),
    ),
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?:currently\s+|now\s+)?based\s+in\s+" + _VALUE, re.I),
        _phrase("The user lives in {v}.", max_words=5),
    ),
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?:originally\s+)?from\s+" + _VALUE, re.I),
        _phrase("The user is from {v}.", max_words=5),
    ),
    (re.compile(r"\bi\s+grew\s+up\s+in\s+" + _VALUE, re.I), _phrase("The user grew up in {v}.", max_words=5)),
    (
        re.compile(
            r"(?i:\b(?:vivo en|vivo in|j'habite à|j’habite à|j'habite a|ich wohne in|ich lebe in|abito a|abito in|"
            r"moro em|moro no|moro na)\s+)" + _PLACE
        ),
        _lives_in_place,
    ),
    # Work
    (
        re.compile(r"\bi\s+(?:currently\s+|now\s+)?work\s+(?:at|for)\s+" + _VALUE, re.I),
        _phrase("The user works at {v}.", max_words=6),
    ),
    (
        re.compile(r"\bi\s+(?:currently\s+|now\s+)?work\s+as\s+(?P<art>an?)\s+" + _VALUE, re.I),
        _phrase("The user works as a {v}.", max_words=6),
    ),
    (
        re.compile(r"\bi\s+(?:currently\s+|now\s+)?work\s+in\s+" + _VALUE, re.I),
        _phrase("The user works in {v}.", max_words=5),
    ),
    (
        re.compile(
            r"\b(?:i'm|i am|i’m|im)\s+(?:currently\s+|now\s+)?(?P<art>an?)\s+(?P<v>(?:[\w-]+\s){0,3}?"
            + _OCCUPATION
            + r")\b",
            re.I,
        ),
        _occupation,
    ),
    (re.compile(r"\bmy\s+job\s+is\s+" + _VALUE, re.I), _phrase("The user's job is {v}.", max_words=6)),
    (
        re.compile(
            r"\bi\s+(?:usually\s+|mostly\s+|mainly\s+)?work\s+(?P<v>night shifts|nights|remotely|from home|"
            r"part[- ]time|full[- ]time|weekends)\b",
            re.I,
        ),
        _phrase("The user works {v}.", lower=True),
    ),
    (
        re.compile(r"\bi\s+(?P<v>cycle|bike|walk|drive|run|commute)\s+to\s+work\b", re.I),
        lambda m: f"The user {m.group('v').lower()}s to work.",
    ),
    # Diet and allergies
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?:a\s+|strictly\s+|fully\s+)?" + _DIET + r"\b", re.I),
        _phrase("The user is {v}.", lower=True),
    ),
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?:severely\s+|very\s+|deathly\s+)?allergic\s+to\s+" + _VALUE, re.I),
        _phrase("The user is allergic to {v}.", max_words=5),
    ),
    (
        re.compile(r"\bi\s+(?:only\s+)?eat\s+(?P<v>halal|kosher|vegetarian|vegan|plant-based)\b", re.I),
        _phrase("The user eats {v}.", lower=True),
    ),
    (
        re.compile(r"\bi\s+(?:don't|do not|can't|cannot|never)\s+eat\s+" + _VALUE, re.I),
        _phrase("The user does not eat {v}.", max_words=5),
    ),
    # Preferences and dislikes
    (
        re.compile(r"\bi\s+(?:really\s+|strongly\s+|much\s+|always\s+)?prefer\s+" + _VALUE, re.I),
        _phrase("The user prefers {v}."),
    ),
    (
        re.compile(
            r"\bi\s+(?:really\s+|absolutely\s+|truly\s+)?" + _DISLIKE + r"\s+" + _VALUE,
            re.I,
        ),
        _phrase("The user dislikes {v}."),
    ),
    (
        re.compile(r"\bi\s+(?:really\s+|absolutely\s+|truly\s+)?(?:love|like|enjoy|adore)\s+" + _VALUE, re.I),
        _phrase("The user likes {v}."),
    ),
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+a\s+(?:huge\s+|big\s+|massive\s+)?fan\s+of\s+" + _VALUE, re.I),
        _phrase("The user is a fan of {v}."),
    ),
    (
        re.compile(r"\bmy\s+favou?rite\s+(?P<k>[\w ]{2,30}?)\s+is\s+" + _VALUE, re.I),
        lambda m: _phrase("The user's favourite " + m.group("k").lower() + " is {v}.")(m),
    ),
    (
        re.compile(r"\bi\s+(?:also\s+)?play\s+(?:the\s+)?(?P<v>" + _INSTRUMENT + r")\b", re.I),
        _phrase("The user plays the {v}.", lower=True),
    ),
    (
        re.compile(r"\bi\s+(?:also\s+)?play\s+(?P<v>" + _SPORT + r")\b", re.I),
        _phrase("The user plays {v}.", lower=True),
    ),
    # Family and pets
    (
        re.compile(
            r"\bi\s+have\s+(?P<n>"
            + _COUNT
            + r")\s+(?:\w+\s+)?(?P<noun>"
            + _FAMILY_NOUN
            + r")\b(?:\s+(?:named|called)\s+(?P<named>[A-Z][\w'-]+(?:\s(?:and|&)\s[A-Z][\w'-]+)?))?",
            re.I,
        ),
        _family,
    ),
    (
        re.compile(r"\b(?i:my)\s+(?P<rel>(?i:" + _RELATIVE + r"))(?i:'s| is)\s+(?i:named|called)\s+" + _NAME),
        _relative_name,
    ),
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?P<v>married|divorced|single|engaged|widowed)\b", re.I),
        _phrase("The user is {v}.", lower=True),
    ),
    # Languages and learning
    (
        re.compile(r"\bi\s+(?:also\s+)?speak\s+(?P<v>[\w ,'-]+?)(?=\s*(?:[.;!?\n]|\bbut\b|$))", re.I),
        _phrase("The user speaks {v}.", max_words=8),
    ),
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?:currently\s+)?learning\s+" + _VALUE, re.I),
        _phrase("The user is learning {v}.", max_words=6),
    ),
    # Tools and devices
    (
        re.compile(
            r"\bi\s+(?:mainly\s+|mostly\s+|usually\s+|always\s+)?(?:use|work on|work with|code on)\s+" + _VALUE, re.I
        ),
        _phrase("The user uses {v}.", max_words=6),
    ),
    (
        re.compile(r"\bi\s+(?:mainly\s+|mostly\s+|usually\s+)?(?:code|program|write code)\s+in\s+" + _VALUE, re.I),
        _phrase("The user programs in {v}.", max_words=6),
    ),
    (
        re.compile(
            r"\bmy\s+(?P<k>laptop|phone|computer|editor|ide|car|bike|keyboard|os)\s+is\s+(?P<art>an?\s+)?" + _VALUE,
            re.I,
        ),
        lambda m: _phrase(
            "The user's " + m.group("k").lower() + " is " + (m.group("art") or "").lower() + "{v}.", max_words=6
        )(m),
    ),
    (
        re.compile(r"\bi\s+do\s+(?:all\s+|most\s+)?(?:of\s+)?my\s+work\s+on\s+(?P<art>an?\s+)?" + _VALUE, re.I),
        lambda m: _phrase("The user works on " + (m.group("art") or "").lower() + "{v}.", max_words=5)(m),
    ),
    # Age and birthday
    (
        re.compile(r"\b(?:i'm|i am|i’m|im)\s+(?P<v>\d{1,3})\s+years?\s+old\b", re.I),
        _phrase("The user is {v} years old."),
    ),
    (
        re.compile(r"\bmy\s+birthday\s+is\s+(?:on\s+)?" + _VALUE, re.I),
        _phrase("The user's birthday is {v}.", max_words=4),
    ),
]

_NEGATED_BEFORE = re.compile(r"\b(?:not|never|no longer|don't|do not|didn't|won't)\s*$", re.I)


def _is_candidate_sentence(sentence: str) -> bool:
    if sentence.endswith("?") or _QUESTION_START.match(sentence):
        return False
    if _HYPOTHETICAL.search(sentence):
        return False
    return True


def extract_facts_by_rules(text: str, *, limit: int = 2) -> list[str]:
    """Durable facts the user states about themselves in `text`, at most `limit`."""
    facts: list[str] = []
    # Not cut after a title: "Call me Dr. Alvarez." is one sentence.
    for sentence in sentences(text):
        if not _is_candidate_sentence(sentence):
            continue
        for pattern, build in _RULES:
            for match in pattern.finditer(sentence):
                if _NEGATED_BEFORE.search(sentence[: match.start()]):
                    continue
                fact = build(match)
                if fact and fact not in facts:
                    facts.append(fact)
                    if len(facts) >= limit:
                        return facts
    return facts
