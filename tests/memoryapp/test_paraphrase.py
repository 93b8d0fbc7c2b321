import pytest

from memoryapp.models import Memory, MemoryEvent, MemoryEvidence
from memoryapp.services import memory_correct
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


def live(user):
    return list(Memory.objects.filter(user=user, deleted_at__isnull=True).order_by("id"))


def test_a_fact_in_other_words_restates_the_memory_instead_of_adding_a_twin(alice, fake_llm):
    fake_llm.facts("The user lives in Milan.")
    remember(alice, user_turn(alice, "I live in Milan."))
    fake_llm.facts("The user resides in Milan.")
    again = user_turn(alice, "I reside in Milan these days.")

    assert remember(alice, again).stored == 1

    (memory,) = live(alice)
    assert memory.text == "The user lives in Milan."  # the wording the user already saw stays
    assert memory.times_seen == 2
    assert MemoryEvidence.objects.filter(memory=memory, turn=again, created=False).exists()


def test_a_restatement_that_says_more_gives_the_memory_its_wording(alice, fake_llm):
    fake_llm.facts("The user is a product manager.")
    first = user_turn(alice, "I'm a product manager.")
    remember(alice, first)
    fake_llm.facts("The user is a product manager at a logistics startup.")
    again = user_turn(alice, "I'm a product manager at a logistics startup, it's a lot.")

    assert remember(alice, again).stored == 1

    (memory,) = live(alice)
    assert memory.text == "The user is a product manager at a logistics startup."
    assert memory.times_seen == 2
    assert memory.source_turn_id == first.pk  # where it was first learnt does not change
    assert list(MemoryEvidence.objects.filter(memory=memory).values_list("turn_id", "created")) == [
        (first.pk, True),
        (again.pk, False),
    ]
    (event,) = MemoryEvent.objects.filter(memory=memory)
    assert (event.action, event.old_text, event.new_text, event.actor) == (
        MemoryEvent.Action.EXTENDED,
        "The user is a product manager.",
        "The user is a product manager at a logistics startup.",
        alice,
    )
    # the new wording is what a restatement in those very words now finds
    fake_llm.facts("The user is a product manager at a logistics startup.")
    remember(alice, user_turn(alice, "Product manager at a logistics startup, yes."))
    assert [m.times_seen for m in live(alice)] == [3]


def test_an_ability_restated_as_a_habit_with_more_in_it_is_one_memory(alice, fake_llm):
    fake_llm.facts("The user can speak Mandarin.")
    remember(alice, user_turn(alice, "I can speak Mandarin."))
    fake_llm.facts("The user speaks Mandarin and English.")
    remember(alice, user_turn(alice, "I speak Mandarin and English at work."))
    assert [m.text for m in live(alice)] == ["The user speaks Mandarin and English."]


def test_a_restatement_in_fewer_words_keeps_the_fuller_memory(alice, fake_llm):
    fake_llm.facts("The user is a product manager at a logistics startup.")
    remember(alice, user_turn(alice, "I'm a product manager at a logistics startup."))
    fake_llm.facts("The user is a product manager.")
    remember(alice, user_turn(alice, "As a product manager I juggle a lot."))
    assert [m.text for m in live(alice)] == ["The user is a product manager at a logistics startup."]
    assert not MemoryEvent.objects.filter(user=alice).exists()


@pytest.mark.parametrize(
    ("first", "then", "kept"),
    [
        (
            ("I've been vegan for three years.", "The user has been vegan for three years."),
            ("I'm vegan, so no cheese.", "The user is vegan."),
            "The user has been vegan for three years.",
        ),
        (
            ("I live in Milan.", "The user lives in Milan."),
            ("I've lived in Milan since 2015.", "The user has lived in Milan since 2015."),
            "The user has lived in Milan since 2015.",
        ),
    ],
    ids=["without-how-long", "with-how-long"],
)
def test_how_long_a_fact_has_held_does_not_make_it_another_fact(alice, fake_llm, first, then, kept):
    for turn, fact in (first, then):
        fake_llm.facts(fact)
        remember(alice, user_turn(alice, turn))
    assert [(m.text, m.times_seen) for m in live(alice)] == [(kept, 2)]


def test_a_memory_the_user_corrected_keeps_the_users_words(alice, fake_llm):
    fake_llm.facts("The user is a manager.")
    remember(alice, user_turn(alice, "I'm a manager."))
    (memory,) = live(alice)
    memory_correct(user=alice, memory_id=memory.pk, text="The user is a product manager.")
    fake_llm.facts("The user is a product manager at a logistics startup.")
    remember(alice, user_turn(alice, "I'm a product manager at a logistics startup."))
    assert [(m.text, m.times_seen) for m in live(alice)] == [("The user is a product manager.", 2)]


@pytest.mark.parametrize(
    ("first", "then"),
    [
        (("I have two kids.", "The user has two kids."), ("I have three kids.", "The user has three kids.")),
        (("I like cilantro.", "The user likes cilantro."), ("I dislike cilantro.", "The user dislikes cilantro.")),
        (("I'm vegetarian.", "The user is vegetarian."), ("I'm vegan.", "The user is vegan.")),
        (("I like jazz.", "The user likes jazz."), ("I like rock.", "The user likes rock.")),
        (
            ("I was a nurse for ten years.", "The user was a nurse for ten years."),
            ("I'm a nurse.", "The user is a nurse."),
        ),
    ],
    ids=["numbers", "negation", "close-kinds", "different-things", "past-and-present"],
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
