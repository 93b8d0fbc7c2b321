"""The memory read and write of a chat turn on tables hash-partitioned by owner
(core.partitioning): which partitions each statement's plan reads.

The same code sends the same statements as on flat tables; what partitioning changes is their
plans. A statement that names its owner is planned on that owner's partition alone; one that
names a row by id only (Django's save and delete) is planned on every partition's index on id.
Each statement of one turn's append to the log, its `remember` and one `read_turn` is captured
as sent and explained (without running it again), and the partitions named in its plan are
counted per table. The timings of
the same paths are bench.recall_bench's and bench.write_bench's, run on a partitioned database.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import override_settings

from bench.extractor import FIXED_EXTRACTOR, TURNS
from chat.models import Turn
from chat.services import conversation_create, turn_append
from core.distribution import DISTRIBUTED
from core.partitioning import leaves, partitioned_tables
from memoryapp.read.recall import read_turn
from memoryapp.write import remember

_LEAF = re.compile(r"\b([a-z_]+)_p\d\d\b")
_PLANNED = ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE")
# The question a turn asks of what was just written.
_QUESTION = "What do I do for a living?"


@dataclass(frozen=True)
class StatementPlan:
    """One statement as sent (its first words) and, per partitioned table its plan reads, how many
    of that table's partitions."""

    statement: str
    partitions: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {"statement": self.statement, "partitions": self.partitions}


def _captured(call: Callable[[], Any]) -> list[tuple[str, Any]]:
    statements: list[tuple[str, Any]] = []

    def capture(execute, sql, params, many, context):  # noqa: ANN001 - Django's wrapper signature
        statements.append((sql, params[0] if many and params else params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        call()
    return statements


def plans_of(call: Callable[[], Any]) -> list[StatementPlan]:
    """Every statement `call` sends that the planner plans, with the partitions its plan reads."""
    parents = partitioned_tables()
    plans = []
    for sql, params in _captured(call):
        if not sql.lstrip().upper().startswith(_PLANNED):
            continue
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + sql, params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        read: dict[str, set[str]] = {}
        for match in _LEAF.finditer(plan):
            if match.group(1) in parents:
                read.setdefault(match.group(1), set()).add(match.group(0))
        head = " ".join(sql.split())[:90]
        plans.append(StatementPlan(head, {table: len(names) for table, names in sorted(read.items())}))
    return plans


def measure_partitioned_plans() -> dict[str, Any]:
    """One user's turns, each written; then the plans of one more turn's append to the log, its
    memory write, and one read."""
    assert set(DISTRIBUTED) <= partitioned_tables(), "the tables are not partitioned"
    user = get_user_model().objects.create(username="bench-partitioned", password="!")  # noqa: S106
    conversation = conversation_create(user=user, title="bench")
    with override_settings(MEMORY_EXTRACTOR=FIXED_EXTRACTOR):
        for content in TURNS[1:]:
            remember(user, turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=content))
        appended: list[Turn] = []
        log = plans_of(
            lambda: appended.append(
                turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=TURNS[0])
            )
        )
        write = plans_of(lambda: remember(user, appended[0]))
    read = plans_of(lambda: read_turn(user, _QUESTION))
    return {
        "partitions": len(leaves("memoryapp_memory")),
        "log": [plan.as_dict() for plan in log],
        "write": [plan.as_dict() for plan in write],
        "read": [plan.as_dict() for plan in read],
    }
