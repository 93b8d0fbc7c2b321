"""With a model configured, a fact from a turn in another language is kept only when the model,
shown the turn, says the turn states it (MEMORY_CONFIRM_TRANSLATED, on by default): the kind of
case is the mistranslated fact, which the gate scores as close to the turn as the right one."""

from types import SimpleNamespace

import pytest

from core.llm import ModelUnavailable
from memoryapp.models import Memory
from memoryapp.write import remember
from memoryapp.write.confirm import CONFIRM_PROMPT, UNCONFIRMED, _yes_share
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

MADRID = "Vivo en Madrid."


@pytest.fixture
def confirming(fake_llm, settings):
    settings.MEMORY_CONFIRM_TRANSLATED = True
    return fake_llm


def live_texts(user) -> list[str]:
    return list(Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True))


def confirmations(fake) -> list[dict]:
    return [r["body"] for r in fake.chat_requests() if r["body"]["messages"][0]["content"] == CONFIRM_PROMPT]


def test_a_fact_the_model_confirms_is_stored(alice, confirming):
    confirming.facts("The user lives in Madrid.")
    confirming.reply("yes")
    written = remember(alice, user_turn(alice, MADRID))
    assert written.stored == 1 and live_texts(alice) == ["The user lives in Madrid."]
    [asked] = confirmations(confirming)
    assert asked["messages"][1]["content"] == f"<message>{MADRID}</message>\n<claim>The user lives in Madrid.</claim>"
    assert asked["max_tokens"] == 1 and asked["logprobs"] is True and asked["temperature"] == 0


def test_a_fact_the_model_does_not_find_in_the_turn_is_refused(alice, confirming):
    # a place for another (as a mistranslation would put it), which the gate alone lets through
    confirming.facts("The user lives in Madrid.", "The user works in Madrid.")
    confirming.reply("yes")
    confirming.reply("No")
    written = remember(alice, user_turn(alice, MADRID))
    assert live_texts(alice) == ["The user lives in Madrid."]
    assert ("The user works in Madrid.", UNCONFIRMED) in written.refused
    assert len(confirmations(confirming)) == 2


def test_an_answer_that_is_neither_yes_nor_no_leaves_the_gates_decision(alice, confirming):
    confirming.facts("The user lives in Madrid.")
    confirming.reply("Perhaps, it depends.")
    assert remember(alice, user_turn(alice, MADRID)).stored == 1


def test_an_english_turn_is_not_asked_about(alice, confirming):
    confirming.facts("The user lives in Madrid.")
    assert remember(alice, user_turn(alice, "I live in Madrid.")).stored == 1
    assert confirmations(confirming) == []


def test_a_failed_confirmation_stores_nothing_and_is_a_model_failure(alice, confirming):
    confirming.facts("The user lives in Madrid.")
    confirming.fail(500)
    with pytest.raises(ModelUnavailable):
        remember(alice, user_turn(alice, MADRID))
    assert live_texts(alice) == []


def _alternatives(**logprobs: float) -> SimpleNamespace:
    top = [SimpleNamespace(token=token, logprob=value) for token, value in logprobs.items()]
    return SimpleNamespace(content=[SimpleNamespace(top_logprobs=top)])


def test_the_probability_of_yes_is_read_against_no_across_spellings():
    import math

    share = _alternatives(yes=math.log(0.5), Yes=math.log(0.1), no=math.log(0.3), maybe=math.log(0.1))
    assert _yes_share(share) == pytest.approx(0.6 / 0.9)
    assert _yes_share(_alternatives(maybe=-0.1)) is None
    assert _yes_share(None) is None
