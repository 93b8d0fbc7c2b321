"""Secrets are never stored, whatever the extractor; contact details only when asked for."""

import json
from pathlib import Path

import pytest
from django.conf import settings

from memoryapp.models import Memory
from memoryapp.sensitive import secret_kind
from memoryapp.write import remember
from tests.factories import user_turn

LABELLED = json.loads((Path(settings.BASE_DIR) / "eval" / "secrets.json").read_text(encoding="utf-8"))
SECRETS = LABELLED["secret"]
BENIGN = LABELLED["benign"]


def test_the_labelled_set_covers_every_kind_in_several_languages():
    assert len(SECRETS) >= 30
    assert {s["kind"] for s in SECRETS} == {"credential", "key", "card", "bank account", "government id"}
    assert len({s["lang"] for s in SECRETS}) >= 8


@pytest.mark.parametrize("case", SECRETS, ids=[s["text"][:40] for s in SECRETS])
def test_each_secret_is_recognised_by_its_kind(case):
    assert secret_kind(case["text"]) == case["kind"]


@pytest.mark.parametrize("case", BENIGN, ids=[b["text"][:40] for b in BENIGN])
def test_harmless_numbers_and_words_are_not_secrets(case):
    assert secret_kind(case["text"]) is None


@pytest.mark.django_db
def test_no_secret_turn_writes_anything_offline(alice):
    for case in SECRETS:
        assert remember(alice, user_turn(alice, case["text"])).stored == 0, case["text"]
    assert not Memory.objects.filter(user=alice).exists()


@pytest.mark.django_db
def test_a_model_that_extracts_a_secret_gets_nothing_stored(alice, fake_llm):
    # The turn carries a secret: the extractor is not even asked.
    assert remember(alice, user_turn(alice, "I'm Priya and my password is hunter2.")).stored == 0
    assert not [r for r in fake_llm.chat_requests() if "hunter2" in json.dumps(r["body"])]
    # A fact that carries one is refused whatever turn it claims to come from.
    fake_llm.facts("The user's card number is 4111 1111 1111 1111.", "The user pays by card.")
    assert remember(alice, user_turn(alice, "I pay for everything by card.")).stored == 1
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user pays by card."]


@pytest.mark.django_db
def test_contact_details_are_kept_only_when_the_user_asks(alice):
    assert remember(alice, user_turn(alice, "My phone is +44 7700 900123, call me later.")).stored == 0
    assert remember(alice, user_turn(alice, "I live at 221B Baker Street.")).stored == 0
    assert remember(alice, user_turn(alice, "Please remember my phone number is +44 7700 900123.")).stored == 1
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == [
        "The user's phone number is +44 7700 900123."
    ]
