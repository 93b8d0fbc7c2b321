import pytest

from memoryapp.smalltalk import is_pleasantry


@pytest.mark.parametrize(
    "turn",
    [
        "morning!",
        "Yo",
        "hiya",
        "thanks a bunch!",
        "Ta!",
        "Guten Abend!",
        "Merhaba, nasılsın?",
        "你好！",
        "السلام عليكم",
        "🙂",
    ],
)
def test_greetings_thanks_and_acknowledgements_are_pleasantries(turn):
    assert is_pleasantry(turn)


@pytest.mark.parametrize(
    "turn",
    [
        "Morning! I'm vegan.",
        "thanks, I live in Rome now",
        "Hola, soy enfermera.",
        "我是医生",
        "ok, 42",
        "Good night, I'm off to Paris",
    ],
)
def test_a_turn_that_says_anything_more_is_not(turn):
    assert not is_pleasantry(turn)
