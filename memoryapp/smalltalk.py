"""Pleasantries: a turn made only of greetings, thanks and acknowledgements states nothing.

The write gate refuses every fact proposed for such a turn: a model asked for facts about
"morning!" answers "The user is a morning person.", and about "Yo" "The user says yo.", and both
score above the gate against a turn that short. The words are those of the languages the
multilingual encoder reads; a turn with any other word is left to the gate's other rules.
"""

from __future__ import annotations

import re

_WORDS = frozenset(
    # English
    "hi hey heya hiya hello hullo howdy yo sup wassup morning evening afternoon night gm gn good day all everyone "
    "everybody there guys folks y'all thanks thank you thx ty tysm ta cheers a much lot lots bunch so very "
    "how are doing super "
    "bye goodbye cya later see ya soon welcome ok okay k kk cool nice great awesome perfect lovely sweet "
    "got it alright right sure yes yeah yep yup no nope lol lmao haha hahaha hehe wow oh ah hmm "
    # Spanish, Portuguese, Italian, French, German, Dutch
    "hola buenos buenas días dias tardes noches gracias muchas adiós vale perfecto qué tal "
    "olá ola oi bom boa dia tarde noite obrigado obrigada valeu tchau "
    "ciao buongiorno buonasera buonanotte salve grazie mille "
    "bonjour bonsoir salut coucou merci beaucoup bonne journée soirée ça va "
    "hallo guten morgen abend tag danke schön vielen dank tschüss servus moin "
    "hoi goedemorgen goedemiddag goedenavond bedankt dank je wel "
    # Polish, Turkish, Russian
    "cześć dzień dobry dobranoc dzięki dziękuję hej "
    "merhaba selam günaydın iyi akşamlar teşekkürler teşekkür ederim sağ ol nasılsın "
    "привет здравствуйте доброе утро добрый день вечер спасибо большое пока".split()
)
# Scripts written without spaces (the whole turn, less its punctuation, is one of these), and Arabic.
_PHRASES = frozenset(
    "你好 您好 早上好 晚上好 谢谢 谢谢你 多谢 再见 こんにちは おはよう おはようございます こんばんは ありがとう "
    "ありがとうございます どうも 안녕 안녕하세요 감사합니다 고마워 مرحبا شكرا السلام عليكم صباح الخير".split()
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def is_pleasantry(text: str) -> bool:
    """Is the turn only a greeting, a thanks or an acknowledgement ("morning!", "thanks a bunch!",
    "Buongiorno!", "你好！")? A turn with no letters at all (an emoji) is one too."""
    if re.search(r"\d", text):  # a number is something said ("ok, 42")
        return False
    words = _WORD.findall(text.lower().replace("’", "'"))
    if not words:
        return True
    return "".join(words) in _PHRASES or all(word in _WORDS or word in _PHRASES for word in words)
