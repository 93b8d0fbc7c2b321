"""Memory keys: the needs a memory answers, written and read with it (memoryapp.keys)."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memoryapp.keys import as_question, category_of, keys_of
from memoryapp.models import Memory, MemoryKey, MemoryNeed, MemoryRecall
from memoryapp.read.recall import read_turn, recall, recall_for_turn
from memoryapp.selectors import memory_trace
from memoryapp.services import memory_correct, memory_purge_deleted, memory_soft_delete
from memoryapp.write import remember
from tests.factories import chat, user_turn

pytestmark = pytest.mark.django_db

# A store of ordinary and sensitive memories that every turn below is near to, by chance.
STORE = [
    "I'm a pediatric nurse in Montreal.",
    "I'm vegetarian.",
    "My daughter Mia is 6.",
    "I've been sober for two years now.",
    "I play the cello in an amateur orchestra.",
    "I have a greyhound called Biscuit.",
    "I drive a 2019 Tesla Model 3.",
    "I'm saving for a deposit on a flat.",
    "I speak Portuguese and English.",
]


@pytest.fixture
def stored(alice):
    for text in STORE:
        assert remember(alice, user_turn(alice, text)).stored >= 1
    return alice


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        ("The user is a nurse.", ["What do I do for a living?", "Help me with my work as a nurse."]),
        ("The user lives in Porto.", ["Where do I live?", "Suggest a day trip or a walk near my home."]),
        ("The user has a greyhound called Biscuit.", ["What is my greyhound's name?"]),
        ("The user is vegetarian.", ["What should I eat or cook?"]),
        ("The user's son Idris is 8.", ["How old is my son?", "What is my son's name?"]),
        ("The user has two daughters, aged 3 and 6.", ["How old are my daughters?"]),
        ("The user is allergic to penicillin.", ["Which medicines must I avoid?"]),
        ("The user is allergic to peanuts.", ["What foods must I avoid?"]),
    ],
)
def test_a_fact_gets_the_needs_of_its_kind(fact, expected):
    keys = keys_of(fact)
    assert set(expected) <= set(keys)
    assert len(keys) <= 5


@pytest.mark.parametrize(
    ("fact", "question"),
    [
        ("The user owns a Brompton folding bike.", "Do I own a Brompton folding bike?"),
        ("The user is a nurse.", "Am I a nurse?"),
        ("The user's wife is named Dana.", "Is my wife named Dana?"),
        ("The user has been vegan for three years.", "Have I been vegan for three years?"),
        ("The user moved to Porto.", "Have I moved to Porto?"),
        ("The user wants the assistant to keep its answers short.", None),  # an instruction asks nothing
    ],
)
def test_a_fact_is_asked_as_the_user_would_ask_it(fact, question):
    assert as_question(fact) == question


def test_a_standing_instruction_has_no_keys():
    assert keys_of("The user wants the assistant to answer in British English.") == []


def test_a_standing_instruction_is_marked_when_written_and_when_corrected(stored):
    remember(stored, user_turn(stored, "From now on, please keep your answers short."))
    short = Memory.objects.get(user=stored, standing=True)
    assert short.text == "The user wants the assistant to keep its answers short."
    assert not Memory.objects.filter(user=stored, standing=True).exclude(pk=short.pk).exists()
    memory_correct(user=stored, memory_id=short.pk, text="The user likes short walks.")
    assert not Memory.objects.get(pk=short.pk).standing
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    memory_correct(user=stored, memory_id=nurse.pk, text="The user wants answers in British English.")
    assert Memory.objects.get(pk=nurse.pk).standing


def test_a_turn_reads_its_memories_and_standing_instructions_in_one_statement(stored):
    remember(stored, user_turn(stored, "From now on, please keep your answers short."))
    with CaptureQueriesContext(connection) as statements:
        recalled = read_turn(stored, "What do I do for a living?").recalled
    assert len(statements) == 1
    assert recalled[0].memory.text == "The user is a pediatric nurse." and not recalled[0].standing
    assert recalled[-1].standing
    assert recalled[-1].memory.text == "The user wants the assistant to keep its answers short."
    with CaptureQueriesContext(connection) as statements:  # a turn that needs no memory: the instructions alone
        recalled = read_turn(stored, "Who founded Tesla?").recalled
    assert len(statements) == 1
    assert [item.standing for item in recalled] == [True]


@pytest.mark.parametrize(
    ("fact", "category"),
    [
        ("The user has type 1 diabetes.", "health"),
        ("The user is allergic to penicillin.", "health"),
        ("The user has been sober for three years.", "alcohol or addiction"),
        ("The user is in recovery from a gambling addiction.", "alcohol or addiction"),
        ("The user is 20 weeks pregnant.", "pregnancy"),
        ("The user is Muslim.", "religion"),
        ("The user is paying off a credit card debt.", "money"),
        ("The user's son Idris is 8.", "a child"),
        ("The user has a 7-month-old daughter.", "a child"),
        ("The user is a nurse on a children's ward.", ""),  # children named in passing are not the user's
        ("The user has a 12-year-old phone.", ""),
        ("The user lives in Porto.", ""),
    ],
)
def test_a_fact_of_a_special_category_is_marked_sensitive(fact, category):
    assert category_of(fact) == category


def test_keys_are_written_with_the_memory_and_named_by_its_owner(stored, bob):
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    keys = MemoryKey.objects.filter(memory=nurse)
    assert set(keys.values_list("user_id", flat=True)) == {stored.pk}
    assert set(keys.values_list("embedding_model", flat=True)) == {nurse.embedding_model}
    assert "What do I do for a living?" in set(keys.values_list("text", flat=True))
    # the same need of another user finds nothing of alice's
    remember(bob, user_turn(bob, "I'm an architect."))
    assert [r.memory.text for r in recall_for_turn(bob, "What do I do for a living?")] == ["The user is an architect."]


def test_a_need_is_kept_once_per_wording_for_its_owner(stored, bob):
    """Every need key's wording is kept once per user and model (MemoryNeed), with the key's
    vector; the facts asked are not, and another user's same wording is theirs alone."""
    needs = MemoryKey.objects.filter(user=stored).exclude(kind=MemoryKey.Kind.QUESTION)
    kept = MemoryNeed.objects.filter(user=stored)
    assert sorted(kept.values_list("embedding_model", "text")) == sorted(
        set(needs.values_list("embedding_model", "text"))
    )
    assert not kept.filter(text__in=MemoryKey.objects.filter(user=stored, kind=MemoryKey.Kind.QUESTION).values("text"))
    for need in kept:
        key = needs.filter(text=need.text, embedding_model=need.embedding_model).first()
        assert list(need.embedding) == list(key.embedding)

    remember(stored, user_turn(stored, "I'm also a part-time tutor."))  # another job: the same needs
    assert MemoryNeed.objects.filter(user=stored, text="What do I do for a living?").count() == 1
    assert MemoryKey.objects.filter(user=stored, text="What do I do for a living?").count() == 2
    remember(bob, user_turn(bob, "I'm an architect."))
    assert MemoryNeed.objects.filter(text="What do I do for a living?").count() == 2


