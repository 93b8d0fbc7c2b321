"""Facts from the clauses of a parsed turn: the user's own clauses, relations named with their age,
standing instructions, up to the turn's limit.
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

from memoryapp import lexicon
from memoryapp.grammar.clauses import (
    Piece,
    _between_us,
    _clause_tokens,
    _dangles,
    _dated,
    _glad_to_have,
    _has_content,
    _hypothetical,
    _piece,
    _question_clause,
    _searching,
    _sentence,
    _situation,
    _third_person_verb,
    _word,
    _working_at,
)
from memoryapp.grammar.facts import _fact_problem
from memoryapp.grammar.parsing import (
    _CONTRACTED_PLAN,
    _MOMENT,
    _STANDING,
    _TIME_NOUNS,
    _TIMEZONE,
    _USERS_NAME,
    FAMILY,
    KIN,
    NUMBER_WORDS,
    PETS,
    RELATIONS,
    _dropped_subject_is_not_me,
    _fact_parse,
    _is_imperative,
    _negated,
    _opens_sentence,
    _user_pronoun,
    parser,
    recognise,
)
from memoryapp.grammar.turns import is_forget_request


def _user_clause(verb: Token, subject: Token, sent: Span, said: date | None = None) -> str | None:
    """The fact one of the user's own clauses states, as a third-person sentence, or None when
    the clause states nothing durable."""
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
    if _not_durable(verb, lemma, sent):
        return None
    value = _stated_value(verb, lemma)
    if value is not None:
        return value
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
    return _in_third_person(verb, tokens, subject_ids, said)


def _not_durable(verb: Token, lemma: str, sent: Span) -> bool:
    """A clause of the user's that states nothing durable: a verb of no fact, a hypothetical, a
    question, a situation; an obligation of the moment ("I have to ..."), an allergy or a state
    that does not say to what ("I have an allergy", "I'm allergic"), a belief ("I'm sure ..."),
    a passing state ("I'm tired")."""
    if (
        (lemma in lexicon.words("not_a_fact_verbs") and not _working_at(verb) and not _searching(verb))
        or _hypothetical(verb)
        or _question_clause(verb, sent)
        or _situation(verb, sent)
    ):
        return True
    if lemma == "have" and any(c.dep_ == "xcomp" for c in verb.children):
        return True  # "I have to juggle a lot": an obligation of the moment
    if lemma == "have" and any(
        c.dep_ == "dobj"
        and c.lemma_.lower() in lexicon.words("needs_object_nouns")
        and not any(g.dep_ == "prep" for g in c.children)
        for c in verb.children
    ):
        return True  # "I have an allergy" says nothing until it says to what
    if lemma != "be":
        return False
    complements = [c for c in verb.children if c.dep_ in {"acomp", "attr", "prep", "oprd"}]
    if not complements or any(
        c.dep_ == "acomp" and c.lemma_.lower() in lexicon.words("convinced") for c in complements
    ):
        return True  # "I'm sure with hard work I can ...": a belief, like "I think"
    if all(
        c.dep_ == "acomp"
        and c.lemma_.lower() in lexicon.words("transient")
        and all(g.dep_ in {"advmod", "punct"} for g in c.children)
        for c in complements
    ):
        return True  # "I'm tired"; but "I'm gluten-free" is not a passing state
    # "I'm allergic" says nothing until it says to what
    return any(c.lemma_.lower() in lexicon.words("needs_object") and not list(c.children) for c in complements)


def _stated_value(verb: Token, lemma: str) -> str | None:
    """A value the clause gives in a form of its own: an age ("I'm 34"), a name ("I'm Priya"), a
    timezone ("I'm in UTC"), a new home ("I moved to Lisbon")."""
    if lemma == "be":
        complements = [c for c in verb.children if c.dep_ in {"acomp", "attr", "prep", "oprd"}]
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
    return None


def _in_third_person(verb: Token, tokens: list[Token], subject_ids: set[int], said: date | None) -> str:
    """The clause's words as a sentence about "The user": the first verb in the third person,
    relative time words as dates, and what came before the subject ("Last Friday I went ...")
    moved after the verb phrase."""
    auxiliaries = [c for c in verb.children if c.dep_ in {"aux", "auxpass"} and c.i < verb.i]
    first_verbal = min([c.i for c in auxiliaries] + [verb.i])
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


def _pronoun_subject(verb: Token) -> bool:
    return any(c.dep_ == "nsubj" and c.lower_ in {"he", "she", "they"} for c in verb.children)


def _possessed(subject: Token, verb: Token, sent: Span) -> str | None:
    """A clause about something of the user's that is not a person: "my laptop is a ThinkPad"."""
    if verb.lemma_.lower() in lexicon.words("not_a_fact_verbs") or _hypothetical(verb) or _question_clause(verb, sent):
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


