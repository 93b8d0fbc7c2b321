"""Whose fact is it? A check that a fact about the user is told by the user about themselves.

The write gate's similarity measures topic, not subject: "My colleague Dr. Alvarez prefers
tea." and "The user's name is Dr. Alvarez." share their words, so an extractor that puts the
colleague's name on the user passes it (measured 0.62 against a gate of 0.49). This module
reads who each clause of the turn is about and rejects a fact whose best supporting clause is
about someone else, or only imagined:
- a clause whose subject is another person ("my sister ...", "he ...", "Dana works ...");
- a hypothetical ("if I were rich ...", "I'd love to ...");
- a quotation standing as a clause of its own ("As the saying goes, 'a watched pot never boils'.");
- a name that the turn gives to someone else ("my colleague Dr. Alvarez"), put on the user.
A fact that names the relation itself ("The user's wife is named Sara.") is about the user's
family and stays. The rules are English; other languages pass unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryapp.lexicon import ordered

RELATIONS = ordered("relations")
_RELATION_WORDS = "|".join(re.escape(r) for r in RELATIONS)
_RELATION = rf"(?:{_RELATION_WORDS})(?:s|es)?"
_FILLER = (
    r"(?:(?:well|so|also|actually|oh|yes|yeah|ok|okay|honestly|btw|and|but|now|then|plus|anyway|lol|lmao|haha|omg|"
    r"ugh|wow)\W+)*"
)
# Whose relation: the user's ("my sister"), someone else's ("his boss", "Tom's wife"), anyone's
# ("the kids", "a colleague"), or with no word before it when there are several ("Colleagues go to
# the gym") or it is what the user calls a parent ("Mum says ..."): in each case the clause is
# about that person, not the user.
_THIRD_PARTY = re.compile(
    rf"^{_FILLER}(?:(?:my|our|his|her|their|the|a|an|this|that|these|those|[\w-]+['’]s)\s+(?:[\w'-]+\s+){{0,2}}?"
    rf"{_RELATION}\b|(?:he|she|they|his|her|their)\b|(?:{_RELATION_WORDS})(?:s|es)\b"
    r"|(?:mom|mum|dad|mama|papa|grandma|grandpa|children)\b)",
    re.IGNORECASE,
)
_NAMED_SUBJECT = re.compile(
    r"^(?:(?:Dr|Mr|Ms|Mrs|Prof)\.?\s+)?(?!I\b|I'|I’|We\b)[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*\s+"
    r"(?:is|was|are|were|has|had|lives|lived|works|worked|loves|likes|prefers|moved|grew|wants|hates|"
    r"plays|speaks|comes|came|was born|owns|uses|eats|drinks)\b"
)
# The person spoken to: a clause led by "you" or "your", or a question asked of them ("How did you
# get into running?"). In a chat between two people that is the other one; a remark about the
# assistant is the instruction rules' business (memoryapp.grammar), not a fact about the user.
_TO_THE_LISTENER = re.compile(
    rf"^{_FILLER}(?:(?:how|what|when|where|why|which|who)\s+(?:[\w'’-]+\s+){{0,2}}?)?"
    r"(?:(?:do|did|does|are|were|was|have|had|will|would|can|could|should|must)\s+)?"
    r"(?:you|you're|you’re|youre|you've|you’ve|you'll|you’ll|you'd|you’d|your|yours|u|ur)\b",
    re.IGNORECASE,
)
# A clause led by a relative, a friend or a colleague in the other languages the multilingual
# encoder reads ("Mi hermana vive en Buenos Aires.", "Mein Chef trinkt nur Espresso.",
# "上司はゴルフが大好きです。"), with the English word for the relation. Only the clause itself is
# read as theirs: a language that drops its pronouns gives the next clause no subject to inherit.
_RELATIONS_ABROAD = {
    "brother": "hermano fratello irmão bruder frère broer brat брат 哥哥 弟弟 兄 弟 형 오빠 동생 أخي",
    "sister": "hermana sorella irmã schwester sœur soeur zus siostra сестра 姐姐 妹妹 姉 妹 누나 언니 أختي",
    "mother": "madre mamá mamma mãe mutter mama mère maman moeder matka мама мать 妈妈 母 엄마 어머니 أمي",
    "father": "padre papá papà pai vater papa père vader ojciec tata папа отец 爸爸 父 아빠 아버지 أبي",
    "son": "hijo figlio filho sohn fils zoon syn сын 儿子 息子 아들 ابني",
    "daughter": "hija figlia filha tochter fille dochter córka дочь 女儿 娘 딸 ابنتي",
    "husband": "marido esposo marito ehemann mann mari man mąż муж 丈夫 老公 夫 主人 남편 زوجي",
    "wife": "esposa mujer moglie mulher ehefrau frau femme vrouw żona жена 妻子 老婆 妻 아내 زوجتي",
    "partner": "pareja novio novia ragazzo ragazza namorado namorada freund freundin copain copine vriend vriendin "
    "chłopak dziewczyna парень девушка 男朋友 女朋友 彼氏 彼女 남자친구 여자친구",
    "friend": "amigo amiga amico amica ami amie przyjaciel przyjaciółka друг подруга 朋友 友達 友人 친구 صديقي صديقتي",
    "boss": "jefe jefa capo chefe chef chefin patron patronne baas szef szefowa начальник начальница "
    "老板 上司 상사 مديري",
    "colleague": "compañero compañera colega collega kollege kollegin collègue kolega koleżanka коллега "
    "同事 同僚 동료 زميلي",
    "neighbour": "vecino vecina vicino vicina vizinho vizinha nachbar nachbarin voisin voisine buurman buurvrouw "
    "sąsiad sąsiadka сосед соседка 邻居 隣人 이웃 جاري",
    "brother-in-law": "cuñado cognato cunhado schwager beau-frère",
    "sister-in-law": "cuñada cognata cunhada schwägerin belle-sœur",
    "cousin": "primo prima cugino cugina cousin cousine",
    "uncle": "tío zio tio onkel oncle",
    "aunt": "tía zia tia tante",
    "grandmother": "abuela nonna avó oma grand-mère babcia бабушка 祖母 할머니",
    "grandfather": "abuelo nonno avô opa grand-père dziadek дедушка 祖父 할아버지",
}
# Turkish says "my" with a suffix: the word opens the clause with no possessive before it.
_RELATIONS_SUFFIXED = {
    "brother": "kardeşim abim ağabeyim",
    "sister": "ablam",
    "mother": "annem",
    "father": "babam",
    "son": "oğlum",
    "daughter": "kızım",
    "husband": "kocam",
    "wife": "karım",
    "partner": "eşim sevgilim",
    "friend": "arkadaşım",
    "boss": "patronum müdürüm",
    "neighbour": "komşum",
    "uncle": "amcam dayım",
    "aunt": "teyzem halam",
}
_ABROAD = {
    word: relation
    for table in (_RELATIONS_ABROAD, _RELATIONS_SUFFIXED)
    for relation, words in table.items()
    for word in words.split()
}


def _alternatives(words: list[str]) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


_SUFFIXED = [word for words in _RELATIONS_SUFFIXED.values() for word in words.split()]
# Chinese, Japanese, Korean and Arabic words may open the clause with no space after a possessive
# ("我妈妈", "上司は").
_ASIAN_OR_ARABIC = [w for w in _ABROAD if re.search(r"[\u0600-\u06ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]", w)]
_SPACED = [w for w in _ABROAD if w not in _SUFFIXED and w not in _ASIAN_OR_ARABIC]
_OPENER = (
    r"(?:mi|mis|tu|su|sus|mein|meine|meinem|meiner|unser|unsere|mon|ma|mes|notre|nos|mio|mia|miei|mie|meu|minha|"
    r"meus|minhas|mój|moja|moi|moje|мой|моя|мои|наш|наша|mijn|onze|el|la|los|las|le|les|der|die|das|il|lo|"
    r"o|a|os|as|het|de)"
)
_ABROAD_SUBJECT = re.compile(
    rf"^(?:{_OPENER}\s+){{1,2}}(?:[\w'-]+\s+)?({_alternatives(_SPACED)})\b"
    rf"|^(?:benim\s+)?({_alternatives(_SUFFIXED)})\b"
    rf"|^(?:我的?|我们的?|私の|僕の|うちの|제|내|우리)?\s*({_alternatives(_ASIAN_OR_ARABIC)})",
    re.IGNORECASE,
)


def relation_abroad(clause: str) -> str | None:
    """The English word for the relation that leads a clause in another language, or None."""
    match = _ABROAD_SUBJECT.match(clause)
    if not match:
        return None
    word = next(group for group in match.groups() if group)
    return _ABROAD.get(word) or _ABROAD.get(word.lower())


# The English words a reading may use for a relation (see `lost_relation`); any other relation is
# its own word.
_RELATION_IN_ENGLISH = {
    "mother": "mother|mom|mum|mama|mommy|mummy",
    "father": "father|dad|daddy|papa",
    "partner": "partner|boyfriend|girlfriend|fiancée?|fiance",
    "boss": "boss|manager|supervisor|chief",
    "colleague": "colleague|co-?worker",
    "neighbour": "neighbou?r",
    "grandmother": "grandmother|grandma|granny|nan",
    "grandfather": "grandfather|grandpa|granddad",
}


def lost_relation(turn: str, reading: str) -> str | None:
    """The relation that leads a clause of a turn in another language and that its English
    reading never names, or None. A reading that drops "Ablam" ("my older sister") puts her job
    and her city on the user: "Ablam Berlin'de doktor" read as "I went to the doctor in Berlin"."""
    for clause in clauses(turn):
        relation = relation_abroad(clause.text)
        words = _RELATION_IN_ENGLISH.get(relation or "", re.escape(relation or ""))
        if relation and not re.search(rf"\b(?:{words})(?:s|es)?\b", reading, re.IGNORECASE):
            return relation
    return None


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|im|i've|i’ve|i'll|me|myself|mine)\b|\bmy\b", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|wish|imagine|pretend|suppose|hypothetically|someday|i'd|i’d|dream of|fantasi[sz]e)\b",
    re.IGNORECASE,
)
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Ms|Mrs|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e)\.$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;。！？])\s+|(?<=[。！？])|\n+")
# "Me and my dad have been restoring a Beetle": the user is in the subject, so the clause is not
# split after "Me" and left to the dad (read as "Me with my dad ...").
_WITH_ME = re.compile(r"^(\W*(?:me|i))\s+(?:and|&)(?=\s)", re.IGNORECASE)
# "And" and "but" in the other languages the multilingual encoder reads, so that "Sou desenvolvedor e
# moro em Belo Horizonte." is two clauses, each close to its own fact. Not the words that are also
# common words elsewhere: Dutch "en" ("in" in Spanish), Polish "i" (English "I"), Italian "ma"
# (Polish "has").
_CLAUSE = re.compile(
    r",\s*|\s+(?:and|but|so|because|while|although|whereas|et|mais|und|aber|y|pero|e|ed|ve|ama|и|но)\s+",
    re.IGNORECASE,
)


_QUOTATION = re.compile(r"[\"“'‘][^\"“”]+[\"”'’]", re.S)
# The frame of a saying ("As my old teacher used to say", "like my dad always says"): it says who
# said the words that follow, nothing about the user.
_SAYING = re.compile(
    rf"^{_FILLER}(?:as|like)\s+(?:[\w'’-]+\s+){{1,4}}?(?:(?:always|often|used to|would|likes to|loves to)\s+)?"
    r"(?:say|says|said|put it|puts it)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    text: str
    subject: str  # "user", "other", "listener", "hypothetical", "quoted" or "unknown"
    relation: str | None = None  # the relation word when the subject is "my <relation>"


def sentences(text: str) -> list[str]:
    """Sentences, not cut after a title or common abbreviation ("Dr. Alvarez")."""
    parts: list[str] = []
    for piece in _SENTENCE.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if parts and _ABBREVIATION.search(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


_NAMES_ME = re.compile(r"\b(?:call|calls|called|know|knows)\s+me\b", re.IGNORECASE)


# "If" opening a clause in the other languages the encoder reads: "Si j'étais riche, ...",
# "Wenn ich reich wäre, ...", "如果我有钱，...". What the clause and the rest of its sentence say is imagined.
_IF_ABROAD = re.compile(r"^(?:(?:si|wenn|falls|se|jeśli|jeżeli|если|eğer)\b|如果|要是|もし|만약)", re.IGNORECASE)


_CONDITION = re.compile(rf"^{_FILLER}(?:if|unless|suppose|supposing|imagine)\b", re.IGNORECASE)


def _subject(clause: str, inherited: str) -> tuple[str, str | None]:
    if _HYPOTHETICAL.search(clause) or _IF_ABROAD.match(clause):
        return "hypothetical", None
    if _NAMES_ME.search(clause):  # "my friends call me Priya" is about the user
        return "user", None
    if _TO_THE_LISTENER.match(clause) and not _FIRST_PERSON.search(clause):  # not "can you help me plan my trip"
        return "listener", None
    third = _THIRD_PARTY.match(clause)
    if third:
        relation = re.search(_RELATION, third.group(0), re.IGNORECASE)
        return "other", relation.group(0).lower() if relation else None
    if _NAMED_SUBJECT.match(clause):
        return "other", None
    if _FIRST_PERSON.search(clause):
        return "user", None
    return inherited, None


def clauses(text: str) -> list[Clause]:
    """The turn's clauses, each with who it is about; a clause with no subject of its own
    ("... and is a lawyer") is about whoever the previous clause of the sentence was."""
    result: list[Clause] = []
    for sentence in sentences(text):
        subject, relation = "unknown", None
        consequent = False
        parts = _CLAUSE.split(_WITH_ME.sub(r"\1 with", sentence))
        for part in parts:
            part = part.strip(" .!?;")
            if len(part) < 3:
                continue
            if _QUOTATION.fullmatch(part) or _SAYING.match(part):  # a saying or someone's words, or who said them
                result.append(Clause(part, "quoted"))
                continue
            abroad = relation_abroad(part)
            if abroad:  # the clause is theirs, and its neighbours are left as they were read
                result.append(Clause(part, "other", abroad))
                continue
            found, found_relation = _subject(part, subject)
            if consequent:  # "If you win the lottery, I'll buy a house": what follows an "if" is imagined too
                found, found_relation = "hypothetical", None
            consequent = bool(_CONDITION.match(part) or _IF_ABROAD.match(part))
            if found != subject or found_relation:
                subject, relation = found, found_relation
            result.append(Clause(part, subject, relation if subject == "other" else None))
    return result


def _about_relation(fact: str, relation: str) -> bool:
    """Whether the fact is about the user's relation as such ("The user's wife is named Sara.",
    "The user has two sons."), rather than putting the relation's traits on the user."""
    word = re.escape(relation.lower().rstrip("s") if len(relation) > 3 else relation.lower())
    return (
        re.search(
            rf"\b(?:user's|user’s|their)\s+(?:[\w-]+\s+){{0,2}}{word}|\bhas\s+(?:[\w-]+\s+){{0,2}}{word}",
            fact,
            re.IGNORECASE,
        )
        is not None
    )


