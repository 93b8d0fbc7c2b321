"""What kind of turn it is, whatever it states: a question or request only, one that speaks of
anyone, one that asks the assistant for something, a request to forget and what it names.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

from memoryapp import lexicon
from memoryapp.attribution import sentences
from memoryapp.grammar.parsing import (
    _CODE,
    _NON_LATIN,
    _STANDING,
    FIRST_PERSON,
    _is_imperative,
    _negated,
    analyse,
    looks_english,
    own_words,
)


def requests_something(text: str) -> bool | None:
    """Does an English turn ask the assistant for something? A sentence whose verb is an
    imperative ("Plan my week around my shifts.", "Help me prepare for my exam.", "Please
    suggest a film.") or a word of asking for advice ("Any ideas for dinner tonight.", "I need tips
    for my interview."), in the user's own words. False for a turn that only tells ("I'm
    grading essays all weekend."); None for a turn that is not English (no parse to tell)."""
    doc = analyse(own_words(text))
    if not [t for t in doc if t.is_alpha] or not looks_english(doc):
        return None
    advice = lexicon.words("advice")
    # an imperative is the verb's base form as written: "Picked up an extra shift." drops its "I"
    return any(
        _is_imperative(sentence.root) and sentence.root.lower_ == sentence.root.lemma_.lower() for sentence in doc.sents
    ) or any((t.lower_ in advice or t.lemma_.lower() in advice) and not _users_own_doing(t) for t in doc)


def _users_own_doing(word: Token) -> bool:
    """A verb whose subject is the user: "I picked up a shift" tells what they did, asks nothing."""
    return word.pos_ in {"VERB", "AUX"} and any(
        c.dep_ in {"nsubj", "nsubjpass"} and c.lower_ in FIRST_PERSON for c in word.children
    )


# "How do I ...", "How can we ...", "Should I ...", "Can I ...": asking what to do or whether one
# may, in the first person, now; "How did I ..." asks what was.
_HOW_TO = re.compile(r"^\W*(?:how\s+(?:do|can|could|should|would)|should|can|could)\s+(?:i|we)\b", re.I)


def asks_how_to(text: str) -> bool:
    """Does an English turn ask how to do something, or whether the user should or may ("How do I
    fold a fitted sheet?", "Should I shoot weddings in RAW or JPEG?", "Can I freeze cooked
    rice?")? Such a question asks for a method or advice, not for anything the user said."""
    return bool(_HOW_TO.match(own_words(text)))


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
    return sentences(own_words(text))


def code_spans(text: str) -> list[str]:
    """The code the turn quotes, inline or fenced, without its backticks."""
    return [code for m in _CODE.finditer(text) if (code := m.group(0).strip("`").strip())]


def asks_outright(text: str) -> bool:
    """Does every sentence of the turn open with a question word ("Is it safe ...?", "What
    rhymes ...?")? "Vim user here, what's the best plugin manager?" first says who is asking."""
    sentences = _own_sentences(text)
    firsts = [re.match(r"[\w'’]+", part) for part in sentences]
    return bool(sentences) and all(
        m is not None and m.group(0).lower().replace("’", "'") in lexicon.words("asks_first") for m in firsts
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
        if any(word in lexicon.words("first_person_abroad") for word in re.findall(r"\w+", rest.lower())):
            return False
    return True


def speaks_of_anyone(text: str) -> bool:
    """Does the turn, outside its quotes and code, say "I", "me", "my", "we" or "our", or speak
    to "you"?"""
    words = re.findall(r"\w+", own_words(text).lower())  # "we're" -> "we", "re"
    return any(word in FIRST_PERSON or word in lexicon.words("listener") for word in words)


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
    if root.lemma_.lower() in lexicon.words("forget_verbs") and _is_imperative(root) and not negated:
        return root
    if root.lemma_.lower() in lexicon.words("keep_verbs") and negated and _is_imperative(root):
        return root
    first = next((t for t in sent if t.pos_ not in {"INTJ", "PUNCT"} and t.lower_ not in {"please", "pls"}), None)
    if (
        first is not None
        and first.i == root.i
        and root.lower_ in lexicon.words("forget_verbs")
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