def test_purge_drops_the_wordings_no_key_has_and_keeps_the_rest(stored):
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    needs = MemoryKey.objects.filter(user=stored).exclude(kind=MemoryKey.Kind.QUESTION)
    own = set(needs.filter(memory=nurse).values_list("text", flat=True)) - set(
        needs.exclude(memory=nurse).values_list("text", flat=True)
    )
    assert own  # wordings only the nurse memory has ("Help me with my work as a ... nurse.")
    memory_correct(user=stored, memory_id=nurse.pk, text="The user lives in Montreal.")  # its old needs go
    assert MemoryNeed.objects.filter(user=stored, text__in=own).count() == len(own)

    removed = memory_purge_deleted(older_than=__import__("datetime").timedelta(days=1))

    assert removed["memoryneed"] == len(own)
    wordings = set(MemoryNeed.objects.filter(user=stored).values_list("text", flat=True))
    assert not wordings & own
    assert wordings == set(needs.values_list("text", flat=True)) and "Where do I live?" in wordings
    assert "memoryneed" not in memory_purge_deleted(older_than=__import__("datetime").timedelta(days=1))


def test_a_need_finds_its_memory_through_a_key(stored):
    (first, *_) = recall_for_turn(stored, "What do I do for a living?")
    assert first.memory.text == "The user is a pediatric nurse." and first.matched_key == "What do I do for a living?"
    (first, *_) = recall_for_turn(stored, "Quel est mon métier ?")  # the encoder reads it across languages
    assert first.memory.text == "The user is a pediatric nurse."


