from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memoryapp.models import Memory
from memoryapp.write import remember
from tests.factories import user_turn

PRIYA = "Call me Priya, and I'm always in UTC."


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


@pytest.fixture
def alice_api(alice) -> APIClient:
    client = APIClient()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_api(bob) -> APIClient:
    client = APIClient()
    client.force_login(bob)
    return client


@pytest.fixture
def lisbon(alice) -> Memory:
    """Alice's memory that she lives in Lisbon, written by the write path from one of her turns."""
    turn = user_turn(alice, "I live in Lisbon.")
    assert remember(alice, turn).stored == 1
    return Memory.objects.get(user=alice, source_turn=turn)
