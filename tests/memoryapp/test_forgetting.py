"""Requests to forget in the other languages the app reads (memoryapp.forgetting): each
language's imperative of "forget" with what it names, and what is no such request."""

import pytest

from memoryapp.forgetting import LANGUAGES, forget_request
from memoryapp.parsed import parse_turn

ASKS = [
    ("Olvida que soy enfermera.", "es", "soy enfermera"),
    ("Por favor, olvida dónde vivo.", "es", "dónde vivo"),
    ("Oublie que je suis infirmière, s'il te plaît.", "fr", "je suis infirmière"),
    ("Vergiss, dass ich in Berlin wohne.", "de", "ich in Berlin wohne"),
    ("Bitte vergiss meine Adresse.", "de", "meine Adresse"),
    ("Dimentica che suono il violoncello.", "it", "suono il violoncello"),
    ("Esqueça o meu endereço.", "pt", "o meu endereço"),
    ("Vergeet dat ik een hond heb.", "nl", "ik een hond heb"),
    ("Zapomnij, że mam córkę.", "pl", "mam córkę"),
    ("Glöm att jag bor i Malmö.", "sv", "jag bor i Malmö"),
    ("Забудь, что я медсестра.", "ru", "я медсестра"),
    ("忘记我是护士。", "zh", "我是护士"),
    ("请忘掉我的地址", "zh", "我的地址"),
    ("私が看護師だということを忘れてください。", "ja", "私が看護師だという"),
    ("내가 간호사라는 것을 잊어줘", "ko", "내가 간호사라는"),
    ("Hemşire olduğumu unut.", "tr", "Hemşire olduğumu"),
]


@pytest.mark.parametrize(("text", "language", "named"), ASKS)
def test_a_request_to_forget_is_read_with_what_it_names(text, language, named):
    assert forget_request(text) == (language, named)
    assert parse_turn(text).declined == "forget"  # nothing from it is ever written


@pytest.mark.parametrize("text", ["Vergiss es.", "Olvida eso.", "Oublie ça !", "Glöm det."])
def test_a_request_that_names_nothing_is_a_request_all_the_same(text):
    request = forget_request(text)
    assert request is not None and request.named is None


@pytest.mark.parametrize(
    "text",
    [
        "Olvidé mis llaves en casa.",  # "I forgot": a statement
        "No olvides que soy enfermera.",  # "don't forget": the opposite
        "Vergiss nicht, mich anzurufen.",
        "Oublie pas mon anniversaire.",
        "Non dimenticare il latte.",
        "我忘了带钥匙。",  # "I forgot my keys"
        "Borra el fondo de esta foto.",  # "delete" is also an edit: only "forget" is read
        "Mi olvido es terrible.",
        "I forget things a lot lately.",  # English is the parser's (memoryapp.grammar)
    ],
)
def test_what_is_not_a_request_to_forget(text):
    assert forget_request(text) is None


def test_every_language_has_an_example():
    assert {language for _, language, _ in ASKS} == set(LANGUAGES)
