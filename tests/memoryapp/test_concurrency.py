import threading

import pytest
from django.db import connection

from chat.services import conversation_create
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.write import remember
from tests.factories import user_turn

THREADS = 8


@pytest.mark.django_db(transaction=True)
def test_concurrent_remember_of_one_fact_ends_with_one_live_row(alice):
    conversation = conversation_create(user=alice)
    turns = [user_turn(alice, "I'm allergic to peanuts.", conversation) for _ in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    results: list[int] = []
    errors: list[BaseException] = []

    def worker(turn) -> None:
        try:
            barrier.wait()
            results.append(remember(alice, turn).stored)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(t,)) for t in turns]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert results == [1] * THREADS
    memory = Memory.objects.get(user=alice, deleted_at__isnull=True)
    assert memory.text == "The user is allergic to peanuts."
    assert memory.times_seen == THREADS
    assert MemoryEvidence.objects.filter(memory=memory).count() == THREADS
    assert MemoryEvidence.objects.filter(memory=memory, created=True).count() == 1
    assert [t.seq for t in turns] == list(range(1, THREADS + 1))