def _cheering(verb: Token) -> bool:
    lemma = verb.lemma_.lower()
    children = list(verb.children)
    if lemma in lexicon.words("cheering") or (
        lemma == "lose" and any(c.lemma_.lower() in {"hope", "faith"} for c in children)
    ):
        return True
    if lemma == "give":
        return any(c.dep_ == "prt" and c.lower_ == "up" for c in children)
    if lemma == "let":
        return not any(c.lower_ == "me" for c in verb.subtree)
    if lemma == "forget":
        return not any(c.dep_ in {"ccomp", "dobj"} for c in children)
    return lemma == "be" and any(c.dep_ == "acomp" and c.lemma_.lower() in lexicon.words("transient") for c in children)


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
                if (t.pos_ == "PROPN" or t == token)
                and t.i <= token.i
                and t.lower_ not in lexicon.words("greeting_words")
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
            if what in lexicon.words("not_a_child") or (
                unit == "year" and number.isdigit() and int(number) >= _ADULT_AGE
            ):
                continue
            if number.split("-")[0] in lexicon.words("adult_number_words") and unit == "year":
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


def aged_relations(doc: Doc) -> list[str]:
    """The facts `_aged_relations` reads off an English turn: they are the turn's own words
    reordered ("my six-year-old" -> "The user has a six-year-old child."), so the write gate
    takes them as supported however little the rest of the turn is about the child."""
    if not _AGED.search(doc.text):
        return []
    return [fact for sent in doc.sents for fact in _aged_relations(sent)]


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
        or verb.lemma_.lower() in lexicon.words("not_a_fact_verbs")
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
            subjects = _subjects(verb, sent)
            if (
                not subjects
                and verb.dep_ in {"ROOT", "advcl"}
                and verb.tag_ in {"VBD", "VBN"}
                and _opens_sentence(verb)
            ):
                add(_elliptical(verb, sent, said))  # "Got promoted to team lead in October."
            elif not subjects:
                add(_instruction(verb, sent))
            else:
                for fact in _clause_facts(verb, subjects[0], sent, said, named):
                    add(fact)
            if len(facts) >= limit:
                return facts[:limit]
        if len(facts) == before:
            for fact in _aged_relations(sent):
                add(fact)
        if len(facts) == before:
            add(_no_thanks(sent) or _owned_product(sent) or _named_relation(sent))
    return facts[:limit]


def _subjects(verb: Token, sent: Span) -> list[Token]:
    """The verb's subject, or the one it shares: a verb joined by "and" to one with a subject
    ("I live in Leeds and work as a nurse"), or a participle of the user's ("I'm a photographer,
    mostly shooting on a Nikon Z6")."""
    subjects = [c for c in verb.children if c.dep_ in {"nsubj", "nsubjpass"}]
    pleaded = any(c.lower_ in {"please", "pls"} for c in verb.children)
    # "..., so please skip ..." asks; "..., so there is no cheese" has a subject of its own
    existential = any(c.dep_ == "expl" for c in verb.children)
    if not subjects and verb.dep_ == "conj" and not pleaded and not existential:
        subjects = [c for c in verb.head.children if c.dep_ in {"nsubj", "nsubjpass"}]
    if not subjects and verb.dep_ == "advcl" and verb.tag_ == "VBG" and not _situation(verb, sent):
        subjects = [c for c in verb.head.children if c.dep_ == "nsubj" and _user_pronoun(c)]
    return subjects


def _clause_facts(verb: Token, subject: Token, sent: Span, said: date | None, named: set[int]) -> list[str | None]:
    """The facts of one clause, by its subject: the user ("I", "we"), the listener ("call me
    Sam"), or something of the user's ("my sister", "my name", "my laptop"). A relation gives
    its name and age once however many clauses speak of it (`named`: "My partner, Theo, is 34
    and works in theatre lighting" names Theo once); a pet's age or name says it alone."""
    if subject.lower_ in {"you", "u"}:
        if verb.lemma_.lower() == "call" and any(c.lower_ == "me" for c in verb.children):
            called = [c for c in verb.children if c.dep_ in {"oprd", "dobj", "attr"} and c.pos_ == "PROPN"]
            if called:
                return [f"The user's name is {' '.join(t.text for t in called[0].subtree)}."]
        return []
    users = [subject, *(c for c in subject.conjuncts)]
    relation = subject.lemma_.lower() in RELATIONS
    if any(_user_pronoun(t) for t in users):
        facts = [_as_role(verb, subject), _user_clause(verb, subject, sent, said)]
        if relation and subject.i not in named:
            named.add(subject.i)
            facts += _relation_facts(subject, verb)
        return facts
    if not any(c.dep_ == "poss" and c.lower_ in {"my", "our"} for c in subject.children):
        return []
    if relation or subject.ent_type_ == "PERSON":
        if subject.i in named:
            return []
        named.add(subject.i)
        return [*_relation_facts(subject, verb)]
    if subject.lemma_.lower() == "name":
        given = [c for c in verb.children if c.dep_ == "attr" and c.pos_ == "PROPN"]
        return [f"The user's name is {' '.join(t.text for t in given[0].subtree)}."] if given else []
    kept: list[str | None] = [*_relation_facts(subject, verb)] if subject.lemma_.lower() in PETS else []
    return kept or [_possessed(subject, verb, sent)]
