import pytest

from memoryapp.models import Memory, MemoryEvent
from memoryapp.read.recall import recall
from memoryapp.services import memory_correct
from memoryapp.slots import slot_of
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


def live_texts(user):
    return sorted(Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True))


@pytest.mark.parametrize(
    ("fact", "slot"),
    [
        ("The user lives in Porto.", "home"),
        ("The user now lives in Porto.", "home"),
        ("The user still lives in Porto.", "home"),
        ("The user is still in Porto.", "home"),
        ("The user is still in school.", ""),
        ("The user has lived in Accra for three years.", "home"),
        ("The user has been living in Accra since 2019.", "home"),
        ("The user has lived in Tokyo.", ""),
        ("The user's name is Priya.", "name"),
        ("The user's timezone is UTC.", "timezone"),
        ("The user is 19 years old.", "age"),
        ("The user likes jazz.", ""),
        ("The user lives with two cats.", ""),
        ("The user's daughter is eleven.", "age of daughter"),
        ("The user's daughter is ten years old.", "age of daughter"),
        ("The user's younger daughter is 5.", "age of younger daughter"),
        ("The user's son Zaid is 10.", "age of son Zaid"),
        ("The user's dog is 9.", "age of dog"),
        ("The user's daughter is a nurse.", ""),
        ("The user's favourite number is 7.", ""),
        ("The user's boss is 50.", ""),
    ],
)
def test_slot_of(fact, slot):
    assert slot_of(fact) == slot


def test_moving_retires_the_old_home_and_recall_finds_only_the_new_one(alice):
    remember(alice, user_turn(alice, "I live in Lisbon."))
    remember(alice, user_turn(alice, "I'm vegetarian."))
    lisbon = Memory.objects.get(user=alice, text="The user lives in Lisbon.")

    remember(alice, user_turn(alice, "Actually I moved to Porto."))

    assert live_texts(alice) == ["The user is vegetarian.", "The user lives in Porto."]
    porto = Memory.objects.get(user=alice, text="The user lives in Porto.")
    event = MemoryEvent.objects.get(memory=lisbon)
    assert (event.action, event.old_text, event.new_text, event.replaced_by_id) == (
        "superseded",
        "The user lives in Lisbon.",
        "The user lives in Porto.",
        porto.pk,
    )
    assert [r.memory.text for r in recall(alice, "Which city do I live in now?")] == ["The user lives in Porto."]


def test_a_move_retires_a_shared_home_and_leaves_whom_the_user_lives_with(alice):
    assert remember(alice, user_turn(alice, "I live in Lyon with my partner.")).stored == 2
    remember(alice, user_turn(alice, "We moved to Paris last month."))
    assert live_texts(alice) == ["The user lives in Paris.", "The user lives with their partner."]


def test_a_corrected_age_retires_the_old_one_and_leaves_other_relations(alice):
    remember(alice, user_turn(alice, "My son is 4 and obsessed with dinosaurs."))
    remember(alice, user_turn(alice, "My daughter just turned 12."))
    four = Memory.objects.get(user=alice, text="The user's son is 4 years old.")

    remember(alice, user_turn(alice, "Sorry, my son is 5, not 4."))

    assert live_texts(alice) == ["The user's daughter is 12 years old.", "The user's son is 5 years old."]
    event = MemoryEvent.objects.get(memory=four)
    assert (event.action, event.new_text) == ("superseded", "The user's son is 5 years old.")


def test_children_named_by_age_are_kept_side_by_side(alice):
    # No slot: two children of one kind are two facts, not a correction of one by the other.
    remember(alice, user_turn(alice, "My 4 year old son loves trains, any museum tips?"))
    remember(alice, user_turn(alice, "What games can my 9 year old son play on a rainy day?"))
    assert live_texts(alice) == ["The user has a 4-year-old son.", "The user has a 9-year-old son."]
    assert not MemoryEvent.objects.exists()


def test_restating_the_current_fact_retires_nothing(alice):
    remember(alice, user_turn(alice, "I live in Lisbon."))
    remember(alice, user_turn(alice, "Yes, I live in Lisbon."))
    assert live_texts(alice) == ["The user lives in Lisbon."]
    assert not MemoryEvent.objects.exists()


def test_moving_back_makes_the_old_city_current_again(alice):
    for text in ("I live in Lisbon.", "I moved to Porto.", "I moved back, I live in Lisbon."):
        remember(alice, user_turn(alice, text))
    assert live_texts(alice) == ["The user lives in Lisbon."]
    assert Memory.objects.filter(user=alice, text="The user lives in Lisbon.").count() == 2  # history kept


def test_another_users_slot_is_never_touched(alice, bob):
    remember(bob, user_turn(bob, "I live in Berlin."))
    remember(alice, user_turn(alice, "I live in Lisbon."))
    assert live_texts(bob) == ["The user lives in Berlin."]


def test_a_correction_into_a_filled_slot_retires_the_other_fact(alice):
    remember(alice, user_turn(alice, "I live in Lisbon."))
    remember(alice, user_turn(alice, "I'm vegetarian."))
    wrong = Memory.objects.get(user=alice, text="The user is vegetarian.")
    memory_correct(user=alice, memory_id=wrong.pk, text="The user lives in Braga.")
    assert live_texts(alice) == ["The user lives in Braga."]
