"""Fuzz every operation of the OpenAPI schema over real HTTP with every check schemathesis has: no
5xx, answers match the schema, schema-valid requests are accepted and invalid ones refused, nothing
answers without credentials, a deleted resource stays gone.

Schemathesis loads the schema the app serves at /api/schema/ from Django's live server and
generates valid and invalid requests for each operation, as a real user with an API token whose
account holds a conversation, turns and memories written through the services. Half of the
generated requests aim at that user's real conversation, turn and memory ids, so the fuzz gets
past the 404 of a random id into the views themselves. The model side is offline (the default).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import hypothesis
import pytest
import requests
import schemathesis
from django.urls import Resolver404, resolve
from hypothesis import HealthCheck, Phase, given
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS as CHECK_REGISTRY
from schemathesis.checks import load_all_checks, not_a_server_error
from schemathesis.core.failures import FailureGroup

from chat.models import Conversation
from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory
from memoryapp.services import memory_soft_delete
from memoryapp.write import remember

pytestmark = pytest.mark.django_db(transaction=True)

# Per operation and generation mode; 22 operations x 2 modes x 12 stays well under a minute here.
EXAMPLES = 12
load_all_checks()
CHECKS = CHECK_REGISTRY.get_all()
# Every check, not only "no server error": the run fails if an upgrade drops one of these.
ESSENTIAL_CHECKS = {
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "ignored_auth",
    "use_after_free",
}
# An id that the URL pattern itself refuses (`/api/memories/0.3/`) never reaches the API: Django
# answers its plain HTML 404. Such requests are held to "no 5xx" only.
# Answers no schema can predict ("METHOD path -> status: check"): a well-formed token request with a
# wrong username or password is a 400 (DRF's convention), and the fuzz cannot guess a password.
KNOWN_SCHEMA_GAPS: set[str] = {"POST /api/auth/token/ -> 400: ST202 Schema-valid request rejected"}
SAID = [
    "Call me Priya, and I'm always in UTC.",
    "I live in Lisbon.",
    "I'm allergic to peanuts.",
    "What time is it in Tokyo?",
]


@dataclass(frozen=True)
class Seeded:
    token: str
    conversation: Conversation
    memory_ids: list[int]
    deleted_id: int


@pytest.fixture
def seeded(make_user, settings) -> Seeded:
    """A user with a token, a conversation of turns and replies, live memories and a deleted one."""
    # The fuzz sends hundreds of writes in seconds; the limits themselves are tested elsewhere.
    settings.RATE_LIMITS = {
        scope: (1_000_000, period, what) for scope, (_, period, what) in settings.RATE_LIMITS.items()
    }
    settings.LLM_ENABLED = False
    user = make_user("fuzzer")
    conversation = conversation_create(user=user, title="fuzzed")
    for content in SAID:
        turn = chat_user_turn(user=user, conversation=conversation, content=content)
        remember(user, turn)
        chat_reply(user=user, user_turn=turn)
    memory_ids = list(Memory.objects.filter(user=user).order_by("pk").values_list("pk", flat=True))
    assert len(memory_ids) >= 3
    memory_soft_delete(user=user, memory_id=memory_ids[-1])
    token = Token.objects.create(user=user)
    return Seeded(token=token.key, conversation=conversation, memory_ids=memory_ids[:-1], deleted_id=memory_ids[-1])


def _routed(url: str) -> bool:
    try:
        resolve(unquote(urlsplit(url).path))
    except Resolver404:
        return False
    return True


def _real_path_parameters(operation, seeded: Seeded) -> st.SearchStrategy[dict] | None:
    names = {p.name for p in operation.path_parameters}
    if not names:
        return None
    real = {
        "public_id": st.just(seeded.conversation.public_id),
        "seq": st.sampled_from([1, 2, 3, 4, 7, 8]),  # user turns are odd, replies even
        "memory_id": st.sampled_from([*seeded.memory_ids, seeded.deleted_id]),
    }
    return st.fixed_dictionaries({name: real[name] for name in names})


def _strategy(operation, seeded: Seeded) -> st.SearchStrategy:
    modes = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    generated = [operation.as_strategy(generation_mode=mode) for mode in modes]
    real = _real_path_parameters(operation, seeded)
    if real is None:
        return st.one_of(*generated)
    aimed = [
        real.flatmap(lambda params, m=mode: operation.as_strategy(generation_mode=m, path_parameters=params))
        for mode in modes
    ]
    return st.one_of(*generated, *aimed)


def test_every_operation_answers_without_a_server_error_and_as_its_schema_says(live_server, seeded):
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    headers = {"Authorization": f"Token {seeded.token}"}
    session = requests.Session()
    failures: dict[str, list[str]] = {}
    examples: Counter[str] = Counter()
    unrouted: Counter[str] = Counter()
    statuses: dict[str, Counter[int]] = {}
    started = time.monotonic()

    def fuzz(operation) -> None:
        label = operation.label

        @hypothesis.settings(
            max_examples=2 * EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
        @given(case=_strategy(operation, seeded))
        def run(case) -> None:
            examples[label] += 1
            response = case.call(base_url=live_server.url, session=session, headers=headers, timeout=30)
            statuses.setdefault(label, Counter())[response.status_code] += 1
            routed = _routed(response.request.url)
            unrouted[label] += not routed
            checks = CHECKS if routed else [not_a_server_error]
            try:
                case.validate_response(response, checks=checks, headers=headers)
            except FailureGroup as group:
                for failure in group.exceptions:
                    key = f"{label} -> {response.status_code}: {failure.code} {failure.title}"
                    if key in KNOWN_SCHEMA_GAPS:
                        continue
                    failures.setdefault(key, []).append(f"{failure.message[:600]}\n{case.as_curl_command()}")

        run()

    operations = [result.ok() for result in schema.get_all_operations()]
    # Deletes go after everything that reads or writes what they delete, and revoking the token, which
    # ends the run's credentials, goes last.
    operations.sort(
        key=lambda operation: (operation.label == "DELETE /api/auth/token/", operation.method.upper() == "DELETE")
    )
    for operation in operations:
        fuzz(operation)

    elapsed = time.monotonic() - started
    summary = "\n".join(
        f"{label}: {examples[label]} requests ({unrouted[label]} unrouted), {dict(statuses[label])}"
        for label in sorted(examples)
    )
    print(f"\nfuzzed {len(operations)} operations in {elapsed:.1f} s\n{summary}")
    assert len(operations) == 22
    assert ESSENTIAL_CHECKS <= {check.__name__ for check in CHECKS}
    assert all(examples[op.label] >= EXAMPLES for op in operations), summary
    assert not failures, "\n".join(f"{key} (x{len(found)})\n  {found[0]}" for key, found in sorted(failures.items()))
