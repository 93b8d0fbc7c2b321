"""A fact's own form: the claim it makes, a job and its place, a home and its company, and why a
fact is not a fact about the user (`fact_problems`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memoryapp import lexicon, timewords

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

from memoryapp.grammar.clauses import _DATE_WORDS
from memoryapp.grammar.parsing import (
    _BETWEEN_US,
    _CONTRACTED_PLAN,
    _NON_LATIN,
    _QUOTED,
    _TIME_NOUNS,
    _USERS_NAME,
    FAMILY,
    FIRST_PERSON,
    KIN,
    RELATIONS,
    _fact_parse,
    parser,
)


def _root(doc: Doc) -> Token | None:
    return next((t for t in doc if t.dep_ == "ROOT"), None)


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
                and child.lower_ in lexicon.words("how_long")
                and any(t.like_num or t.lemma_.lower() in _TIME_NOUNS for t in child.subtree)
            ):
                held.update(t.i for t in child.subtree)
    words = {
        t.lemma_.lower()
        for t in doc
        if t.i not in held
        and not t.is_punct
        and t.dep_ not in {"det", "aux", "auxpass", "case"}
        and t.lower_ not in lexicon.words("now_words")
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


def job_and_place(fact: str) -> list[str]:
    """A job in a place as two facts, what the user does and where: "The user is a nurse in
    Leeds." -> "The user is a nurse.", "The user works in Leeds." Each is then recalled on its
    own ("What's the weather like where I work?" finds Leeds), and a later fact on either
    leaves the other be. Where the user works is not where they live: neither is a home."""
    match = _JOB_IN_PLACE.match(fact)
    if match is None:
        return [fact]
    doing = "studies" if set(match["what"].lower().split()) & lexicon.words("studying") else "works"
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


_ADDRESSED = re.compile(rf",\s*(?i:{'|'.join(sorted(lexicon.words('address_words')))})\s*([.!?]?)\s*$")


def without_address(fact: str) -> str:
    """The fact without a trailing word its turn called the listener by ("The user does not eat
    gluten, mom." -> "The user does not eat gluten."); a list of them stays ("their mum, dad")."""
    found = _ADDRESSED.search(fact)
    if found is None or fact[: found.start()].rsplit(" ", 1)[-1].lower() in lexicon.words("address_words"):
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
    if verb.tag_ not in lexicon.words("finite") or not any(
        c.dep_ in {"nsubj", "nsubjpass"} and c.lower_ == "user" for c in root.children
    ):
        return fact
    return sentence if sentence[-1] in ".!?" else f"{sentence}."


_FEELING_IDIOMS = re.compile(r"\b(?:over the moon|on cloud nine|on top of the world)\b", re.I)
# "The user has allergic eyes.": a passing state put on a part of the body as its kind.
_BODY_TODAY_AS_KIND = lexicon.words("body_today") | {"allergic"}
# A day, not a stretch of time: "yesterday", "on Tuesday", "on 2 June 2024". "On Tuesdays" is a habit.
_ONE_DAY = re.compile(
    r"\b(?:yesterday|today|tonight|last night|this (?:morning|afternoon|evening)"
    rf"|on (?:{'|'.join(timewords.WEEKDAYS)})(?!s)"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{'|'.join(timewords.MONTHS)})"
    rf"|(?:{'|'.join(timewords.MONTHS)}) \d{{1,2}}(?:st|nd|rd|th)?\b(?!\d))\b",
    re.IGNORECASE,
)
_PEOPLE_AND_PETS = FAMILY | RELATIONS


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
            c.lower_ == "home"
            or (c.dep_ == "prep" and not any(o.lemma_.lower() in lexicon.words("spans") for o in c.children))
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
    if subject is not None and {t.lower_ for t in subject.subtree} & lexicon.words("assistant"):
        return "the fact is about the assistant, not the user"
    if (
        root is not None
        and root.lemma_ not in lexicon.words("wishing")
        and any(t.lower_ in lexicon.words("assistant_names") for t in doc)
    ):
        return "the fact is the user's view of the assistant, not a fact about the user"
    if root is not None and any(c.dep_ == "aux" and c.lower_ in lexicon.words("advising") for c in root.children):
        return "the fact is advice or a guess, not something the user said"
    if (
        root is not None
        and root.lemma_ in lexicon.words("questioning")
        and subject is not None
        and subject.lower_ == "user"
    ):
        return "the fact restates a question the user asked"
    if (
        root is not None
        and root.lemma_ in lexicon.words("wanting")
        and any(
            c.dep_ == "xcomp"
            and (
                c.lemma_ in lexicon.words("asking")
                or (c.lemma_ == "find" and any(p.lower_ == "out" for p in c.children))
            )
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
    return _standalone_problem(doc, root) or _lasting_problem(doc, root, subject)


def _standalone_problem(doc: Doc, root: Token | None) -> str | None:
    """Why a fact about the user does not stand alone: it leans on its turn ("it", "here", "has
    lived here"), breaks off, speaks to a listener, or keeps the speaker's own "I"."""
    if _dangling_pronoun(doc):
        return "the fact does not stand alone: it names something only its turn says"
    if _cut_off(doc):
        return "the fact breaks off mid-phrase"
    quoted = {i for m in _QUOTED.finditer(doc.text) for i, t in enumerate(doc) if m.start() <= t.idx < m.end()}
    words = [t for t in doc if t.i not in quoted]
    if (root is None or root.lemma_ not in lexicon.words("wishing")) and any(
        t.text in lexicon.words("listener") for t in words
    ):
        return 'the fact speaks to someone ("you"): it is about the listener, not the user'
    if any(t.pos_ == "PRON" and t.lower_ in FIRST_PERSON and (t.text.islower() or t.text == "I") for t in words):
        return 'the fact keeps the speaker\'s own "I" or "we": it is not all about the user in the third person'
    if any(
        t.tag_ == "RB" and t.lower_ in {"here", "there"} or _back_from_nowhere(t) for t in words
    ) or (  # "has lived here": where?
        root is not None
        and root.lemma_ in lexicon.words("without_what")
        and not any(
            c.dep_ in {"dobj", "xcomp", "ccomp", "attr", "acomp"} for c in root.children
        )  # "practises every day": what?
    ):
        return "the fact does not stand alone: it names something only its turn says"
    if root is not None and _done_when(root):
        return "the fact does not stand alone: it names something only its turn says"
    return None


def _lasting_problem(doc: Doc, root: Token | None, subject: Token | None) -> str | None:
    """Why a fact about the user is not a lasting one: a feeling of the moment, a plan for now,
    something done once and over, how the body feels today, a move with no destination."""
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
    if root is None or root.lemma_ not in lexicon.words("wanting"):
        return False
    return any(
        (c.dep_ == "xcomp" and c.lemma_.lower() in lexicon.words("one_off_tasks"))
        or (c.dep_ == "dobj" and c.lemma_.lower() in lexicon.words("one_off_asks"))
        for c in root.children
    )


def _passing_feeling(doc: Doc, root: Token) -> bool:
    """Does the fact only say how the user felt when they said it ("The user is over the moon.",
    "The user feels grateful to Gina.")? A fear of something is kept."""
    if _FEELING_IDIOMS.search(doc.text):
        return True
    if root.tag_ == "VBN" and any(c.dep_ == "auxpass" for c in root.children):
        feelings = (
            [root] if root.lower_ in lexicon.words("feelings") else []
        )  # "is thrilled to ..." parses as a passive
    elif root.lemma_ in {"be", "feel", "get"}:
        feelings = [c for c in root.children if c.dep_ in {"acomp", "oprd"} and c.lower_ in lexicon.words("feelings")]
    else:
        return False
    return any(
        not (c.lower_ in lexicon.words("fearing") and any(g.dep_ == "prep" and g.lower_ == "of" for g in c.children))
        for c in feelings
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
    done = (
        lexicon.words("done_and_over") if root.lemma_ in lexicon.words("light_verbs") else lexicon.words("a_days_work")
    )
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
    return subject.lemma_.lower() not in _PEOPLE_AND_PETS and root.lemma_ not in lexicon.words("life_changes")


def _body_today(subject: Token, root: Token) -> bool:
    """Is the fact how a part of the user's body is today ("The user's arms are dead.", "The
    user's eyes are streaming.", "The user has allergic eyes.")? "The user has a bad knee" is
    about the user, not a part."""
    if root.lemma_ == "have" and subject.lower_ == "user":
        return any(
            c.dep_ == "dobj"
            and c.lemma_.lower() in lexicon.words("body")
            and any(a.dep_ == "amod" and a.lower_ in _BODY_TODAY_AS_KIND for a in c.children)
            for c in root.children
        )
    if subject.lemma_.lower() not in lexicon.words("body") or not any(
        c.dep_ == "poss" and c.lower_ == "user" for c in subject.children
    ):
        return False
    if root.lemma_ in lexicon.words("aching") or root.lower_ in lexicon.words(
        "body_today"
    ):  # "are wrecked" parses as a passive
        return True
    return root.lemma_ in {"be", "feel"} and any(
        c.dep_ in {"acomp", "attr", "oprd"} and c.lower_ in lexicon.words("body_today") for c in root.children
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
    if root.lemma_ not in lexicon.words("moving"):
        return False
    for child in root.children:
        if child.dep_ in {"nsubj", "nsubjpass", "aux", "auxpass", "punct", "neg", "npadvmod"}:
            continue
        if child.dep_ == "advmod" and child.lower_ in lexicon.words("no_place"):
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


def _met_alone(root: Token | None) -> bool:
    """Is the user alone the subject of a verb that takes two ("The user meets the first Sunday
    of every month.")? "The user meets their mentor every Friday" and "talks with Sam" name the other."""
    if root is None or root.lemma_ not in lexicon.words("reciprocal"):
        return False
    return not any(
        c.dep_ in {"dobj", "prt"} or (c.dep_ == "prep" and c.lower_ in {"with", "to", "up"}) for c in root.children
    )


def _relative_trait(subject: Token, root: Token) -> bool:
    """Is this fact's subject one of the user's relatives ("The user's sister ..."), and what it
    says of them something other than their name, age or birth?"""
    if subject.lemma_.lower() not in KIN or not any(c.dep_ == "poss" and c.lower_ == "user" for c in subject.children):
        return False
    said = [t for t in root.subtree if t.i > subject.i and t not in subject.subtree]
    if root.lemma_ in lexicon.words("family_fact_words") or any(
        t.lemma_.lower() in lexicon.words("family_fact_words") or t.lower_ == "user" for t in said
    ):
        return False
    # "The user's wife Meera is 36.", "The user's husband is Tom."
    return not any(t.tag_ == "CD" or (t.tag_ == "NNP" and t.dep_ in {"attr", "oprd"}) for t in said)


def _question(doc: Doc) -> bool:
    """Does this clause ask ("How do I ...", "Are you ...") rather than state?"""
    first = next((t for t in doc if not t.is_punct and t.pos_ != "INTJ"), None)
    if first is None:
        return False
    if first.tag_ in {"WDT", "WP", "WP$", "WRB"}:
        return True
    # "Do I ...", "Can you ...", and "Are you ..." whose verb is the root, its subject after it
    return (
        first.lemma_.lower() in lexicon.words("inverted")
        and first.pos_ in {"AUX", "VERB"}
        and (first.dep_ != "ROOT" or any(c.dep_ in {"nsubj", "nsubjpass"} and c.i > first.i for c in first.children))
    )


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
