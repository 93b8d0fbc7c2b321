import pytest

from memoryapp.models import Memory, MemoryEvidence
from memoryapp.services import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


def live(user):
    return list(Memory.objects.filter(user=user, deleted_at__isnull=True).order_by("id"))


def test_a_fact_in_other_words_restates_the_memory_instead_of_adding_a_twin(alice, fake_llm):
    fake_llm.facts("The user lives in Milan.")
    remember(alice, user_turn(alice, "I live in Milan."))
    fake_llm.facts("The user resides in Milan.")
    again = user_turn(alice, "I reside in Milan these days.")

    assert remember(alice, again) == 1

    (memory,) = live(alice)
    assert memory.text == "The user lives in Milan."  # the wording the user already saw stays
    assert memory.times_seen == 2
    assert MemoryEvidence.objects.filter(memory=memory, turn=again, created=False).exists()


@pytest.mark.parametrize(
    ("first", "then"),
    [
        (("I have two kids.", "The user has two kids."), ("I have three kids.", "The user has three kids.")),
        (("I like cilantro.", "The user likes cilantro."), ("I dislike cilantro.", "The user dislikes cilantro.")),
        (("I'm vegetarian.", "The user is vegetarian."), ("I'm vegan.", "The user is vegan.")),
        (("I like jazz.", "The user likes jazz."), ("I like rock.", "The user likes rock.")),
    ],
    ids=["numbers", "negation", "close-kinds", "different-things"],
)
def test_different_claims_are_never_merged(alice, fake_llm, first, then):
    for turn, fact in (first, then):
        fake_llm.facts(fact)
        remember(alice, user_turn(alice, turn))
    assert [m.text for m in live(alice)] == [first[1], then[1]]


def test_another_users_memory_is_never_a_paraphrase_target(alice, bob, fake_llm):
    fake_llm.facts("The user lives in Milan.")
    remember(bob, user_turn(bob, "I live in Milan."))
    fake_llm.facts("The user resides in Milan.")
    remember(alice, user_turn(alice, "I reside in Milan."))
    assert [m.text for m in live(alice)] == ["The user resides in Milan."]
    assert [m.text for m in live(bob)] == ["The user lives in Milan."]
