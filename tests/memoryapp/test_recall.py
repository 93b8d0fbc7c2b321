import numpy as np
import pytest
from django.db import connection
from django.utils import timezone
from pgvector.psycopg import register_vector

from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory
from memoryapp.read.recall import memory_nearest, recall
from memoryapp.services import memory_soft_delete
from memoryapp.thresholds import recall_floor
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

STANDUP_PROBE = "What time did I say my standup moves to?"


def _store(user, fake_llm, turn_text: str, fact: str) -> Memory:
    fake_llm.facts(fact)
    turn = user_turn(user, turn_text)
    assert remember(user, turn).stored == 1
    return Memory.objects.get(user=user, source_turn=turn)


@pytest.fixture
def standup_store(alice, fake_llm):
    return {
        "standup": _store(
            alice,
            fake_llm,
            "Heads up: my standup moves to 9:15 UTC from Monday.",
            "The user's standup moves to 9:15 UTC.",
        ),
        "macbook": _store(alice, fake_llm, "I do all my work on a MacBook Pro.", "Uses a MacBook Pro"),
        "emoji": _store(alice, fake_llm, "Please, no emoji in my emails, I dislike them.", "Dislikes emoji in emails"),
    }


def test_only_the_standup_memory_is_recalled(alice, standup_store):
    recalled = recall(alice, STANDUP_PROBE)
    assert [(r.memory.pk, r.rank) for r in recalled] == [(standup_store["standup"].pk, 1)]
    assert recall_floor(get_embedder().name) + 0.05 < recalled[0].similarity <= 1.0  # clear of the floor


def test_top_k_alone_returns_every_row_and_the_floor_removes_the_unrelated(alice, standup_store):
    unfloored = recall(alice, STANDUP_PROBE, min_sim=-1.0)
    assert [r.memory.pk for r in unfloored][0] == standup_store["standup"].pk
    assert len(unfloored) == 3  # LIMIT 5 with no floor returns whatever exists
    assert all(r.similarity < 0.2 for r in unfloored[1:])
    assert len(recall(alice, STANDUP_PROBE)) == 1


def test_k_limits_before_the_floor(alice, standup_store):
    assert [r.memory.pk for r in recall(alice, STANDUP_PROBE, k=1, min_sim=-1.0)] == [standup_store["standup"].pk]


def test_a_deleted_memory_is_not_recalled_on_the_very_next_call(alice, standup_store):
    assert recall(alice, STANDUP_PROBE)
    memory_soft_delete(user=alice, memory_id=standup_store["standup"].pk)
    assert recall(alice, STANDUP_PROBE) == []


def test_another_users_memory_is_never_recalled_even_when_it_is_the_nearest_vector(alice, bob, fake_llm):
    bobs = _store(bob, fake_llm, "My standup moves to 9:15 UTC.", "The user's standup moves to 9:15 UTC.")
    alices = _store(
        alice, fake_llm, "Our planning meeting is on Thursdays.", "The user's planning meeting is on Thursdays."
    )

    # bob's row is the nearest vector in the table to this probe, and alice's is not
    assert recall(bob, STANDUP_PROBE)[0].similarity > recall(alice, STANDUP_PROBE, min_sim=-1.0)[0].similarity
    assert [r.memory.pk for r in recall(alice, STANDUP_PROBE, min_sim=-1.0)] == [alices.pk]
    assert recall(alice, STANDUP_PROBE) == []
    assert [r.memory.pk for r in recall(bob, STANDUP_PROBE)] == [bobs.pk]


def test_recall_for_a_user_with_no_memories_is_empty(alice, bob, standup_store):
    assert recall(bob, STANDUP_PROBE, min_sim=-1.0) == []


def test_a_blank_probe_recalls_nothing(alice, standup_store):
    assert recall(alice, "   ") == []


def test_rows_from_another_embedding_model_are_not_compared(alice, standup_store):
    Memory.objects.filter(pk=standup_store["standup"].pk).update(embedding_model="another-model")
    assert standup_store["standup"].pk not in [r.memory.pk for r in recall(alice, STANDUP_PROBE, min_sim=-1.0)]


def test_recall_is_one_statement_with_the_owner_predicate(alice, standup_store, django_assert_num_queries):
    with django_assert_num_queries(1) as captured:
        recall(alice, STANDUP_PROBE)
    sql = captured.captured_queries[0]["sql"]
    assert f"m.user_id = {alice.pk}" in sql
    assert "m.deleted_at IS NULL" in sql
    assert "<=>" in sql and "LIMIT 5" in sql


def test_recall_is_exact_per_user_where_a_filtered_global_index_would_lose_rows(django_user_model):
    """20,000 rows over 200 users: a global approximate index scanned with ef_search 40 and
    then filtered to one user would keep well under one of that user's rows per query.
    Recall must return each user's true top-5 (brute force in numpy) every time."""
    rng = np.random.default_rng(7)
    users = django_user_model.objects.bulk_create(django_user_model(username=f"u{i:03d}") for i in range(200))
    per_user, dims = 100, 384
    vectors = rng.standard_normal((len(users) * per_user, dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = np.repeat(np.arange(len(users)), per_user)
    connection.ensure_connection()
    register_vector(connection.connection)
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(
            "COPY memoryapp_memory (user_id, text, embedding, embedding_model, content_hash, times_seen,"
            " created_at, last_seen, updated_at) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(
            ["int4", "text", "vector", "varchar", "varchar", "int4", "timestamptz", "timestamptz", "timestamptz"]
        )
        now = timezone.now()
        for i, (owner, vector) in enumerate(zip(owners, vectors, strict=True)):
            copy.write_row([users[owner].pk, f"synthetic {i}", vector, "synthetic", f"{i:064x}", 1, now, now, now])
    ids = np.array(Memory.objects.filter(embedding_model="synthetic").order_by("id").values_list("id", flat=True))
    probes = rng.standard_normal((50, dims)).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    exact = 0
    for n, probe in enumerate(probes):
        owner = n * 4
        mask = owners == owner
        truth = ids[mask][np.argsort(-(vectors[mask] @ probe), kind="stable")[:5]]
        got = memory_nearest(user=users[owner], vector=probe, embedding_model="synthetic", k=5, min_sim=-1.0)
        assert all(r.memory.user_id == users[owner].pk for r in got)
        exact += [r.memory.pk for r in got] == truth.tolist()
    assert exact == len(probes)
