"""The benchmark's code on a few thousand rows: exactness and query counts only, never a time.

It runs in the test database (pytest-django's), not in the benchmark's own databases,
and without the mem0 venv.
"""

import pytest
from django.test.utils import override_settings

import memoryapp.write.pipeline
from bench.chat_bench import measure_chat
from bench.extractor import FIXED_EXTRACTOR, FIXED_FACTS, TURNS, fixed_facts
from bench.heavy_bench import answered_by, measure_heavy
from bench.pages_bench import PAGE_SIZE, measure_pages
from bench.partition_bench import measure_partitioned_plans
from bench.recall_bench import measure_recall
from bench.seed import embedder_space, ensure_seeded, stored_vectors_match, synthetic_model
from bench.synthetic import HEAVY_USER_INDEX, Dataset
from bench.timing import Buckets, stopwatch
from bench.write_bench import measure_writes
from chat.models import Turn
from core.partitioning import partition_by_owner
from memoryapp import user_index
from memoryapp.models import Memory, MemoryRecall
from memoryapp.parsed import parse_turn
from memoryapp.read.recall import Recalled
from memoryapp.write.extract import extract_facts

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def smoke():
    """A few thousand synthetic memories in the configured embedder's space, as the benchmark makes them."""
    return Dataset("smoke", users=20, per_user=100, heavy=1_500, dimensions=embedder_space()[1])


@pytest.fixture
def seeded(smoke):
    users, created = ensure_seeded(smoke, progress=False)
    assert created
    return users


def test_seeding_stores_the_generated_vectors_for_every_user(smoke, seeded):
    assert Memory.objects.filter(embedding_model=synthetic_model()).count() == smoke.rows == 3_500
    assert smoke.dimensions == 512 and synthetic_model() == "use-multilingual-v3"
    for index in (0, smoke.users - 1, HEAVY_USER_INDEX):
        assert stored_vectors_match(smoke, index, seeded[index])


def test_a_second_seed_of_the_same_dataset_reuses_it(smoke, seeded):
    users, created = ensure_seeded(smoke, progress=False)
    assert not created and users == seeded


def test_recall_matches_brute_force_for_regular_users(smoke, seeded):
    result = measure_recall(smoke, seeded, label="smoke", probes=40, progress=False, server_samples=3)
    assert result.exact_nearest == 1.0
    assert result.exact_recall == 1.0
    assert {p.user_index for p in result.probe_set} <= set(range(smoke.users))
    # the user's memories and their keys are each read through an index on the owner
    assert "Index Scan using memoryapp_memory_user" in result.explain
    assert "Index Scan using memoryapp_memorykey_user" in result.explain


def test_recall_matches_brute_force_for_the_heavy_user(smoke, seeded):
    result = measure_recall(smoke, seeded, label="heavy", probes=10, heavy=True, progress=False, server_samples=1)
    assert result.user_rows == 1_500
    assert result.exact_nearest == 1.0
    assert result.exact_recall == 1.0


def test_the_fixed_extractor_is_what_remember_uses_under_the_setting():
    assert fixed_facts("I'm vegan.") == ["The user is vegan."]
    assert fixed_facts("What's the weather?") == []
    with override_settings(MEMORY_EXTRACTOR=FIXED_EXTRACTOR):
        assert all(extract_facts(parse_turn(turn)) == FIXED_FACTS[turn] for turn in TURNS)


def test_the_write_benchmark_runs_remember_with_the_fixed_extractor_and_separates_the_embedding():
    result = measure_writes(users=1, progress=False)
    assert result.turns == len(TURNS)
    assert result.facts >= result.turns  # every corpus turn states at least one fact
    assert result.facts == sum(len(facts) for facts in FIXED_FACTS.values())  # the gate keeps every fixed fact
    assert Memory.objects.count() == result.rows_added <= result.facts
    assert 0 < result.embed_seconds < result.remember_seconds
    assert result.latency["n"] == len(TURNS)


def test_a_stopwatch_times_the_wrapped_function_and_puts_it_back():
    original = memoryapp.write.pipeline.extract_facts
    buckets = Buckets()
    with stopwatch(memoryapp.write.pipeline, "extract_facts", buckets, "extract"):
        assert memoryapp.write.pipeline.extract_facts(parse_turn("I'm vegan.")) == ["The user is vegan."]
    assert memoryapp.write.pipeline.extract_facts is original
    assert buckets["extract"] > 0 and buckets.take()["extract"] > 0 and buckets["extract"] == 0


