from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.test import Client

from tests.fake_openai import FakeOpenAI
from tests.workers import worker_settings

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Password hashing strength is not under test; PBKDF2 would cost ~0.3 s per user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _memory_writes_in_the_request(settings):
    # Where a worker is not the subject, the write runs in the request after commit, so a test
    # sees its result at once; tests/chat/test_worker.py runs a real worker process.
    settings.MEMORY_TASK_BACKEND = "immediate"


@pytest.fixture
def make_user(django_user_model):
    def make(username: str, **extra):
        return django_user_model.objects.create_user(username=username, password=f"{username}-password-1", **extra)

    return make


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob")


@pytest.fixture
def alice_client(alice) -> Client:
    """A browser session signed in as alice (the same without JavaScript, or with htmx headers)."""
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(bob) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(bob)
    return client


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True, is_superuser=True)


@pytest.fixture(scope="session")
def fake_openai_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(fake_openai_server: FakeOpenAI, settings) -> Iterator[FakeOpenAI]:
    """Point the app's language model at the fake endpoint (embeddings stay local).

    The model extracts from every turn here, so the answer a test scripts is the one gated;
    tests/memoryapp/test_grammar_first.py covers the default, where the parse of an English
    turn comes first, and tests/memoryapp/test_english_reading.py the English reading of a
    turn in another language, which is off here for the same reason."""
    fake_openai_server.chat_queue.clear()
    fake_openai_server.requests.clear()
    fake_openai_server.embedding_failure = None
    fake_openai_server.embedding_failure_after = 0
    settings.OPENAI_BASE_URL = fake_openai_server.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.LLM_ENABLED = True
    settings.LLM_TIMEOUT_SECONDS = 2.0
    settings.LLM_MAX_RETRIES = 0
    settings.MEMORY_GRAMMAR_FIRST = False
    settings.MEMORY_READ_IN_ENGLISH = False
    yield fake_openai_server


@pytest.fixture
def worker_env(settings) -> dict[str, str]:
    """Memory writes queued for a real worker process (tests/workers.py), and its environment."""
    return worker_settings(settings)
