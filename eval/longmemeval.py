"""LongMemEval through the real write and read paths: is a question's evidence in the top 10?

Each question has its own user and history: every session of its haystack becomes a conversation
with the session's date, and each user turn goes through `remember` and is indexed for the chat
history reference as the memory worker does. The turns' table is then analyzed, as autovacuum
keeps its statistics (they tell which words are too common to match past turns by), and the
question is asked in a new conversation.
Its evidence is the user turns marked `has_answer`; a question whose evidence is only in the
assistant's turns (the product indexes the user's own words only) or that has none (abstention)
is skipped. Reported per question type, the share of questions with an evidence turn:
- in the provenance of the top 10 memories (the fact store alone, its floors applied);
- among the top 10 past turns (the chat history reference alone, its floor applied);
- in the combined read path's top 10: memories and past turns taken in turn (memory 1, turn 1,
  memory 2, ...), as a reply is given both;
- and, for reference, among the 10 past turns nearest by embedding alone, with no floor.

The data set is not shipped: pass a path, either LongMemEval's JSON list (`longmemeval_s.json`)
or a folder of one question per file (as `evaluations/data/lme_jsons/` of hussainzs/Memoria).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection
from tqdm import tqdm

from chat.history import history_for_turn, history_nearest
from chat.models import Turn
from chat.services import conversation_create, turn_append
from core.llm import ModelUnavailable
from eval.history import chat_read, index_as_worker
from eval.locomo import interleaved
from eval.quality import USERNAME_PREFIX
from memoryapp.embeddings import get_embedder
from memoryapp.models import MemoryEvidence
from memoryapp.write import remember

K = 10
WAYS = ("memories", "past turns", "combined", "nearest turns, no floor")


@dataclass
class TypeFigures:
    questions: int = 0
    found: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WAYS, 0))

    def share(self, way: str) -> float:
        return self.found[way] / self.questions if self.questions else 0.0


@dataclass
class LongMemEvalReport:
    questions: int = 0
    skipped: int = 0
    turns: int = 0
    extraction_failures: int = 0
    types: dict[str, TypeFigures] = field(default_factory=dict)

    def rows(self) -> list[dict]:
        everything = TypeFigures()
        for figures in self.types.values():
            everything.questions += figures.questions
            for way in WAYS:
                everything.found[way] += figures.found[way]
        return [
            {"type": name, "questions": figures.questions, **{way: round(figures.share(way), 3) for way in WAYS}}
            for name, figures in [*sorted(self.types.items()), ("all", everything)]
        ]


def load_questions(path: Path | str) -> list[dict]:
    """The questions of a LongMemEval JSON list, or of a folder with one question per JSON file."""
    path = Path(path)
    if path.is_dir():
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]
    return json.loads(path.read_text(encoding="utf-8"))


def _usable(question: dict) -> bool:
    """A question with evidence in the user's own turns."""
    return any(t.get("has_answer") and t.get("role") == "user" for s in question["haystack_sessions"] for t in s)


def sample(questions: Iterable[dict], n: int | None) -> list[dict]:
    """`n` usable questions, the same every run: ordered by a hash of their id, so every question
    type is drawn from, whatever the order of the file."""
    usable = [q for q in questions if _usable(q)]
    usable.sort(key=lambda q: hashlib.sha256(q["question_id"].encode()).hexdigest())
    return usable[:n] if n else usable


def _when(raw: str | None) -> datetime | None:
    """ "2023/05/21 (Sun) 19:50" as an aware datetime."""
    if not raw:
        return None
    try:
        return datetime.strptime(raw.split(" (")[0] + raw.split(")")[-1], "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
    except ValueError:
        return None


def run_longmemeval(path: Path | str, *, samples: int | None = None, progress: bool = False) -> LongMemEvalReport:
    """See the module docstring."""
    questions = sample(load_questions(path), samples)
    report = LongMemEvalReport()
    embedder = get_embedder()
    user_model = get_user_model()
    bar = tqdm(
        total=len(questions), desc="LongMemEval questions", unit="question", disable=not progress, file=sys.stderr
    )
    for n, question in enumerate(questions):
        bar.update()
        user = user_model.objects.create_user(username=f"{USERNAME_PREFIX}lme-{n}-{question['question_id']}")
        evidence: set[int] = set()
        for session, raw_date in zip(question["haystack_sessions"], question["haystack_dates"], strict=False):
            when = _when(raw_date)
            conversation = conversation_create(user=user, title="longmemeval")
            said = [t for t in session if t.get("role") == "user" and (t.get("content") or "").strip()]
            vectors = embedder.embed([t["content"] for t in said]) if said else []
            for item, vector in zip(said, vectors, strict=True):
                turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=item["content"])
                if when is not None:
                    Turn.objects.filter(pk=turn.pk, user=user).update(created_at=when)
                    turn.created_at = when
                try:
                    remember(user, turn, turn_vector=vector)
                except ModelUnavailable:
                    report.extraction_failures += 1
                index_as_worker(user=user, turn=turn, vector=vector, embedding_model=embedder.name)
                report.turns += 1
                if item.get("has_answer"):
                    evidence.add(turn.pk)
        with connection.cursor() as cursor:  # the text search statistics, as autovacuum keeps them
            cursor.execute(f"ANALYZE {Turn._meta.db_table}")
        probe = question["question"]
        vector = embedder.embed([probe])[0]
        asked_in = conversation_create(user=user, title="question")
        read = chat_read(user, probe, vector, embedder.name, k=K)
        recalled = read.recalled
        memories = [
            set(
                MemoryEvidence.objects.filter(memory_id=item.memory.pk, user=user)
                .exclude(turn_id=None)
                .values_list("turn_id", flat=True)
            )
            for item in recalled
        ]
        turns = [
            {excerpt.turn.pk}
            for excerpt in history_for_turn(user=user, text=probe, read=read, conversation=asked_in, k=K)
        ]
        nearest = [
            {excerpt.turn.pk}
            for excerpt in history_nearest(
                user=user,
                text="",
                vector=vector,
                embedding_model=embedder.name,
                exclude_conversation_id=asked_in.pk,
                k=K,
                min_sim=-1.0,
            )
        ]
        figures = report.types.setdefault(question["question_type"], TypeFigures())
        figures.questions += 1
        report.questions += 1
        for way, found in (
            ("memories", set().union(*memories[:K])),
            ("past turns", set().union(*turns[:K])),
            ("combined", interleaved(memories, turns, K)),
            ("nearest turns, no floor", set().union(*nearest[:K])),
        ):
            figures.found[way] += bool(found & evidence)
    bar.close()
    return report
