"""A heavy user's approximate indexes (memoryapp.user_index) and the statement that walks them
(memoryapp.read.recall): made past the mark and only then, usable by that user's scans alone,
never losing the exact answer where they are absent, and dropped when no longer needed."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone
from pgvector.django import CosineDistance

from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp import user_index
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryKey, MemoryNeed, MemorySettings
from memoryapp.read import recall

DIMS = 16
MODEL = "synthetic-16"


def _unit(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _memories(user, count: int, rng: np.random.Generator, *, start: int = 0) -> list[Memory]:
    """`count` memories with two needs each: one worded for the memory alone, one shared with
    every seventh memory (as "Where do I live?" is shared by everyone's city), every vector
    random, a shared wording's the same for each memory that has it; and but for every fifth
    memory the fact asked, near its text (it says the same thing), the memory marked `asked`, as
    the write path keys them. The wordings are kept once each as the write path keeps them (MemoryNeed)."""
    now = timezone.now()
    texts = _unit(rng, count)
    memories = Memory.objects.bulk_create(
        Memory(
            user=user,
            text=f"fact {i}",
            embedding=vector,
            embedding_model=MODEL,
            keys_model=MODEL,
            asked=i % 5 != 4,
            content_hash=f"{i:064x}",
            last_seen=now,
        )
        for i, vector in enumerate(texts, start=start)
    )
    near = texts + 0.3 * _unit(rng, count)
    questions = near / np.linalg.norm(near, axis=1, keepdims=True)
    own, shared = iter(_unit(rng, count * 2)), _unit(rng, 7)
    keys = []
    for i, (memory, question) in enumerate(zip(memories, questions, strict=True), start=start):
        if memory.asked:
            keys.append(
                MemoryKey(memory=memory, text=f"asked {memory.text}", kind=MemoryKey.Kind.QUESTION, embedding=question)
            )
        keys.append(
            MemoryKey(memory=memory, text=f"need of {memory.text}", kind=MemoryKey.Kind.NEED, embedding=next(own))
        )
        keys.append(
            MemoryKey(memory=memory, text=f"shared need {i % 7}", kind=MemoryKey.Kind.NEED, embedding=shared[i % 7])
        )
    for key in keys:
        key.user, key.embedding_model = user, MODEL
    MemoryKey.objects.bulk_create(keys)
    MemoryNeed.objects.bulk_create(
        [
            MemoryNeed(user=user, embedding_model=MODEL, text=key.text, embedding=key.embedding)
            for key in keys
            if key.kind == MemoryKey.Kind.NEED
        ],
        ignore_conflicts=True,
    )
    return memories


def _nearest(user, probe, *, approximate: bool) -> list[int]:
    found = recall.memory_nearest(
        user=user, vector=probe, embedding_model=MODEL, k=5, min_sim=-1.0, key_offset=0.05, approximate=approximate
    )
    return [item.memory.pk for item in found]


@pytest.fixture
def heavy_mark(settings):
    settings.MEMORY_USER_INDEX_AT = 40
    yield 40
    with override_settings(MEMORY_USER_INDEX_AT=None):  # indexes outlive the flush between tests
        user_index.prune()  # with the indexes off: every user's


@pytest.mark.django_db
def test_the_chosen_memories_hold_the_exact_answer_without_an_index(django_user_model):
    """Without indexes the scans of the approximate statement are exact sorts: its answer is the
    exact statement's, keys and all, and a deleted memory's keys crowd nothing out."""
    rng = np.random.default_rng(5)
    user = django_user_model.objects.create_user("ana")
    memories = _memories(user, 60, rng)
    probes = _unit(rng, 20)
    for probe in probes[:5]:  # the deleted memories are those nearest the probes by their keys
        nearest_key = MemoryKey.objects.filter(user=user).order_by(CosineDistance("embedding", probe)).first()
        Memory.objects.filter(user=user, pk=nearest_key.memory_id).update(deleted_at=timezone.now())
    assert Memory.objects.filter(user=user, deleted_at__isnull=False).exists()
    for probe in probes:
        exact = _nearest(user, probe, approximate=False)
        assert len(exact) == 5
        assert _nearest(user, probe, approximate=True) == exact
    assert len(memories) == 60


@pytest.mark.django_db
def test_a_memory_met_through_many_needs_crowds_no_other_out(django_user_model):
    """The need scan takes the nearest wordings, k times as many as a memory has keys at most: two
    memories whose every need is worded nearer the turn than any other's take ten of them, and
    the wordings taken still lead to the k memories nearest by need."""
    rng = np.random.default_rng(11)
    user = django_user_model.objects.create_user("ana")
    _memories(user, 30, rng)
    probe = _unit(rng, 1)[0]
    near = [probe + 0.02 * offset for offset in _unit(rng, 12)]
    crowding = _memories(user, 2, rng, start=100)
    for memory, wordings in zip(crowding, (near[:5], near[5:10]), strict=True):
        MemoryKey.objects.filter(user=user, memory=memory).delete()
        for i, vector in enumerate(wordings):
            text = f"need {i} of {memory.text}"
            MemoryKey.objects.create(user=user, memory=memory, text=text, embedding=vector, embedding_model=MODEL)
            MemoryNeed.objects.create(user=user, text=text, embedding=vector, embedding_model=MODEL)
        Memory.objects.filter(user=user, pk=memory.pk).update(asked=False, embedding=list(-probe))
    exact = _nearest(user, probe, approximate=False)
    assert set(exact[:2]) == {memory.pk for memory in crowding}
    assert _nearest(user, probe, approximate=True) == exact


@pytest.mark.django_db(transaction=True)
def test_a_user_past_the_mark_gets_indexes_only_their_scans_can_use(django_user_model, heavy_mark):
    rng = np.random.default_rng(6)
    heavy, light = django_user_model.objects.create_user("heavy"), django_user_model.objects.create_user("light")
    _memories(heavy, heavy_mark, rng)
    _memories(light, heavy_mark - 1, rng)

    assert user_index.ensure(heavy.pk, MODEL, DIMS) is True
    assert user_index.ensure(light.pk, MODEL, DIMS) is False
    assert set(user_index.indexed_users()) == {heavy.pk}
    assert user_index.indexed_model(heavy.pk) == MODEL and user_index.indexed_model(light.pk) == ""

    names = set(user_index.indexed_users()[heavy.pk])
    assert {name.split("_")[3] for name in names} == {"unasked", "question", "need"}
    assert _indexes_in_plan(heavy, rng) == names  # each scan may search its index
    assert _indexes_in_plan(light, rng) == set()  # another user's predicate proves nothing of theirs


def _indexes_in_plan(user, rng) -> set[str]:
    """The user's approximate indexes in the plan of their approximate statement, sorts turned
    off so that the planner takes an index wherever one applies (the tables here are tiny)."""
    params = recall._params(user, _unit(rng, 1)[0], MODEL, k=5, candidates=25)
    with connection.cursor() as cursor:
        cursor.execute("SET enable_sort = off")
        cursor.execute("EXPLAIN " + recall._sql(recall._NEAREST, DIMS), params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_sort")
    return {name for names in user_index.indexed_users().values() for name in names if name in plan}


@pytest.mark.django_db(transaction=True)
def test_recall_through_the_indexes_finds_the_exact_answer_on_a_small_graph(django_user_model, heavy_mark):
    """On a graph this small the walk visits every node: the answer is the exact one, deleted
    memories left out; read_turn's callers find the statement by the user's settings."""
    rng = np.random.default_rng(7)
    user = django_user_model.objects.create_user("heavy")
    memories = _memories(user, 80, rng)
    assert user_index.ensure(user.pk, MODEL, DIMS)
    Memory.objects.filter(pk__in=[m.pk for m in memories[:10]]).update(deleted_at=timezone.now())
    for probe in _unit(rng, 20):
        exact = _nearest(user, probe, approximate=False)
        assert recall.memory_nearest(user=user, vector=probe, embedding_model=MODEL, k=5, min_sim=-1.0, key_offset=0.05)
        assert _nearest(user, probe, approximate=True) == exact
        assert not {m.pk for m in memories[:10]} & set(exact)
    unasked = next(memory for memory in memories[10:] if not memory.asked)  # found by its text alone
    assert _nearest(user, np.asarray(unasked.embedding, dtype=np.float32), approximate=True)[0] == unasked.pk


@pytest.mark.django_db(transaction=True)
def test_indexes_are_made_outside_a_transaction_only_and_pruned_when_not_needed(django_user_model, heavy_mark):
    rng = np.random.default_rng(8)
    stays, shrinks, leaves = (django_user_model.objects.create_user(name) for name in ("stays", "shrinks", "leaves"))
    for user in (stays, shrinks, leaves):
        _memories(user, heavy_mark, rng)
    with transaction.atomic():
        assert user_index.ensure(stays.pk, MODEL, DIMS) is False  # a concurrent build cannot run in one
    assert user_index.indexed_users() == {}
    call_command("user_indexes")
    assert set(user_index.indexed_users()) == {stays.pk, shrinks.pk, leaves.pk}

    Memory.objects.filter(user=shrinks).exclude(pk__in=Memory.objects.filter(user=shrinks)[:5]).update(
        deleted_at=timezone.now()
    )
    leaves.delete()
    call_command("user_indexes", "--prune")
    assert set(user_index.indexed_users()) == {stays.pk}
    assert MemorySettings.objects.get(user=shrinks).indexed_model == ""
    assert MemorySettings.objects.get(user=stays).indexed_model == MODEL


@pytest.mark.django_db(transaction=True)
def test_the_lists_are_made_again_when_the_user_has_doubled(django_user_model, heavy_mark, monkeypatch):
    """An IVFFlat index's lists are fixed when it is made: past twice the rows they were made
    for, `ensure` makes the index again with more, and drops the old one; the graph stays."""
    monkeypatch.setattr(user_index, "ROWS_PER_LIST", 10)
    rng = np.random.default_rng(10)
    user = django_user_model.objects.create_user("growing")
    _memories(user, heavy_mark, rng)
    assert user_index.ensure(user.pk, MODEL, DIMS)
    first = set(user_index.indexed_users()[user.pk])
    assert sorted(name.rsplit("_", 1)[1] for name in first if "_need_" not in name) == ["4", "4"]

    _memories(user, heavy_mark - 1, rng, start=heavy_mark)  # under twice the rows the lists were made for
    assert user_index.ensure(user.pk, MODEL, DIMS) and set(user_index.indexed_users()[user.pk]) == first
    _memories(user, 1, rng, start=2 * heavy_mark - 1)
    assert Memory.objects.filter(user=user, deleted_at__isnull=True).count() == 2 * heavy_mark
    assert user_index.ensure(user.pk, MODEL, DIMS)

    now = set(user_index.indexed_users()[user.pk])
    assert sorted(name.rsplit("_", 1)[1] for name in now if "_need_" not in name) == ["8", "8"]
    assert {name for name in now if "_need_" in name} == {name for name in first if "_need_" in name}
    probe = _unit(rng, 1)[0]
    assert _nearest(user, probe, approximate=True)[0] == _nearest(user, probe, approximate=False)[0]

    past = django_user_model.objects.create_user("past")  # already past the mark: lists for all their rows
    _memories(past, 3 * heavy_mark, rng)
    assert user_index.ensure(past.pk, MODEL, DIMS)
    lists = [name.rsplit("_", 1)[1] for name in user_index.indexed_users()[past.pk] if "_need_" not in name]
    assert lists == ["12", "12"]


@pytest.mark.django_db(transaction=True)
def test_the_worker_counts_a_heavy_users_rows_at_most_once_in_a_while(django_user_model, heavy_mark, monkeypatch):
    """After a write, the memory worker takes the indexes it checked lately to hold, and reads no
    more than which indexes the user has and when they were checked; once that is longer ago, it
    counts the rows again and makes the lists again for a user who has doubled meanwhile."""
    monkeypatch.setattr(user_index, "ROWS_PER_LIST", 10)
    rng = np.random.default_rng(14)
    user = django_user_model.objects.create_user("growing")
    _memories(user, heavy_mark, rng)
    within = user_index.RECHECK_AFTER
    assert user_index.ensure(user.pk, MODEL, DIMS, unless_checked_within=within)
    first = set(user_index.indexed_users()[user.pk])
    assert MemorySettings.objects.get(user=user).indexes_checked_at is not None

    _memories(user, heavy_mark, rng, start=heavy_mark)
    with CaptureQueriesContext(connection) as queries:
        assert user_index.ensure(user.pk, MODEL, DIMS, unless_checked_within=within)
    assert len(queries) == 2 and not any("count(" in query["sql"] for query in queries)  # their indexes, the check
    assert set(user_index.indexed_users()[user.pk]) == first

    long_ago = timezone.now() - within - timedelta(minutes=1)
    MemorySettings.objects.filter(user=user).update(indexes_checked_at=long_ago)
    switched = MemorySettings.objects.get(user=user).changed_at
    assert user_index.ensure(user.pk, MODEL, DIMS, unless_checked_within=within)
    lists = sorted(name.rsplit("_", 1)[1] for name in user_index.indexed_users()[user.pk] if "_need_" not in name)
    assert lists == ["8", "8"]
    noted = MemorySettings.objects.get(user=user)
    assert noted.indexes_checked_at > long_ago and noted.changed_at == switched  # no switch was changed


@pytest.mark.django_db(transaction=True)
def test_prune_drops_indexes_of_the_earlier_form(django_user_model, heavy_mark):
    rng = np.random.default_rng(12)
    user = django_user_model.objects.create_user("heavy")
    _memories(user, heavy_mark, rng)
    assert user_index.ensure(user.pk, MODEL, DIMS)
    current = set(user_index.indexed_users()[user.pk])
    former = f"memory_hnsw_u{user.pk}_text_0123abcd"
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX {former} ON {Memory._meta.db_table}"
            f" USING hnsw ((embedding::vector({DIMS})) vector_cosine_ops) WHERE user_id = {user.pk}"
        )
    assert former in user_index.indexed_users()[user.pk]
    assert user_index.prune() == []  # the user keeps their indexes of today's form
    assert set(user_index.indexed_users()[user.pk]) == current


@pytest.mark.django_db(transaction=True)
def test_ensure_drops_the_indexes_no_scan_uses(django_user_model, heavy_mark):
    """An index of an earlier form (lists over every text, where recall now searches the texts
    of memories with no fact asked) and one of another model go when `ensure` next runs; the
    indexes recall uses stay."""
    rng = np.random.default_rng(13)
    user = django_user_model.objects.create_user("heavy")
    _memories(user, heavy_mark, rng)
    assert user_index.ensure(user.pk, MODEL, DIMS)
    current = set(user_index.indexed_users()[user.pk])
    digest = next(name for name in current if "_need_" in name).rsplit("_", 1)[1]
    unused = [f"memory_ann_u{user.pk}_text_{digest}_4", f"memory_ann_u{user.pk}_question_0123abcd_4"]
    with connection.cursor() as cursor:
        for name in unused:
            cursor.execute(
                f"CREATE INDEX {name} ON {Memory._meta.db_table}"
                f" USING ivfflat ((embedding::halfvec({DIMS})) halfvec_cosine_ops) WITH (lists = 4)"
                f" WHERE user_id = {user.pk} AND deleted_at IS NULL"
            )
    assert set(user_index.indexed_users()[user.pk]) == current | set(unused)

    assert user_index.ensure(user.pk, MODEL, DIMS)
    assert set(user_index.indexed_users()[user.pk]) == current


@pytest.mark.django_db(transaction=True)
def test_with_the_indexes_off_no_user_gets_one_and_recall_stays_exact(django_user_model, settings):
    settings.MEMORY_USER_INDEX_AT = None
    rng = np.random.default_rng(9)
    user = django_user_model.objects.create_user("heavy")
    _memories(user, 50, rng)
    assert user_index.ensure(user.pk, MODEL, DIMS) is False
    call_command("user_indexes")
    assert user_index.indexed_users() == {}
    MemorySettings.objects.create(user=user, indexed_model=MODEL)  # left from when they were on
    probe = _unit(rng, 1)[0]
    with CaptureQueriesContext(connection) as queries:
        got = recall.memory_nearest(user=user, vector=probe, embedding_model=MODEL, k=5, min_sim=-1.0, key_offset=0.05)
    assert [item.memory.pk for item in got] == _nearest(user, probe, approximate=False)
    assert len(queries) == 1 and "chosen" not in queries[0]["sql"]


@pytest.mark.django_db(transaction=True)
def test_the_write_that_reaches_the_mark_makes_the_indexes_and_the_next_turn_walks_them(alice, settings):
    """Through the chat: the memory write of the turn that leaves the user at the mark makes
    their indexes, and a later turn is answered through them, finding what was said."""
    settings.MEMORY_USER_INDEX_AT = 2
    try:
        first = conversation_create(user=alice)
        for text in ("Call me Priya.", "I'm always in UTC."):
            chat_reply(user=alice, user_turn=chat_user_turn(user=alice, conversation=first, content=text))
        assert Memory.objects.filter(user=alice, deleted_at__isnull=True).count() >= 2
        assert set(user_index.indexed_users()) == {alice.pk}
        assert MemorySettings.objects.get(user=alice).indexed_model == get_embedder().name

        asked = chat_user_turn(
            user=alice, conversation=conversation_create(user=alice), content="What timezone am I in?"
        )
        with CaptureQueriesContext(connection) as queries:
            outcome = chat_reply(user=alice, user_turn=asked)
        assert any("chosen" in query["sql"] for query in queries)
        assert "The user's timezone is UTC." in [item.memory.text for item in outcome.recalled]
    finally:
        with override_settings(MEMORY_USER_INDEX_AT=None):
            user_index.prune()  # with the indexes off: every user's
