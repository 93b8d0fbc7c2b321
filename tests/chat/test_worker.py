"""The memory write on a real worker: `manage.py memory_worker` (django-tasks-db's worker, with
reconnection and a lease: chat.worker) as its own process, against the test database, for whole
chat turns."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from chat.models import Turn, WorkerLease
from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory, MemoryEvidence
from tests.db_proxy import DatabaseProxy
from tests.fake_openai import Behaviour
from tests.workers import TIMEOUT, finish, worker

pytestmark = pytest.mark.django_db(transaction=True)


def say(user, conversation, text: str) -> Turn:
    turn = chat_user_turn(user=user, conversation=conversation, content=text)
    outcome = chat_reply(user=user, user_turn=turn)
    assert outcome.error is None
    return outcome.user_turn


def test_a_statement_is_answered_at_once_and_remembered_by_the_worker(alice, worker_env):
    conversation = conversation_create(user=alice)
    turn = say(alice, conversation, "I live in Lisbon and I'm a pediatric nurse.")
    assert turn.memory_state == Turn.MemoryState.QUEUED  # the reply did not wait for the write
    assert not Memory.objects.filter(user=alice).exists()

    finish(worker(worker_env, "--batch"))

    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.DONE
    stored = Memory.objects.filter(user=alice, source_turn=turn, source_conversation=conversation)
    assert sorted(stored.values_list("text", flat=True)) == [
        "The user is a pediatric nurse.",
        "The user lives in Lisbon.",
    ]
    assert MemoryEvidence.objects.filter(user=alice, turn=turn).count() == 2
    (result,) = DBTaskResult.objects.all()
    assert (result.status, result.return_value, len(result.worker_ids)) == ("SUCCESSFUL", 2, 1)


def test_a_failing_model_is_retried_with_back_off_then_the_turn_offers_a_retry(alice, worker_env, fake_llm):
    worker_env.update(
        OPENAI_BASE_URL=fake_llm.base_url,
        OPENAI_API_KEY="test-key",
        MEMORY_WRITE_ATTEMPTS="2",
        MEMORY_GRAMMAR_FIRST="0",
    )
    fake_llm.reply("Noted.")  # the reply, in this process
    fake_llm.fail(503, times=2)  # both extraction attempts, in the worker
    turn = say(alice, conversation_create(user=alice), "I live in Lisbon.")
    fake_llm.requests.clear()

    started = time.monotonic()
    finish(worker(worker_env, "--max-tasks", "2"))

    assert time.monotonic() - started >= 2.0  # the second attempt waited its back-off
    assert len(fake_llm.chat_requests()) == 2
    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.FAILED
    assert not Memory.objects.filter(user=alice).exists()
    assert Turn.objects.filter(user=alice).count() == 2  # the turn and its reply, once each
    results = DBTaskResult.objects.order_by("enqueued_at")
    assert [(r.status, r.args_kwargs["kwargs"]["attempt"]) for r in results] == [
        ("SUCCESSFUL", 1),
        ("SUCCESSFUL", 2),
    ]


def test_two_workers_never_run_one_turns_write_twice(alice, bob, worker_env):
    turns = [
        say(user, conversation_create(user=user), f"I have {n} cats and I live in Lisbon.")
        for n in range(2, 8)
        for user in (alice, bob)
    ]

    first, second = worker(worker_env, "--batch"), worker(worker_env, "--batch")
    finish(first), finish(second)

    results = list(DBTaskResult.objects.all())
    assert len(results) == len(turns)
    assert all(r.status == "SUCCESSFUL" and len(r.worker_ids) == 1 for r in results)
    assert len({worker_id for r in results for worker_id in r.worker_ids}) >= 1
    for turn in turns:
        turn.refresh_from_db()
        assert turn.memory_state == Turn.MemoryState.DONE
    # each statement's facts once: the same two facts per user, restated five times
    for user in (alice, bob):
        assert Memory.objects.filter(user=user, deleted_at__isnull=True).count() == 2 + 5  # cats differ, city once
        assert MemoryEvidence.objects.filter(user=user).count() == 2 * 6


def test_a_worker_killed_mid_write_loses_and_doubles_nothing_after_a_restart(alice, worker_env, fake_llm):
    worker_env.update(
        OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="test-key", MEMORY_LLM_TIMEOUT="60", MEMORY_GRAMMAR_FIRST="0"
    )
    fake_llm.reply("Noted.")
    fake_llm.hang(60)  # the worker's extraction call never comes back in time
    turn = say(alice, conversation_create(user=alice), "I live in Lisbon.")

    doomed = worker(worker_env)
    deadline = time.monotonic() + TIMEOUT
    while not DBTaskResult.objects.filter(status="RUNNING").exists():
        assert time.monotonic() < deadline and doomed.poll() is None, "the worker never started the write"
        time.sleep(0.1)
    time.sleep(0.5)  # inside the extraction call
    os.killpg(doomed.pid, signal.SIGKILL)
    doomed.communicate()
    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.QUEUED  # abandoned, not lost

    call_command("requeue_memory_writes", "--older-than", "0m")
    fake_llm.chat_queue.clear()
    fake_llm.facts("The user lives in Lisbon.")
    finish(worker(worker_env, "--batch"))

    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.DONE
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user lives in Lisbon."]
    assert MemoryEvidence.objects.filter(user=alice, turn=turn).count() == 1
    assert sorted(DBTaskResult.objects.values_list("status", flat=True)) == ["FAILED", "SUCCESSFUL"]
    assert Turn.objects.filter(user=alice).count() == 2


def test_staff_see_the_queued_writes_in_the_admin(alice, staff, worker_env, client):
    turn = say(alice, conversation_create(user=alice), "I live in Lisbon.")
    client.force_login(staff)
    response = client.get("/admin/django_tasks_database/dbtaskresult/")
    assert response.status_code == 200
    (result,) = DBTaskResult.objects.all()
    assert result.status == "READY" and result.args_kwargs["kwargs"]["turn_id"] == turn.pk
    assert str(result.id) in response.content.decode() and "remember_turn" in response.content.decode()


def test_queued_writes_and_their_vectors_go_with_the_conversation_and_the_account(alice, bob, worker_env):
    from chat.services import account_erase, conversation_delete

    kept = say(alice, conversation_create(user=alice), "I live in Lisbon.")
    gone = conversation_create(user=alice)
    say(alice, gone, "I'm a pediatric nurse.")
    say(bob, conversation_create(user=bob), "I live in Porto.")
    assert DBTaskResult.objects.count() == 3
    assert all(len(r.args_kwargs["kwargs"]["turn_vector"]) == 512 for r in DBTaskResult.objects.all())

    conversation_delete(user=alice, conversation=gone)
    assert [
        r.args_kwargs["kwargs"]["turn_id"] for r in DBTaskResult.objects.filter(args_kwargs__kwargs__user_id=alice.pk)
    ] == [kept.pk]

    account_erase(user=alice)
    assert [r.args_kwargs["kwargs"]["user_id"] for r in DBTaskResult.objects.all()] == [bob.pk]


def _wait_for(condition, what: str, process=None) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        assert process is None or process.poll() is None, f"the worker exited while waiting for {what}"
        time.sleep(0.1)


def _short_leases(env: dict[str, str], fake_llm) -> None:
    """Workers on the fake model, waiting for its extraction for up to a minute, with 2 s leases."""
    env.update(
        OPENAI_BASE_URL=fake_llm.base_url,
        OPENAI_API_KEY="test-key",
        MEMORY_LLM_TIMEOUT="60",
        MEMORY_GRAMMAR_FIRST="0",
        MEMORY_WORKER_LEASE_SECONDS="2",
    )


def test_the_write_of_a_killed_worker_is_taken_up_by_the_next_without_a_hand(alice, worker_env, fake_llm):
    _short_leases(worker_env, fake_llm)
    fake_llm.reply("Noted.")
    fake_llm.hang(60)
    turn = say(alice, conversation_create(user=alice), "I live in Lisbon.")
    doomed = worker(worker_env)
    _wait_for(lambda: DBTaskResult.objects.filter(status="RUNNING").exists(), "the write to start", doomed)
    os.killpg(doomed.pid, signal.SIGKILL)
    doomed.communicate()
    time.sleep(2.5)  # the dead worker's lease lapses

    fake_llm.chat_queue.clear()
    fake_llm.facts("The user lives in Lisbon.")
    output = finish(worker(worker_env, "--batch"))  # no requeue_memory_writes by hand

    assert "abandoned memory writes: 1 stale tasks failed, 1 writes queued again" in output
    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.DONE
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user lives in Lisbon."]
    assert MemoryEvidence.objects.filter(user=alice, turn=turn).count() == 1
    assert sorted(DBTaskResult.objects.values_list("status", flat=True)) == ["FAILED", "SUCCESSFUL"]


def test_a_slow_write_of_a_live_worker_is_never_taken_from_it(alice, worker_env, fake_llm):
    _short_leases(worker_env, fake_llm)
    fake_llm.reply("Noted.")
    fake_llm.chat_queue.append(Behaviour(content='{"facts": ["The user lives in Lisbon."]}', delay=6))
    turn = say(alice, conversation_create(user=alice), "I live in Lisbon.")
    slow = worker(worker_env)
    _wait_for(lambda: DBTaskResult.objects.filter(status="RUNNING").exists(), "the write to start", slow)
    time.sleep(2.5)  # longer than a lease: the write goes on, its worker renewing the lease

    output = finish(worker(worker_env, "--batch"))
    assert "abandoned" not in output
    assert list(DBTaskResult.objects.values_list("status", flat=True)) == ["RUNNING"]

    _wait_for(lambda: DBTaskResult.objects.filter(status="SUCCESSFUL").exists(), "the slow write", slow)
    os.killpg(slow.pid, signal.SIGTERM)
    finish(slow)
    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.DONE
    assert MemoryEvidence.objects.filter(user=alice, turn=turn).count() == 1
    assert list(DBTaskResult.objects.values_list("status", flat=True)) == ["SUCCESSFUL"]
    assert not WorkerLease.objects.exists()  # both workers gave their lease up as they stopped


def test_the_worker_waits_out_a_database_outage_and_carries_on(alice, worker_env):
    from django.db import connection

    proxy = DatabaseProxy()
    worker_env.update(DATABASE_URL=proxy.url(connection.settings_dict["NAME"]))
    process = worker(worker_env)
    _wait_for(WorkerLease.objects.exists, "the worker to start", process)

    proxy.cut()  # as `pg_ctl stop -m fast` looks from the worker
    time.sleep(3)
    assert process.poll() is None, "the worker exited when its database went away"
    proxy.restore()

    turn = say(alice, conversation_create(user=alice), "I live in Lisbon.")
    written = lambda: Turn.objects.get(pk=turn.pk).memory_state == Turn.MemoryState.DONE  # noqa: E731
    _wait_for(written, "the write after the outage", process)
    os.killpg(process.pid, signal.SIGTERM)
    output = finish(process)
    assert "database unavailable" in output and "reconnecting in 0.5 s (attempt 1)" in output
    assert "database reachable again" in output
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user lives in Lisbon."]