def _name_given_to_someone_else(fact: str, turn: str) -> str | None:
    for name in re.findall(r"(?:(?:Dr|Mr|Ms|Mrs|Prof)\.?\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*", fact):
        if name in {"The", "User"} or name.startswith("The "):
            continue
        last = name.split()[-1]
        owner = re.search(
            rf"\b(?i:({_RELATION}))\b\W+(?i:(?:named|called|,)\W*)?(?:(?:Dr|Mr|Ms|Mrs|Prof)\.?\s+)?"
            rf"(?:[A-Z][\w'’-]+\s+){{0,2}}{re.escape(last)}\b",
            turn,
        )
        if owner and not _about_relation(fact, owner.group(1)):
            return f"the turn gives the name {name!r} to the user's {owner.group(1).lower()}"
    return None


_GREETING = r"(?:hi|hey|hello|dear|thanks|thank you|congrats|bye|wow|yeah|yes|sorry|agreed|ok|okay|oh)"
# How a turn gives the user a name ("Call me Priya", "I'm Noor"); memoryapp.grammar reads it too.
SELF_NAMING = r"call me|I'm|I’m|I am|my name is|my name's|my name’s|this is"


def _name_of_the_listener(fact: str, turn: str) -> str | None:
    """The name the turn calls the person it speaks to ("Hey Jon!", "Who supports you, Mel?")
    is theirs, not the user's: "The user's name is Mel." from such a turn is the incident this
    product exists to prevent."""
    if not re.search(r"\b(?:name|named|called|calls)\b", fact, re.I):
        return None
    for name in re.findall(r"\b[A-Z][\w'’-]+", fact):
        if name in {"The", "User"} or re.search(rf"\b(?:{SELF_NAMING}|it's|it’s)\s+{re.escape(name)}\b", turn, re.I):
            continue
        named = re.search(rf"\bthe user's ([\w' -]+?) is named {re.escape(name)}\b", fact, re.I)
        if named and re.search(
            rf"\b{re.escape(name)}\s*,\s*(?:my|our)\s+(?:[\w-]+\s+){{0,2}}{re.escape(named.group(1))}\b", turn, re.I
        ):
            continue  # "Oscar, my guinea pig.", "Pepper, my old beagle, ..." name the pet, not the listener
        spoken_to = re.search(
            rf"(?:^|[.!?]\s+|\b{_GREETING}\W+){re.escape(name)}\s*[,!?]|,\s*{re.escape(name)}\s*(?:[!?.,]|$)",
            turn,
            re.I,
        )
        if spoken_to:
            return f"the turn speaks to {name}: the name is the listener's, not the user's"
    return None


_ABOUT_THE_ASSISTANT = re.compile(r"\bthe assistant\b|\b(?:answers?|repl(?:y|ies)|responses?)\b", re.IGNORECASE)


def misattribution(fact: str, clause: Clause, turn: str) -> str | None:
    """Why `fact` is not the user's own statement about themselves, or None when it is."""
    named = _name_given_to_someone_else(fact, turn) or _name_of_the_listener(fact, turn)
    if named:
        return named
    if clause.subject == "hypothetical":
        return "the supporting clause is hypothetical"
    if clause.subject == "quoted":
        return "the supporting clause is quoted, not the user speaking"
    if clause.subject == "other" and not (clause.relation and _about_relation(fact, clause.relation)):
        return "the supporting clause is about someone else"
    if clause.subject == "listener" and not _ABOUT_THE_ASSISTANT.search(fact):
        return "the supporting clause is about the person the user speaks to"
    return None
