"""Memory keys: the needs a memory answers, written as the user would voice them.

A memory is written as a fact ("The user is a pediatric nurse in Montreal.") and asked for as
a need ("What do I do for a living?", "Plan my week around my shifts."). The two are far apart
for any sentence encoder (0.23 for that pair), so a floor low enough to let the need find its
fact lets every coincidence through as well. A memory's keys are its needs, worded the way
turns are worded; recall scores a memory by the best of its text and its keys
(memoryapp.selectors), and the floor can then sit where a coincidence falls under it.

Offline, keys come from the table below: each row is a kind of fact, recognised in the
third-person sentence every extractor writes, with the needs a fact of that kind answers.
A row covers a kind (a job, a diet, a child, a condition), never one phrasing of it; `{x}` in a
key is filled with the row's named group. A fact of no known kind gets no keys and is found by
its text alone, as before. The kinds that are special categories (memoryapp.sensitive) carry
keys on their topic only, so that a key match means the turn is about that topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryapp.standing import is_standing
from memoryapp.wording import as_said

MAX_KEYS = 5  # the fact asked as a question, and up to two kinds' keys
MAX_KEY_CHARS = 200

_FAMILY = (
    r"wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|son|daughter|child|kid|baby|twins?|"
    r"mother|mum|mom|father|dad|sister|brother|grand(?:mother|father|ma|pa|son|daughter)|aunt|uncle|cousin|"
    r"niece|nephew|stepson|stepdaughter"
)
_PETS = (
    r"dog|cat|kitten|puppy|rabbit|hamster|parrot|tortoise|turtle|horse|guinea pig|lizard|snake|fish|ferret|"
    r"greyhound|lurcher|beagle|shiba inu|labrador|spaniel|terrier|poodle|collie"
)
_LANGUAGES = (
    r"english|spanish|french|german|italian|portuguese|dutch|polish|swedish|turkish|russian|japanese|chinese|"
    r"mandarin|cantonese|korean|arabic|hindi|urdu|yoruba|twi|swahili|greek|hebrew"
)


@dataclass(frozen=True)
class Kind:
    name: str
    pattern: re.Pattern[str]
    keys: tuple[str, ...]
    category: str = ""  # a special category of personal data (see `category_of`), shown to the user
    # what fills `{x}` when the pattern names nothing: the thing the fact is about (a job's title,
    # a device, an instrument), so that a key carries the fact's own words
    detail: re.Pattern[str] | None = None


def _kind(name: str, pattern: str, *keys: str, category: str = "", detail: str = "") -> Kind:
    return Kind(name, re.compile(pattern, re.I), keys, category, re.compile(detail, re.I) if detail else None)


# Most specific kinds first: a fact takes the keys of the first two kinds it is of.
KINDS: tuple[Kind, ...] = (
    # The single-valued slots (memoryapp.slots).
    _kind(
        "name",
        r"^the user(?:'s)? (?:name is|full name is|goes by|is called)\b",
        "What is my name?",
        "What should you call me?",
    ),
    _kind(
        "timezone",
        r"^the user(?:'s)? (?:timezone|time zone) is\b|\btime ?zone\b",
        "What time is it for me?",
        "Schedule a call at a time that suits me.",
    ),
    _kind(
        "home",
        r"^the user (?:now |currently |still )?(?:lives|resides|is based|is living|has lived|has been living) in\b",
        "Where do I live?",
        "Which city am I in?",
        "Suggest a day trip or a walk near my home.",
    ),
    _kind("age", r"^the user is \d{1,3} years? old\b|^the user is (?:aged )?\d{1,3}\.?$", "How old am I?"),
    _kind("birthday", r"\bbirthday\b", "When is my birthday?", "Plan my birthday."),
    # Special categories: keys on the topic only.
    _kind(
        "pregnancy",
        r"\bpregnan|\bexpecting (?:a|their|our) (?:first |second |third )?(?:baby|child)\b|"
        r"\bivf\b|\bfertility\b|\bin vitro\b",
        "Is this safe during my pregnancy or fertility treatment?",
        "Which exercises and foods are safe for me now?",
        "What should I ask at my fertility or pregnancy appointment?",
        category="pregnancy",
    ),
    _kind(
        "alcohol",
        r"\bsober\b|\bsobriety\b|\balcohol|\bdoes(?:n't| not) drink\b|\bquit drinking\b",
        "Suggest a drink I could order.",
        "Plan a night out at a pub or bar for me.",
        "Help me stay away from alcohol.",
        category="alcohol or addiction",
    ),
    _kind(
        "addiction",
        r"\bgambl\w*|\baddict\w*|\brecovery\b|\brehab\b|\bsmok\w*|\bcigarette|\bvap(?:e|ing)\b|\bnicotine\b",
        "Help me with my cravings.",
        "Help me stay on track with my recovery.",
        "Plan a weekend that keeps me away from temptation.",
        category="alcohol or addiction",
    ),
    _kind(
        "medication",
        r"\b(?:takes?|taking|on) (?:\w+ )?(?:medication|medicine|antidepressants?|insulin|lithium|pills?)\b|"
        r"\bantidepress",
        "Can I take this with my medication?",
        "Is it safe to drink alcohol or coffee with my medication?",
        "What medication do I take?",
        category="health",
    ),
    _kind(
        "drug allergy",
        r"\ballerg\w* to (?:\w+ )?(?:penicillin|amoxicillin|antibiotics?|aspirin|ibuprofen|nsaids?|sulfa\w*|codeine|"
        r"morphine|anaesthetics?|anesthetics?|medicines?|medications?|drugs?)\b",
        "Which medicines must I avoid?",
        "What should I tell my doctor or pharmacist?",
        "Is this medicine safe for me?",
        category="health",
    ),
    _kind(
        "allergy",
        r"\ballerg\w*|\bintoleran\w*|\bcoeliac|\bceliac",
        "What foods must I avoid?",
        "Suggest a snack or a recipe that is safe for me.",
        "Which medicines must I avoid?",
        category="health",
    ),
    _kind(
        "condition",
        r"\b(?:diabet\w*|asthma|epilep\w*|migraines?|adhd|autis\w*|dyslexi\w*|bipolar|depression|anxiety|ptsd|ocd|"
        r"disorder|disease|syndrome|cancer|arthritis|colou?r ?blind\w*|blood pressure|surgery|injury|disabilit\w*)\b",
        "What health conditions do I have?",
        "Is this safe for my health?",
        "What should I eat with my condition?",
        category="health",
    ),
    _kind(
        "faith",
        r"\b(?:muslim|christian|catholic|jewish|hindu|buddhist|sikh|religio\w*|faith|prays?|church|mosque|"
        r"synagogue|temple|ramadan|sabbath|halal|kosher)\b",
        "How do I fit my prayers and my faith into my plans?",
        "What food is allowed for me?",
        "Plan around my religious holidays.",
        category="religion",
    ),
    _kind(
        "money",
        r"\b(?:debt|loan|mortgage|salary|income|savings?|saving (?:up )?for|budget|bankrupt\w*|overdraft|"
        r"credit card|rent)\b",
        "Help me with my budget.",
        "Can I afford this?",
        "Plan my spending this month.",
        category="money",
    ),
    _kind(
        "sexuality",
        r"\b(?:gay|lesbian|bisexual|queer|transgender|trans (?:woman|man)|non-binary|lgbt\w*)\b",
        "Suggest places and events where I would feel welcome.",
        category="sexuality",
    ),
    _kind(
        "politics",
        r"\b(?:votes?|voted|democrat|republican|labour|conservative|liberal|socialist|political|activist)\b",
        "What are my political views?",
        category="politics",
    ),
    _kind(
        "child",
        # the user's own child: owned ("the user's son", "has twins", "had their first baby"), not
        # any child named in passing ("a nurse on a children's ward"); the keys name the child as
        # the fact does, so a son's age is not given to a question about a daughter
        r"(?:\bthe user's|\btheir|\bhas|\bhad)(?: [\w-]+){0,3}? "
        r"(?P<x>sons?|daughters?|child|children|kids?|bab(?:y|ies)|twins?|toddlers?)\b",
        "How old {be} my {x}?",
        "Suggest something to do with my {x}.",
        "Suggest a gift for my {x}.",
        category="a child",
    ),
    # Ordinary kinds.
    _kind(
        "partner",
        r"\b(?:married|engaged|divorced|widowed|single)\b",
        "Suggest a gift for my partner.",
        "Plan something to do with my partner.",
    ),
    _kind(
        "relation",
        rf"\b(?P<x>{_FAMILY})\b",
        "What is my {x}'s name?",
        "Suggest a gift for my {x}.",
        "Plan something to do with my {x}.",
    ),
    _kind(
        "pet",
        rf"\b(?P<x>{_PETS})s?\b",
        "What is my {x}'s name?",
        "How do I look after my {x}?",
        "Plan a walk or an outing with my {x}.",
    ),
    _kind(
        "language",
        rf"\b(?:speaks?|learning|studying|studies|is fluent in|native) (?:\w+ )?(?P<x>{_LANGUAGES})\b",
        "Which languages do I speak or learn?",
        "Help me practise {x}.",
    ),
    _kind(
        "diet",
        r"\b(?:vegan|vegetarian|pescatarian|gluten|dairy|lactose|keto|paleo|does(?:n't| not) eat|avoids eating|"
        r"eats|cut(?:ting)? down on|hates (?:mushrooms|cilantro|coriander)|dislikes (?:cilantro|coriander)|"
        r"spicy food)\b",
        "What should I eat or cook?",
        "Suggest a recipe, a meal or a restaurant for me.",
        "Plan my meals for the week.",
    ),
    _kind(
        "drink",
        r"\b(?:tea|coffee|espresso|wine|beer|juice|smoothies?)\b",
        "What should I drink?",
        "Suggest a drink for me.",
    ),
    _kind(
        "study",
        r"\b(?:student|studies|studying|is doing an? (?:\w+ )?(?:degree|mba|phd|course)|at university|exam)\b",
        "What am I studying?",
        "Help me plan my revision for an exam.",
        "Help me with my coursework.",
    ),
    _kind(
        "job",
        r"^the user (?:is an? (?!fan\b)|works\b|programs in|codes in|designs\b|runs (?!\d|most|every)|"
        r"owns a (?:\w+ )?(?:shop|studio|bakery|business)|teaches|"
        r"drives (?:a )?(?:truck|bus|taxi|lorr)|co-owns|was promoted)|\bjob\b|\bcareer\b|\bfor a living\b",
        "What do I do for a living?",
        "What is my job?",
        "Help me with my work as {x}.",
        detail=r"^the user (?:is|works(?: remotely)? as) (an? [\w' -]+?)(?=\.| at\b| in\b| for\b| who\b| on\b|,|$)",
    ),
    _kind(
        "commute",
        r"\b(?:to work|commut\w*)\b",
        "How do I get to work?",
        "Plan my commute.",
    ),
    _kind(
        "training",
        r"\b(?:training for|marathons?|race|triathlon|runs? (?:\d|most|every)|running|cycl\w*|swim\w*|climb\w*|yoga|"
        r"gym|football|handball|capoeira|surf\w*|kayak\w*|hik\w*)\b",
        "Plan my training or exercise this week.",
        "Which sport do I do?",
    ),
    _kind(
        "hobby",
        r"\b(?:plays?|playing|learning|collects?|collecting|restoring|writing|paints?|painting|knits?|"
        r"pottery|photograph\w*|volunteers?|practises|practices)\b",
        "What are my hobbies?",
        "Which instrument do I play, what do I collect or make?",
        "Help me get better at {x}.",
        detail=r"\b(?:plays?|learning|collects?|restoring|writing|practises|practices) (?:the |an? )?(.+?)"
        r"(?= since\b| for\b| in\b| on\b| every\b|\.|$)",
    ),
    _kind(
        "move",
        r"\b(?:moving|relocating) to\b|\bmoves? to\b",
        "Where am I moving to?",
        "Help me plan my move.",
    ),
    _kind(
        "travel",
        r"\b(?:travel\w*|trip|holiday|vacation|flying|visit\w*) (?:to|in)\b|\bbooked\b",
        "Where am I travelling next?",
        "Help me plan my trip.",
    ),
    _kind(
        "origin",
        r"\b(?:is from|grew up in|was born in|comes from|used to live in)\b",
        "Where am I from?",
        "Where did I grow up?",
    ),
    _kind(
        "things",
        r"\b(?:uses?|owns?|has an? (?:old |new |vintage )?(?-i:[A-Z])\w*|drives|shoots (?:on|with)|reads on|"
        r"laptop|phone|camera|car|bike|editor|tool)\b",
        "What devices and tools do I use?",
        "Which camera, phone, computer, software or car do I have?",
        "Give me tips for my {x}.",
        detail=r"\b(?:uses?|owns?|has|drives|shoots (?:on|with)|reads on) (?:an? |the |their )?(.+?)\.?$",
    ),
    _kind(
        "taste",
        r"\b(?:likes?|loves?|enjoys?|prefers?|favou?rite|is a fan of|supports|dislikes?|hates?|cannot stand|"
        r"can't stand|is afraid of|does(?:n't| not) want)\b",
        "What do I like and dislike?",
        "What music, food, drinks or teams are my favourites?",
    ),
)


_INVERTED = re.compile(
    r"^(I|My [^.]*?) (am|was|have been|had been|can't|can|cannot|will|would|is|are|has)\b ?(.*?)\.?$"
)
_PLAIN = re.compile(
    r"^I ((?:always|never|often|usually|also|still|really|only|sometimes|mostly|rarely) )?(\w+) ?(.*?)\.?$"
)


# Past forms a fact is written with, and how "Have I ...?" says them.
_PARTICIPLES = {"had": "had", "got": "got", "went": "gone", "grew": "grown", "took": "taken", "made": "made"}


def as_question(fact: str) -> str | None:
    """The fact as the user would ask whether it holds: "The user owns a Brompton folding
    bike." -> "Do I own a Brompton folding bike?". It carries the fact's own words in the form
    of a turn that asks about the user, so it meets such a turn closer than the fact's third
    person does, and a statement about something else no closer."""
    said = as_said(fact)
    if not said or said.startswith(("Don't", "Do not")) or not said.startswith(("I ", "My ")):
        return None
    match = _INVERTED.match(said)
    if match:
        subject, verb, rest = match.groups()
        first, _, more = verb.partition(" ")
        subject = subject if subject == "I" else subject[0].lower() + subject[1:]
        return f"{first.capitalize()} {subject} {' '.join(w for w in (more, rest) if w)}?"
    match = _PLAIN.match(said)
    if match:
        adverb, verb, rest = match.groups()
        if verb in {"do", "did"}:
            return f"{verb.capitalize()} I {rest}?"
        if verb.endswith("ed") or verb in _PARTICIPLES:
            return f"Have I {adverb or ''}{_PARTICIPLES.get(verb, verb)} {rest}?".replace("  ", " ")
        return f"Do I {adverb or ''}{verb} {rest}?".replace("  ", " ")
    return None


def keys_of(fact: str) -> list[str]:
    """The needs a fact answers, in the first person: the fact asked as a question, then the
    keys of the first two kinds it is of (at most MAX_KEYS in all). A standing instruction has
    none: it goes with every reply (memoryapp.selectors)."""
    if is_standing(fact):
        return []
    question = as_question(fact)
    keys: list[str] = [question] if question else []
    kinds = 0
    for kind in KINDS:
        match = kind.pattern.search(fact)
        if match is None:
            continue
        value = (match.groupdict().get("x") or "").lower()
        if not value and kind.detail is not None:
            found = kind.detail.search(fact)
            value = found.group(1) if found else ""
        for key in kind.keys:
            if "{x}" not in key:
                keys.append(key)
            elif value:
                plural = value.endswith("s") or value in {"children", "babies"}
                keys.append(key.format(x=value, be="are" if plural else "is"))
        kinds += 1
        if kinds == 2:
            break
    return list(dict.fromkeys(key[:MAX_KEY_CHARS] for key in keys))[:MAX_KEYS]


def keyed(fact: str) -> list[tuple[str, str]]:
    """`keys_of` with each key's kind: "question" for the fact asked, "need" for the rest
    (memoryapp.models.MemoryKey.Kind)."""
    question = as_question(fact)
    return [(key, "question" if key == question else "need") for key in keys_of(fact)]


def kinds_of(fact: str) -> list[str]:
    """The names of the kinds a fact is of, most specific first (at most two, as `keys_of` takes them)."""
    return [kind.name for kind in KINDS if kind.pattern.search(fact)][:2]


# How the profile ("What do you know about me?") groups memories: by the first kind a fact is of.
GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("About you", frozenset({"name", "timezone", "home", "age", "birthday", "origin", "move", "travel"})),
    ("Work and study", frozenset({"job", "study", "commute"})),
    ("Family and pets", frozenset({"child", "relation", "partner", "pet"})),
    (
        "Health",
        frozenset({"pregnancy", "alcohol", "addiction", "medication", "drug allergy", "allergy", "condition"}),
    ),
    ("Food and drink", frozenset({"diet", "drink"})),
    ("Interests and things you use", frozenset({"hobby", "training", "language", "taste", "things"})),
    ("Faith, politics and money", frozenset({"faith", "politics", "money", "sexuality"})),
)
OTHER_GROUP = "Other"


def group_of(fact: str) -> str:
    """The profile group of a fact (GROUPS), OTHER_GROUP for a fact of no known kind."""
    kinds = kinds_of(fact)
    return next((label for label, names in GROUPS if kinds and kinds[0] in names), OTHER_GROUP)


def category_of(fact: str) -> str:
    """The special category of personal data a fact belongs to ("health", "a child", "religion",
    ...), or "" for an ordinary fact. Such a memory is given only to a turn on its topic."""
    return next((kind.category for kind in KINDS if kind.category and kind.pattern.search(fact)), "")
