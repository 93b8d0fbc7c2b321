"""The benchmark's code on a few thousand rows: exactness only, never a time.

It runs in the test database (pytest-django's), not in the benchmark's own databases,
and without the mem0 venv.
"""

import pytest

from bench.recall_bench import measure_recall
from bench.seed import SYNTHETIC_MODEL, ensure_seeded, stored_vectors_match
from bench.synthetic import HEAVY_USER_INDEX, Dataset
from bench.write_bench import TURNS, measure_writes
from memoryapp.models import Memory

pytestmark = pytest.mark.django_db

SMOKE = Dataset("smoke", users=20, per_user=100, heavy=1_500)


@pytest.fixture
def seeded():
    users, created = ensure_seeded(SMOKE, progress=False)
    assert created
    return users


def test_seeding_stores_the_generated_vectors_for_every_user(seeded):
    assert Memory.objects.filter(embedding_model=SYNTHETIC_MODEL).count() == SMOKE.rows == 3_500
    for index in (0, SMOKE.users - 1, HEAVY_USER_INDEX):
        assert stored_vectors_match(SMOKE, index, seeded[index])


def test_a_second_seed_of_the_same_dataset_reuses_it(seeded):
    users, created = ensure_seeded(SMOKE, progress=False)
    assert not created and users == seeded


def test_recall_matches_brute_force_for_regular_users(seeded):
    result = measure_recall(SMOKE, seeded, label="smoke", probes=40, progress=False, server_samples=3)
    assert result.exact_nearest == 1.0
    assert result.exact_recall == 1.0
    assert {p.user_index for p in result.probe_set} <= set(range(SMOKE.users))
    assert "Index Scan" in result.explain and "384 floats" in result.explain


def test_recall_matches_brute_force_for_the_heavy_user(seeded):
    result = measure_recall(SMOKE, seeded, label="heavy", probes=10, heavy=True, progress=False, server_samples=1)
    assert result.user_rows == 1_500
    assert result.exact_nearest == 1.0
    assert result.exact_recall == 1.0


def test_the_write_benchmark_stores_every_fact_it_counts():
    result = measure_writes(users=1, progress=False)
    assert result.turns == len(TURNS)
    assert result.facts >= result.turns  # every corpus turn states at least one fact
    assert Memory.objects.count() == result.facts
