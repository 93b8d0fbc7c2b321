"""Values a memory must never hold: credentials, payment and bank numbers, government ids.

Whatever the extractor (rules, grammar or a model), a turn that carries such a value writes
nothing, and a fact that carries one is never stored. Contact details and street addresses are
kept only when the user asks for them to be remembered ("remember my phone number is ...");
a phone number mentioned in passing is not a memory.

Detection is by shape (checksums where the format has one: Luhn for cards, mod 97 for IBANs)
and by the words people use for these values in the languages the app sees. It errs towards
refusing: a missed memory can be said again, a stored password cannot be unsaid.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

# What the value is called, in English, Spanish, French, German, Italian, Portuguese, Dutch,
# Polish, Swedish, Turkish, Russian, Japanese, Chinese and Korean.
_CREDENTIAL_WORDS = (
    r"password|passcode|passphrase|pass ?word|pin(?: code| number)?|security code|cvv|cvc|"
    r"contraseña|clave|mot de passe|code pin|passwort|kennwort|geheimzahl|parola d'ordine|"
    r"senha|wachtwoord|hasło|haslo|lösenord|losenord|şifre\w*|sifre\w*|пароль|пин-код"
)
# Written without spaces around them: the value follows the word or its particle directly.
_CREDENTIAL_WORDS_CJK = r"パスワード|暗証番号|密码|密碼|비밀번호"
_KEY_WORDS = r"api[ _-]?key|access[ _-]?key|secret[ _-]?key|private[ _-]?key|auth[ _-]?token|access[ _-]?token|token"
_ID_WORDS = (
    r"social security(?: number)?|ssn|national insurance(?: number)?|ni number|passport(?: number| no\.?)?|"
    r"driver'?s licen[cs]e(?: number)?|tax (?:id|number)|dni|nie|nif|pesel|codice fiscale|"
    r"numéro de sécurité sociale|personalausweis(?:nummer)?|steuer-?id|cpf|aadhaar|bsn|personnummer"
)
_BANK_WORDS = r"account number|routing number|sort code|iban|bic|swift|número de cuenta|numéro de compte|kontonummer"

# A word, then within a few characters a value: "my PIN is 4921", "password: hunter2".
_LABELLED = re.compile(
    rf"(?i)\b(?:{_CREDENTIAL_WORDS}|{_KEY_WORDS}|{_ID_WORDS}|{_BANK_WORDS})\b"
    r"[^\n.?!]{0,24}?(?:\bis\b|\bes\b|\best\b|\bist\b|\bè\b|\bé\b|\bis\b|:|=|-|\s)\s*['\"“]?"
    r"(?=[^\s'\"”]*[\d@#$%^&*_+=!])(?P<value>[^\s'\"”]{3,})"
)
_CREDENTIAL_CJK = re.compile(
    rf"(?:{_CREDENTIAL_WORDS_CJK})\s*(?:は|是|는|은|:|：)?\s*(?=[\w@#$%^&*!-]*[\d@#$%^&*!])(?P<value>[\w@#$%^&*!-]{{3,}})"
)
_TOKENS = re.compile(
    r"\bsk-[A-Za-z0-9_-]{16,}|\bghp_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|"
    r"\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_NI_NUMBER = re.compile(r"\b[A-CEGHJ-PR-TW-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_CPF = re.compile(r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b")
_AADHAAR = re.compile(r"\b\d{4} \d{4} \d{4}\b")
_CODICE_FISCALE = re.compile(r"\b[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]\b")
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")

_PHONE = re.compile(r"(?<![\w+.])\+?\d[\d ()-]{7,}\d\b(?!\.\d)")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_STREET = re.compile(
    r"\b\d{1,5}[A-Za-z]?,? (?:[A-ZÀ-Þ][A-Za-zÀ-ÿ'-]+ ){1,3}"
    r"(?i:street|st|road|rd|avenue|ave|lane|ln|drive|dr|boulevard|blvd|way|court|ct|place|pl|square|sq|close|"
    r"terrace|crescent)\b|\b(?i:calle|rue|via|rua|straße|strasse|ulica) [\wÀ-ÿ' -]{2,40}\d"
)
_ASKS_TO_KEEP = re.compile(
    r"(?i)\b(?:remember|save|store|keep|note|memori[sz]e)\b(?:[^.?!]{0,40})\b(?:my|this|that|it)\b"
)


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        n = int(char)
        if position % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _iban_valid(candidate: str) -> bool:
    compact = candidate.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


class Secret(NamedTuple):
    """A secret value in a text: its kind and where it is (the value only, not its label)."""

    kind: str  # "key", "credential", "bank account", "government id" or "card"
    start: int
    end: int


def _labelled_kind(word: str) -> str:
    if re.search(rf"(?i){_KEY_WORDS}", word):
        return "key"
    if re.search(rf"(?i){_BANK_WORDS}", word):
        return "bank account"
    if re.search(rf"(?i){_ID_WORDS}", word):
        return "government id"
    return "credential"


def _finds(text: str) -> Iterator[Secret]:
    """Every secret value in the text, overlapping or not, the surest kinds first: tokens and keys
    by their shape, then values named by their label ("my PIN is 4921"), cards that pass Luhn,
    IBANs that pass mod 97, then government ids by their shape. Lazily: the first answers
    `secret_kind`."""
    yield from (Secret("key", m.start(), m.end()) for m in _TOKENS.finditer(text))
    for pattern in (_LABELLED, _CREDENTIAL_CJK):
        for m in pattern.finditer(text):
            # A value at the end of a sentence does not take the sentence's full stop with it.
            value = m.group("value").rstrip(".,;:!?)")
            if len(value) >= 3:
                yield Secret(_labelled_kind(m.group(0).lower()), m.start("value"), m.start("value") + len(value))
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits):
            yield Secret("card", m.start(), m.end())
    yield from (Secret("bank account", m.start(), m.end()) for m in _IBAN.finditer(text) if _iban_valid(m.group(0)))
    for pattern in (_SSN, _NI_NUMBER, _CPF, _AADHAAR, _CODICE_FISCALE):
        yield from (Secret("government id", m.start(), m.end()) for m in pattern.finditer(text))


def secrets_in(text: str) -> list[Secret]:
    """The secret values in the text, in reading order. Where two finds overlap the longer one is
    kept ("IBAN GB82 WEST ...": the whole IBAN, not its first group as a labelled value)."""
    kept: list[Secret] = []
    for secret in sorted(_finds(text), key=lambda secret: secret.start - secret.end):
        if all(secret.end <= other.start or secret.start >= other.end for other in kept):
            kept.append(secret)
    return sorted(kept, key=lambda secret: secret.start)


def secret_kind(text: str) -> str | None:
    """The kind of secret value the text carries ("credential", "key", "card", "bank account",
    "government id"), or None: the surest kind found."""
    first = next(_finds(text), None)
    return first.kind if first else None


# What a removed value is replaced with, by kind: the sentence still reads, the value is gone.
_MARKERS = {
    "key": "[key removed]",
    "credential": "[password removed]",
    "card": "[card number removed]",
    "bank account": "[account number removed]",
    "government id": "[ID number removed]",
}


def redact(text: str, *, values: Sequence[tuple[str, str]] = ()) -> tuple[str, int]:
    """The text with every secret value replaced by a marker that names its kind
    ("my PIN is [password removed]"), and how many were replaced. `values`, (value, kind)
    pairs found elsewhere (in the user's turn), are replaced wherever they occur, labelled or
    not: a reply that repeats a password does not name it as one."""
    found = secrets_in(text)
    for secret in reversed(found):
        text = text[: secret.start] + _MARKERS[secret.kind] + text[secret.end :]
    count = len(found)
    for value, kind in values:
        count += text.count(value)
        text = text.replace(value, _MARKERS[kind])
    return text, count


def secret_values(text: str) -> list[tuple[str, str]]:
    """The secret values in the text with their kinds, for `redact(values=...)` elsewhere."""
    return [(text[secret.start : secret.end], secret.kind) for secret in secrets_in(text)]


def has_contact_details(text: str) -> bool:
    """A phone number, an email address or a street address."""
    return bool(_PHONE.search(text) or _EMAIL.search(text) or _STREET.search(text))


def asks_to_remember(text: str) -> bool:
    """ "Remember my phone number is ...", "save this address": the user wants it kept."""
    return _ASKS_TO_KEEP.search(text) is not None


def refusal(turn: str, fact: str) -> str | None:
    """Why `fact`, extracted from `turn`, must not be stored, or None when it may be."""
    kind = secret_kind(turn) or secret_kind(fact)
    if kind:
        return f"it carries a {kind}"
    if has_contact_details(fact) and not asks_to_remember(turn):
        return "contact details the user did not ask to be remembered"
    return None
