"""The memory page and `GET /api/memories/` for one user with many memories: time and SQL queries.

Requests go through Django's test `Client` (the whole middleware stack, session login,
view, template or serializer; no HTTP server or socket), logged in with a session as in
a browser. Each URL is requested once under `CaptureQueriesContext` to count its queries,
then timed over `requests` further requests without the capture. Two users in the same
database: a small one and a large one, each with every memory pointing at a source turn
(so each row renders its provenance link). The query count must be the same for the first
and a deep page and for both users: the page never costs a query per row or per page.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone
from tqdm import tqdm

from bench.seed import MemoryRow, copy_memories, embedder_space
from bench.synthetic import percentiles, user_vectors
from chat.models import Conversation, Turn
from memoryapp.models import Memory

PAGE_SIZE = 25  # the page's and the API's page size (memoryapp.views.PAGE_SIZE, REST_FRAMEWORK)
SOURCE_TURNS = 50  # turns in each user's source conversation; memories cycle over them
HOST = "127.0.0.1"
_ROW_ID = re.compile(r'<li class="memory" id="memory-(\d+)"')


@dataclass
class PageTiming:
    user_memories: int
    endpoint: str
    page: int
    url: str
    status: int
    rows: int
    queries: int
    time: dict[str, float] = field(default_factory=dict)
    ids: list[int] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "ids"}


def seed_page_user(name: str, memories: int, *, seed: int = 6, progress: bool = True) -> Any:
    """A user with `memories` live memories, newest first by one second each, from one conversation."""
    user = get_user_model().objects.create(username=name, password="!")  # noqa: S106 - unusable
    conversation = Conversation.objects.create(user=user, title="Where these memories came from")
    turns = Turn.objects.bulk_create(
        Turn(conversation=conversation, user=user, seq=seq, role=Turn.Role.USER, content=f"Turn {seq} of {name}.")
        for seq in range(1, SOURCE_TURNS + 1)
    )
    vectors = user_vectors(seed, len(name), memories, embedder_space()[1])
    start = timezone.now() - timedelta(seconds=memories)

    def rows() -> Iterator[MemoryRow]:
        for position in range(memories):
            turn = turns[position % SOURCE_TURNS]
            text = f"The user mentioned item number {position} of their list, about {position % 97} things."
            yield MemoryRow(
                user.pk,
                text,
                vectors[position],
                f"{user.pk:032x}{position:032x}",
                start + timedelta(seconds=position),
                conversation.pk,
                turn.pk,
            )

    copy_memories(rows(), total=memories, desc=f"pages: seed {memories:,}", progress=progress)
    return user


def expected_ids(user: Any, page: int) -> list[int]:
    """The ids a page must show: the user's live memories, newest first, sliced in Python."""
    ordered = list(
        Memory.objects.filter(user=user, deleted_at__isnull=True)
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)
    )
    return ordered[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]


def _page_ids(response: Any, endpoint: str) -> list[int]:
    if endpoint == "api":
        return [row["id"] for row in response.json()["results"]]
    return [int(pk) for pk in _ROW_ID.findall(response.content.decode())]


def _get(client: Client, url: str) -> Any:
    return client.get(url, HTTP_HOST=HOST)


def measure_user(
    client: Client, user: Any, memories: int, pages: list[int], *, requests: int, progress: bool
) -> list[PageTiming]:
    client.force_login(user)
    timings = []
    for endpoint, base in (("page", reverse("memoryapp:memory_list")), ("api", reverse("memory_api:memory_list"))):
        for page in pages:
            url = base if page == 1 else f"{base}?page={page}"
            _get(client, url)  # warm: templates, serializers, plans, caches
            with CaptureQueriesContext(connection) as queries:
                response = _get(client, url)
            count = len(queries)  # now: a later request resets the connection's query log
            samples = []
            for _ in tqdm(range(requests), desc=f"pages: {endpoint} {page}", leave=False, disable=not progress):
                start = time.perf_counter()
                _get(client, url)
                samples.append(time.perf_counter() - start)
            timings.append(
                PageTiming(
                    user_memories=memories,
                    endpoint=endpoint,
                    page=page,
                    url=url,
                    status=response.status_code,
                    rows=len(_page_ids(response, endpoint)) if response.status_code == 200 else 0,
                    queries=count,
                    time=percentiles(samples),
                    ids=_page_ids(response, endpoint) if response.status_code == 200 else [],
                )
            )
    client.logout()
    return timings


@dataclass
class PagesResult:
    requests: int
    timings: list[PageTiming]
    rows_exact: bool

    @property
    def query_counts(self) -> dict[str, list[int]]:
        """The distinct query counts per endpoint, over every user and page."""
        return {e: sorted({t.queries for t in self.timings if t.endpoint == e}) for e in ("page", "api")}

    @property
    def constant_queries(self) -> bool:
        return all(len(counts) == 1 for counts in self.query_counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "client": "django.test.Client, session login, DEBUG off",
            "requests": self.requests,
            "page_size": PAGE_SIZE,
            "rows_exact": self.rows_exact,
            "query_counts": self.query_counts,
            "constant_queries": self.constant_queries,
            "timings": [t.as_dict() for t in self.timings],
        }


def measure_pages(*, large: int = 10_000, small: int = 100, requests: int = 50, progress: bool = True) -> PagesResult:
    """Seed the two users in the current database and time their first, a deep and the last page."""
    assert not Memory.objects.exists(), "the pages benchmark needs a database of its own"
    users = {
        small: seed_page_user("bench-pages-small", small, progress=progress),
        large: seed_page_user("bench-pages-large", large, progress=progress),
    }
    last = {count: -(-count // PAGE_SIZE) for count in users}
    deep = min(200, max(1, last[large] // 2))  # page 200 of 400 at 10,000 memories
    timings: list[PageTiming] = []
    # The test Client's default host is "testserver"; requests name the loopback address instead.
    with override_settings(ALLOWED_HOSTS=[HOST]):
        client = Client()
        for count, user in users.items():
            pages = sorted({1, deep if deep < last[count] else last[count], last[count]})
            timings += measure_user(client, user, count, pages, requests=requests, progress=progress)
    exact = all(t.status == 200 and t.ids == expected_ids(users[t.user_memories], t.page) for t in timings)
    return PagesResult(requests, timings, exact)
