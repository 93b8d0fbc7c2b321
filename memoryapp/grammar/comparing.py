"""A fact against its turn: a restated question, a value the turn says is not or no longer the
user's, a claim beyond the turn's, a name it never writes, a comparison turned round, code the
turn only showed.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from memoryapp import lexicon, timewords

if TYPE_CHECKING:
    from spacy.tokens import Doc

from memoryapp.grammar.facts import _question, _root
from memoryapp.grammar.parsing import _CODE_SIGNS, _NON_LATIN, FIRST_PERSON, Said, _fact_parse
from memoryapp.grammar.turns import code_spans


def restated_question(fact: str, clause: str) -> str | None:
    """Why `fact` only restates the question of the clause that supports it, or None.

    "Are you a real person?" does not make "The user is a real person.", and "How do I explain
    the causes of World War One?" asks for an answer today; it does not make "The user wants to
    explain the causes of World War One." a lasting fact. A question may still carry one in
    passing ("Can you find a case for my Pixel 8?" -> "The user has a Pixel 8."): only a fact
    that says what the question asks is refused."""
    asked, said = _fact_parse(clause), _fact_parse(fact)
    if not _question(asked):
        return None
    question_root, fact_root = _root(asked), _root(said)
    if question_root is None or fact_root is None:
        return None
    asker = next((c for c in question_root.children if c.dep_ in {"nsubj", "nsubjpass"}), None)
    if asker is None:
        return None
    if asker.lower_ == "you" and fact_root.lemma_ == question_root.lemma_:
        return "the fact puts a question asked of the assistant on the user"
    if asker.lower_ == "i" and fact_root.lemma_ in lexicon.words("intending"):
        if any(c.dep_ == "xcomp" and c.lemma_ == question_root.lemma_ for c in fact_root.children):
            return "the fact turns a question the user asked into a wish"
    return None


_STALE_REACH = 4  # words after the marker, within its clause, that it can cover


# Verbs whose past says the state is over when the fact says it holds: "we were in Bergen",
# "I worked at Google", "I was living in Leeds".
_STATES = lexicon.words("placed") | {"be"}


def stale_value(fact: str, turn: Said) -> str | None:
    """Why `fact` states a value its English turn says does not or no longer holds, or None.

    Similarity sees the value in the turn and passes the fact: "The user lives in Berlin." scores
    high against "I moved from Berlin to Lisbon.", and "The user drives a Model 3." against
    "It's a Model Y, not a Model 3.". The fact is refused when one of its values appears in the
    turn only where a negation, "no longer", "used to" or a move's "from" covers it or, for a fact
    in the present tense, only in a clause in the past ("before that we were in Bergen" -> "The
    user lives in Bergen."), and the fact says it plainly. Its values are its names and numbers,
    the place of a home, job or study ("works at a bank") and what it says the user is ("is a
    nurse"). A fact that says so too ("The user used to live in Rome.", "The user
    does not eat pork.") is left alone."""
    said = _fact_parse(fact)
    if any(t.dep_ == "neg" for t in said):
        return None
    root = _root(said)
    placed = root is not None and root.lemma_ in lexicon.words("placed")
    values = {
        t.lower_
        for t in said
        if t.lower_ != "user"
        and (
            t.pos_ in {"PROPN", "NUM"}
            or (placed and t.pos_ == "NOUN" and t.dep_ == "pobj" and t.head.head == root)
            or (
                root is not None
                and root.lemma_ == "be"
                and t.head == root
                and t.dep_ in {"attr", "acomp"}
                and t.pos_ in {"NOUN", "ADJ"}
            )
        )
    } - _covered(said)
    if not values or not turn.english:
        return None
    doc = turn.doc
    covered = _covered(doc, every=True)
    if root is not None and root.tag_ in {"VBZ", "VBP"} and root.lemma_ in _STATES:
        covered |= _past_only(doc)
    # A name the turn spells otherwise ("Sevilla" for the fact's "Seville") is matched by its start
    words = {t.lower_ for t in doc}
    stale = sorted(
        v for v in values if v in covered or (v not in words and len(v) >= 5 and any(w[:5] == v[:5] for w in covered))
    )
    return f"the turn says {stale[0]!r} is not, or is no longer, the user's" if stale else None


# "No longer" in the other languages the multilingual encoder reads: "Ya no trabajo en el banco",
# "Ich wohne nicht mehr in Köln", "Je n'habite plus à Lyon", "Już nie mieszkam w Gdańsku". Turkish
# "artık" is "no longer" only beside a negative verb ("artık orada çalışmıyorum"); alone it is "now".
_NO_LONGER_ABROAD = re.compile(
    r"\b(?:ya no|já não|nicht mehr|niet meer|już nie|non più|больше не|уже не)\b"
    r"|\bno\s+\w+\s+más\b|\bnão\s+\w+\s+mais\b|\bn(?:e\s+|['’])\w+\s+plus\b|\bnon\s+\w+\s+più\b"
    r"|\bkein\w*\s+(?:\w+\s+)?mehr\b|\bgeen\s+(?:\w+\s+)?meer\b|\bnie\s+\w+\s+już\b"
    r"|\bartık\b.*(?:m[ıiuü]yor|değil)|不再|已经不|もう.*(?:ない|ません)|더 이상|لم أعد|لم نعد",
    re.IGNORECASE,
)
# "Before that" and "formerly": what the clause says was so once ("vorher waren wir in Dresden").
_FORMERLY_ABROAD = re.compile(
    r"\b(?:antes|avant|prima)\b(?!\s+(?:de|di|d'|que|che|du|des))|\b(?:vorher|früher|davor|zuvor|auparavant|"
    r"autrefois|anteriormente|vroeger|daarvoor|wcześniej|przedtem|раньше|до этого|önceden|eskiden)\b|以前|前は",
    re.IGNORECASE,
)
_SAYS_NOW = re.compile(r"^The user (?:is|lives|works|studies|teaches|owns|has)\b")
# A fact that itself says the value is past: "The user no longer works at a bank."
_SAYS_PAST = re.compile(r"\b(?:not|n't|no longer|never|anymore|used to|formerly|former|previously|ex-)\b", re.I)


def no_longer_abroad(fact: str, clause: str) -> str | None:
    """Why the fact is stale when the clause of a turn in another language that is closest to it
    says "no longer" ("Ya no trabajo en el banco" -> "The user works at a bank."), or, for a fact
    in the present, "before that" ("vorher waren wir in Dresden" -> "The user lives in Dresden.");
    None otherwise."""
    if _SAYS_PAST.search(fact):
        return None
    if _NO_LONGER_ABROAD.search(clause):
        return "the turn says this is no longer the user's"
    if _FORMERLY_ABROAD.search(clause) and _SAYS_NOW.match(fact):
        return "the turn says this was the user's before, not now"
    return None


_DEGREE = (
    r"(?:degree|phd|ph\.d\.?|mba|master's|masters|master|bachelor's|bachelor|doctorate|diploma|licen[cs]e|certificate)"
)
# A degree the user is still working towards: "doing a part-time MBA", "studying for a law degree".
_TOWARDS = re.compile(
    r"\b(?:doing|studying|pursuing|taking|finishing|starting|working\s+(?:on|towards?)|enrolled\s+in|"
    r"applying\s+(?:for|to)|towards?|for)\s+(?:(?:a|an|my|the|her|his|their)\s+)?(?:[\w'’-]+\s+){0,3}?$",
    re.I,
)


def says_more(fact: str, told: Said) -> str | None:
    """Why `fact` claims more than its turn, or None: a word that raises the user's standing that
    the turn does not use (for a turn in another Latin-script language, no word of the turn
    shares its first four letters: "profesional", "professionnel"), or a degree held that the
    English turn says the user is still working towards."""
    said = _fact_parse(fact)
    turn, doc, english = told.text, told.doc, told.english
    told_words = {word for t in doc for word in (t.lower_, t.lemma_.lower())} if english else set()
    for token in said:
        if token.lower_ not in lexicon.words("raising") and token.lemma_.lower() not in lexicon.words("raising"):
            continue
        if english and not ({token.lower_, token.lemma_.lower()} & told_words):
            return f"the fact says more than the turn: {token.text!r}"
        if not english and not _NON_LATIN.search(turn) and token.lower_[:4] not in turn.lower():
            return f"the fact says more than the turn: {token.text!r}"
    root = _root(said)
    if not english or root is None or root.lemma_ not in lexicon.words("holding"):
        return None
    for degree in re.findall(rf"\b{_DEGREE}(?!\w)", fact, re.I):
        found = list(re.finditer(rf"\b{re.escape(degree)}(?!\w)", turn, re.I))
        if found and all(_TOWARDS.search(turn[: m.start()]) for m in found):
            return f"the turn says the user is still working towards the {degree}"
    return None


_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*")
_NOT_NAMES = frozenset(["the", "user", "i", *timewords.MONTHS, *timewords.WEEKDAYS])


def unsaid_name(fact: str, told: Said) -> str | None:
    """Why the fact names what its English turn never writes, or None: "The user is the head of
    dentistry at the University of Jordan." from "I am a dentist in Amman.", "The user's name
    is Dr. Alvarez." from "Call me Priya". A name is where an extractor's embellishment shows;
    a word of the turn that starts the same way counts ("Italian" for "Italy"), a month or
    weekday does not count (a relative date is stored as one), and a short name ("AI", "UK")
    must be written whole. The cost is a name the world adds to the turn's: "a 1972 Beetle" ->
    "a 1972 Volkswagen Beetle" is turned down."""
    if not told.english:
        return None
    written = [_bare(word) for word in re.findall(r"[\w'’-]+", told.text)]
    for word in _CAPITALISED.findall(fact)[1:]:
        name = _bare(word.rstrip("."))
        if name in _NOT_NAMES or not name:
            continue
        if not (name in written if len(name) < 4 else any(w.startswith(name[:4]) for w in written)):
            return f"the fact names {word.rstrip('.')!r}, which the turn does not"
    return None


def _bare(word: str) -> str:
    """A word without its possessive, case or accents: "Málaga's" and "malaga" are one name."""
    decomposed = unicodedata.normalize("NFKD", re.sub(r"['’]s$", "", word))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


_COMPARED = re.compile(r"\bThe user is (?:(?:much|a bit|slightly|far) )?((?:more|less) \w+|\w+er) than\b", re.I)


def reversed_comparison(fact: str, turn: str) -> str | None:
    """Why the fact turns a comparison round, or None: "The user is older than Gus." from "Gus
    ... he's older than me" puts on the user what the turn says of someone else."""
    compared = _COMPARED.search(fact)
    if not compared:
        return None
    degree = re.escape(compared.group(1)).replace(r"\ ", r"\s+")
    ours = re.search(rf"\b(?:I\s+am|I['’]m|im|I\s+was)\s+(?:\w+\s+)?{degree}\s+than\b", turn, re.I)
    theirs = re.search(rf"\b{degree}\s+than\s+(?:me|I|us|myself)\b", turn, re.I)
    if theirs and not ours:
        return f"the turn says someone else is {compared.group(1)} than the user, not the other way round"
    return None


# The user's code, as a fact: "The user's add function fails on a string and a number." from a
# turn that shows the function is the problem of the moment, not a fact about the user.
_CODE_THING = re.compile(
    r"^the user's (?:[\w`.()-]+ ){0,2}(?:function|method|script|code|query|program|class|loop|regex|snippet|"
    r"test|tests|build|stack trace|error|bug|sql)\b",
    re.I,
)


def about_shown_code(fact: str, turn: str) -> str | None:
    """Why the fact is no fact about the user when it is about code the turn shows (fenced, inline,
    or lines that read as code), or None."""
    if _CODE_THING.match(fact) and (code_spans(turn) or _CODE_SIGNS.search(turn)):
        return "the fact is about code the turn shows, a problem of the moment"
    return None


def _past_only(doc: Doc) -> set[str]:
    """The words of `doc` that occur only in clauses of being, living or working in the past."""
    past: set[int] = set()
    for token in doc:
        verb = token
        while verb.head.i != verb.i and not (verb.pos_ in {"VERB", "AUX"} and verb.dep_ not in {"aux", "auxpass"}):
            verb = verb.head
        if verb.lemma_.lower() in _STATES and (
            verb.tag_ == "VBD"
            or any(c.dep_ == "aux" and c.tag_ == "VBD" and c.lemma_ in {"be", "have"} for c in verb.children)
        ):
            past.add(token.i)
    return _only_at(doc, past)


def _only_at(doc: Doc, positions: set[int]) -> set[str]:
    """The words of `doc` that occur at these positions and nowhere else."""
    return {doc[i].lower_ for i in positions} - {t.lower_ for t in doc if t.i not in positions}


def _covered(doc: Doc, *, every: bool = False) -> set[str]:
    """The words of `doc` that a negation, "no longer", "used to" or a move's "from" covers; with
    `every`, only words covered wherever they occur."""
    covered: set[int] = set()
    for token in doc:
        following = doc[token.i + 1 : token.i + 1 + _STALE_REACH]
        used_to = token.lemma_ == "use" and token.tag_ == "VBD" and following[:1].text == "to"
        leaving = token.lower_ == "from" and token.head.lemma_.lower() in lexicon.words("leaving")
        # "I no live in Sevilla": a small model's reading says "not" so
        broken_not = token.lower_ == "no" and token.i > 0 and doc[token.i - 1].lower_ in {"i", "we"}
        if not (token.lower_ in lexicon.words("no_longer") or used_to or leaving or broken_not):
            continue
        # "from Berlin to Lisbon": the move's "to" starts what holds now
        ends = {"but", "and", "to"} if leaving else {"but", "and"}
        for other in following:
            if other.is_punct or other.lower_ in ends:
                break
            covered.add(other.i)
    return _only_at(doc, covered) if every else {doc[i].lower_ for i in covered}


def about_others_only(doc: Doc) -> bool:
    """Does every sentence of the turn have its own subject, and no word anywhere stand for its
    writer ("I", "me", "my", "we", "our", or "here" as in "Vim user here, ...")? Such a turn
    states nothing about the writer ("Dana works as a nurse at Rush.", "Is it rude to tip in
    Japan?", "Cristiano Ronaldo is from Madeira."). A sentence with no subject ("Still in Lisbon,
    loving it.") may be the writer speaking of themselves."""
    if any(t.lower_ in FIRST_PERSON or t.lower_ == "here" for t in doc):
        return False
    subjects = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
    return all(any(t.dep_ in subjects for t in sent) for sent in doc.sents)