@pytest.mark.parametrize(
    "turn",
    [
        "I started learning to juggle this week.",
        "It has been raining all day here.",
        "I bought a new pair of running shoes yesterday.",
        "My upstairs neighbours were loud again last night.",
        "Just finished a 10k run!",
        "Hoje comecei a aprender malabarismo.",
        "Estou a pensar em pintar a sala de verde.",
    ],
)
def test_a_statement_that_needs_no_memory_gets_none_from_a_store_of_near_misses(stored, turn):
    nearest = recall(stored, turn, min_sim=-1.0)
    assert len(nearest) == 5  # top-k alone would give five memories, however unrelated ...
    assert read_turn(stored, turn).recalled == []  # ... the floor gives none


def test_a_sensitive_memory_is_withheld_from_an_unrelated_turn_and_given_on_its_topic(stored):
    sober = Memory.objects.get(user=stored, text="The user has been sober for two years.")
    assert sober.sensitive == "alcohol or addiction"
    for unrelated in ["I bought a new pair of running shoes yesterday.", "My upstairs neighbours were loud again."]:
        assert sober in [item.memory for item in recall(stored, unrelated, min_sim=-1.0)]  # near, by chance
        assert sober not in [item.memory for item in read_turn(stored, unrelated).recalled]
    (given,) = [item for item in read_turn(stored, "Suggest a drink I could order at the bar tonight.").recalled]
    assert given.memory == sober and given.matched_key == "Suggest a drink I could order."


def test_the_trace_says_which_need_a_memory_was_given_for(stored, alice_client):
    conversation = chat(stored, "Suggest a drink I could order at the bar tonight.")
    sober = Memory.objects.get(user=stored, text="The user has been sober for two years.")
    (row,) = MemoryRecall.objects.filter(user=stored, conversation=conversation)
    assert row.memory == sober and row.matched_key == "Suggest a drink I could order."
    page = alice_client.get(f"/memories/{sober.pk}/").content.decode()
    assert "Used for questions like" in page and "Help me stay away from alcohol." in page
    assert "the message was like “Suggest a drink I could order.”" in page
    assert "About alcohol or addiction: given only to a message on that topic" in page


def test_a_correction_rewrites_the_keys(stored):
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    memory_correct(user=stored, memory_id=nurse.pk, text="The user lives in Montreal.")
    keys = set(MemoryKey.objects.filter(user=stored, memory=nurse).values_list("text", flat=True))
    assert "Where do I live?" in keys and "What do I do for a living?" not in keys
    assert memory_trace(user=stored, memory_id=nurse.pk).keys == keys_of("The user lives in Montreal.")


def test_a_memory_is_marked_asked_when_its_keys_include_the_fact_asked(stored):
    def asked() -> dict[str, bool]:
        return {
            memory.text: memory.asked
            for memory in Memory.objects.filter(user=stored, deleted_at__isnull=True).order_by("id")
        }

    def has_question() -> dict[str, bool]:
        return {
            text: MemoryKey.objects.filter(user=stored, memory__text=text, kind=MemoryKey.Kind.QUESTION).exists()
            for text in asked()
        }

    assert asked()["The user is a pediatric nurse."] and asked() == has_question()
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    memory_correct(user=stored, memory_id=nurse.pk, text="The user wants answers in British English.")
    assert not asked()["The user wants answers in British English."] and asked() == has_question()


def test_a_deleted_memory_is_not_found_through_its_keys_and_its_keys_go_with_it(stored):
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    memory_soft_delete(user=stored, memory_id=nurse.pk)
    assert nurse not in [r.memory for r in recall_for_turn(stored, "What do I do for a living?")]
    Memory.objects.filter(pk=nurse.pk, user=stored).update(deleted_at="2000-01-01T00:00:00Z")
    memory_purge_deleted(older_than=__import__("datetime").timedelta(days=1))
    assert not MemoryKey.objects.filter(memory_id=nurse.pk).exists()


def test_memories_stored_before_keys_get_them_from_reembed(stored):
    nurse = Memory.objects.get(user=stored, text="The user is a pediatric nurse.")
    MemoryKey.objects.filter(user=stored, memory=nurse).delete()
    Memory.objects.filter(pk=nurse.pk, user=stored).update(keys_model="")
    assert recall_for_turn(stored, "What do I do for a living?")[0].memory != nurse
    call_command("reembed_memories", stdout=__import__("io").StringIO())
    assert set(MemoryKey.objects.filter(memory=nurse).values_list("text", flat=True)) == set(keys_of(nurse.text))
    assert recall_for_turn(stored, "What do I do for a living?")[0].memory == nurse
