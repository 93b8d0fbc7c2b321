"""Moving stored memories to another embedding model: `manage.py reembed_memories`."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memoryapp.models import Memory
from memoryapp.read.recall import recall
from memoryapp.services import memory_soft_delete
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

TURNS = [
    "I live in Lisbon.",
    "I'm a pediatric nurse.",
    "I play the cello in an amateur orchestra.",
    "I'm allergic to peanuts.",
    "My daughter Ana is six.",
]


def _dimensions(user) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT vector_dims(embedding) FROM memoryapp_memory WHERE user_id = %s", [user.pk])
        return {row[0] for row in cursor.fetchall()}


@pytest.fixture
def stored(alice, bob, settings):
    settings.EMBEDDING_MODEL = "local"
    for text in TURNS:
        remember(alice, user_turn(alice, text))
    remember(bob, user_turn(bob, "I live in Porto."))
    memory_soft_delete(user=alice, memory_id=Memory.objects.get(user=alice, text__contains="peanuts").pk)
    assert Memory.objects.filter(user=alice).count() == 5
    return settings


def _run(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("reembed_memories", *args, stdout=out)
    return out.getvalue()


def test_one_users_memories_move_to_the_configured_model_and_are_recalled_with_it(alice, bob, stored):
    stored.EMBEDDING_MODEL = "local-multilingual"
    assert recall(alice, "Where do I live?", min_sim=-1.0) == []  # nothing of this model yet

    assert "Moved 5 memories to use-multilingual-v3; 0 left" in _run("--user", "alice", "--batch-size", "2")

    assert set(Memory.objects.filter(user=alice).values_list("embedding_model", flat=True)) == {"use-multilingual-v3"}
    assert _dimensions(alice) == {512}  # the deleted memory too, so a restore finds it
    assert Memory.objects.get(user=bob).embedding_model == "all-MiniLM-L6-v2" and _dimensions(bob) == {384}
    assert [r.memory.text for r in recall(alice, "Where do I live?")][:1] == ["The user lives in Lisbon."]
    assert recall(bob, "Where do I live?", min_sim=-1.0) == []


def test_a_second_run_finds_nothing_to_move(alice, stored):
    stored.EMBEDDING_MODEL = "local-multilingual"
    assert "Moved 6 memories" in _run()
    assert "Moved 0 memories to use-multilingual-v3; 0 left" in _run()


def test_a_run_stopped_by_a_failing_endpoint_keeps_its_batches_and_resumes(alice, stored, fake_llm):
    stored.EMBEDDING_MODEL = "fake-embedding-model"  # served by the fake endpoint
    fake_llm.embedding_failure = type(fake_llm.default_chat)(status=503)
    fake_llm.embedding_failure_after = 1

    with pytest.raises(CommandError, match="2 memories were moved before it; run the command again"):
        _run("--batch-size", "2")
    assert Memory.objects.filter(embedding_model="fake-embedding-model").count() == 2

    fake_llm.embedding_failure = None
    assert "Moved 4 memories to fake-embedding-model; 0 left" in _run("--batch-size", "2")
    assert not Memory.objects.exclude(embedding_model="fake-embedding-model").exists()


def test_an_unknown_user_or_a_bad_batch_size_is_a_clear_error(stored):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        _run("--user", "nobody")
    with pytest.raises(CommandError, match="--batch-size must be between 1 and 2048"):
        _run("--batch-size", "0")