def test_the_memory_page_and_api_cost_the_same_queries_on_every_page_for_every_user():
    result = measure_pages(large=600, small=30, requests=1, progress=False)
    assert result.rows_exact  # each page shows exactly the expected newest-first slice
    assert result.constant_queries, result.query_counts
    seen = {(t.user_memories, t.endpoint, t.page) for t in result.timings}
    assert {(600, "page", 1), (600, "page", 12), (600, "api", 24), (30, "api", 2)} <= seen
    for timing in result.timings:
        last_page = -(-timing.user_memories // PAGE_SIZE)
        assert timing.status == 200
        assert timing.rows == (
            PAGE_SIZE if timing.page < last_page else timing.user_memories - PAGE_SIZE * (last_page - 1)
        )


@pytest.mark.django_db(transaction=True)  # the memory write runs on commit, as in production
def test_the_chat_benchmark_answers_logs_and_remembers_every_turn():
    result = measure_chat(users=2, turns_per_user=4, per_user=100, progress=False)
    assert result.turns == 8
    assert result.replies == 8
    assert result.writes_done == 8
    assert result.memories_written > 0
    assert result.recalled_per_turn > 0  # the users' memories are about the questions' topics
    assert MemoryRecall.objects.count() > 0
    assert Turn.objects.filter(role=Turn.Role.ASSISTANT).count() == 8 + 8  # and the warm-up user's 8
    assert result.queries["question"] > 0 and result.queries["statement"] > result.queries["question"]
    sample = result.samples[0]
    assert sample["total"] >= sample["recall"] + sample["remember"]


@pytest.mark.django_db(transaction=True)
def test_the_chat_benchmark_with_a_worker_leaves_the_write_to_it_and_reports_the_queue_latency():
    result = measure_chat(users=2, turns_per_user=4, per_user=100, progress=False, mode="worker", paced_turns=3)
    assert (result.mode, result.turns, result.replies, result.writes_done) == ("worker", 8, 8, 8)
    assert result.memories_written > 0
    assert result.remember["p99"] == 0  # nothing of the write ran in the turn
    assert result.queue_latency["n"] == 3 and result.queue_latency["p95"] > 0


def test_the_write_benchmark_also_runs_the_offline_default_extractor():
    result = measure_writes(users=1, progress=False, extractor="")
    assert result.turns == len(TURNS) and result.facts > 0
    assert result.extract_seconds > 0 and result.as_dict()["extractor"] == "offline default (grammar)"


@pytest.mark.django_db(transaction=True)
def test_the_reply_benchmark_streams_each_turn_and_erases_its_user(fake_llm, settings):
    from django.contrib.auth import get_user_model

    from bench.reply_bench import measure_replies

    settings.MEMORY_TASK_BACKEND = "worker"  # writes queue for no worker, as in the benchmark
    for _ in range(6):  # the warm-up, two timed turns, then the model alone twice
        fake_llm.stream("A short answer, in a few pieces.", piece_chars=5)
    result = measure_replies(turns=2, progress=False)

    assert result["turns"] == result["answered"] == 2
    assert result["first_text_ms"]["n"] == result["whole_reply_ms"]["n"] == 2
    assert result["model_alone_first_ms"]["n"] == 2
    assert result["reply_chars_mean"] == len("A short answer, in a few pieces.")
    assert all(r["body"]["stream"] for r in fake_llm.chat_requests())
    assert not get_user_model().objects.filter(username__startswith="bench-reply-").exists()
    assert not Turn.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_conversation_benchmark_writes_each_turn_between_replies(fake_llm, settings):
    from django.contrib.auth import get_user_model

    from bench.extractor import FIXED_EXTRACTOR
    from bench.reply_bench import measure_conversation

    settings.MEMORY_TASK_BACKEND = "worker"  # the benchmark runs each write itself, between replies
    settings.MEMORY_EXTRACTOR = FIXED_EXTRACTOR
    for _ in range(3):  # the warm-up, then two turns of one conversation
        fake_llm.stream("Noted, thanks.", piece_chars=5)
    result = measure_conversation(texts=["I have two cats.", "I love jazz, and I play the piano."], progress=False)

    assert [row["stored"] for row in result["turns"]] == [1, 2]
    assert all(row["first_text"] is not None for row in result["turns"])
    assert result["first_text_after_first_ms"]["n"] == 1
    assert result["extraction_ms"]["n"] == result["write_ms"]["n"] == 2
    replies = [r["body"]["messages"] for r in fake_llm.chat_requests()]
    assert len(replies) == 3
    assert [m["content"] for m in replies[2] if m["role"] != "system"] == [
        "I have two cats.",
        "Noted, thanks.",
        "I love jazz, and I play the piano.",
    ]
    assert not get_user_model().objects.filter(username__startswith="bench-talk-").exists()
    assert not Turn.objects.exists()


def test_the_history_benchmark_indexes_its_turns_as_the_worker_does_and_times_every_probe():
    from bench.history_bench import PROBES, run_history_bench
    from chat.history import history_nearest
    from memoryapp.embeddings import get_embedder

    result = run_history_bench(turns=45, repeats=1, progress=False)

    assert (result.turns, result.probes) == (45, len(PROBES))
    assert result.statement_ms["n"] == result.every_word_ms["n"] == result.combined_ms["n"] == len(PROBES)
    first, tenth, last = result.nearest_similarity  # the exact nearest, best first
    assert 1.0 >= first >= tenth >= last
    assert result.machine["shared_buffers"].endswith(("kB", "MB", "GB"))  # SHOW's form, printed beside the timings
    indexed = Turn.objects.filter(user__username="bench-history-45", embedding__isnull=False)
    assert indexed.count() == 45 and not indexed.filter(search__isnull=True).exists()
    # the statement sees the seeded turns: with no floor it fills its k, each turn once
    user = indexed.first().user
    vector = get_embedder().embed([PROBES[0]])[0]
    found = history_nearest(
        user=user,
        text=PROBES[0],
        vector=vector,
        embedding_model=get_embedder().name,
        exclude_conversation_id=None,
        k=10,
        min_sim=-1.0,
    )
    assert len({excerpt.turn.pk for excerpt in found}) == 10


@pytest.mark.django_db(transaction=True)
def test_the_heavy_user_benchmark_compares_the_approximate_path_with_the_exact_one():
    """A few hundred realistic memories: scored exactly, then through the indexes it makes, each
    search depth compared with the exact answer on the same probes, of both kinds."""
    try:
        every = user_index.lists_for(300)  # searching this many lists searches them all
        result = measure_heavy(probes=8, k=5, depths=[1, every], facts=300, progress=False)
        again = measure_heavy(probes=2, k=5, depths=[1], facts=300, progress=False)
    finally:
        with override_settings(MEMORY_USER_INDEX_AT=None):
            user_index.prune()  # with the indexes off: every user's
    assert (result.memories, result.probes) == (300, 8)
    assert {kind: times["n"] for kind, times in result.exact.items()} == {"own facts": 8, "unrelated": 8}
    assert result.keys > 300 and 0 < result.needs < result.keys
    assert result.build_seconds is not None and again.build_seconds is None
    assert len(result.index_mb) == 3
    for scans in result.answered_by.values():
        assert sorted(scans) == ["need", "question", "text"] and sum(scans.values()) == 8 * 5
    assert [(a["probes"], a["lists"]) for a in result.approximate] == [
        ("own facts", 1),
        ("own facts", every),
        ("unrelated", 1),
        ("unrelated", every),
    ]
    for depth in result.approximate:
        assert depth["n"] == 8 and 0.0 <= depth["same_ids"] <= depth["by_score"] <= 1.0
    # every list searched: the exact answer
    assert [depth["same_ids"] for depth in result.approximate if depth["lists"] == every] == [1.0] * 2
    assert every > 1
    assert "memory_ann_u" in result.explain


def test_on_tables_partitioned_by_owner_recall_stays_exact_and_every_statement_reads_one_partition(smoke):
    """The benchmark's partitioned variant, inside this test's transaction: the same statements,
    each planned on its owner's partition alone, and recall as exact as on flat tables."""
    assert partition_by_owner(16)
    users, _ = ensure_seeded(smoke, progress=False)
    result = measure_recall(smoke, users, label="partitioned", probes=20, progress=False, server_samples=1)
    assert result.exact_nearest == 1.0 and result.exact_recall == 1.0
    assert "on memoryapp_memory_p" in result.explain and "on memoryapp_memorykey_p" in result.explain

    plans = measure_partitioned_plans()
    assert plans["partitions"] == 16
    steps = {step: [plan["partitions"] for plan in plans[step]] for step in ("log", "write", "read")}
    assert all(steps.values()), steps
    assert any(steps["read"]) and any(steps["write"]) and any(steps["log"])
    assert all(count == 1 for step in steps.values() for read in step for count in read.values()), steps


def test_an_answer_is_put_down_to_the_scan_it_scored_best_by():
    memory = Memory()
    by_need = Recalled(memory, 0.6, 1, text_similarity=0.5, key_similarity=0.6, plain_similarity=0.5)
    by_question = Recalled(memory, 0.5, 1, text_similarity=0.5, key_similarity=0.3, plain_similarity=0.4)
    by_text = Recalled(memory, 0.5, 1, text_similarity=0.5, key_similarity=-1.0, plain_similarity=0.5)
    assert [answered_by(item) for item in (by_need, by_question, by_text)] == ["need", "question", "text"]
