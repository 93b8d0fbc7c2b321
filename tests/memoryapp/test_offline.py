import socket

import numpy as np
import pytest

from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory
from memoryapp.read.recall import recall
from memoryapp.write import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def network_unreachable(monkeypatch):
    """Refuse every TCP/UDP connection; the database stays reachable on its unix socket."""
    real_connect = socket.socket.connect

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(101, "Network is unreachable")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: (_ for _ in ()).throw(OSError(101, "unreachable")))


def test_offline_default_remembers_and_recalls_with_no_network(alice, settings, network_unreachable):
    settings.OPENAI_BASE_URL = None
    settings.OPENAI_API_KEY = None
    settings.LLM_ENABLED = False
    settings.EMBEDDING_MODEL = "local"

    assert remember(alice, user_turn(alice, "Call me Priya, and I'm always in UTC.")).stored == 2
    recalled = recall(alice, "What timezone am I in?")

    assert [r.memory.text for r in recalled] == ["The user's timezone is UTC."]
    assert get_embedder().name == "all-MiniLM-L6-v2"


def test_endpoint_embeddings_are_used_and_kept_apart_from_local_ones(alice, fake_llm, settings):
    settings.EMBEDDING_MODEL = "fake-embedding-model"
    # the fake endpoint serves MiniLM vectors, so it gets MiniLM's thresholds
    settings.MEMORY_THRESHOLDS = {
        **settings.MEMORY_THRESHOLDS,
        "fake-embedding-model": {"write_gate": 0.4, "recall_floor": 0.3},
    }
    fake_llm.facts("The user lives in Lisbon.")
    assert remember(alice, user_turn(alice, "I live in Lisbon.")).stored == 1
    memory = Memory.objects.get(user=alice)
    assert memory.embedding_model == "fake-embedding-model"
    assert any(r["path"].endswith("/embeddings") for r in fake_llm.requests)
    # one batched embedding call for the turn and its fact
    assert sum(r["path"].endswith("/embeddings") for r in fake_llm.requests) == 1

    assert [r.memory.pk for r in recall(alice, "Which city do I live in?")] == [memory.pk]
    settings.EMBEDDING_MODEL = "local"
    assert recall(alice, "Which city do I live in?", min_sim=-1.0) == []


def test_the_multilingual_local_embedder_puts_a_fact_near_the_turn_in_another_language(settings):
    settings.EMBEDDING_MODEL = "local-multilingual"
    embedder = get_embedder()
    vectors = embedder.embed(["Soy arquitecta.", "The user is an architect.", "The user lives in Lisbon."])
    assert embedder.name == "use-multilingual-v3" and vectors.shape == (3, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    architect, lisbon = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert architect > 0.4 > lisbon
