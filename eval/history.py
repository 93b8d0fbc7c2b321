"""The chat history reference (chat.history) on a labelled set.

Each of a user's turns is said in a conversation of its own and indexed as the memory worker
indexes it; each probe is then asked in a new conversation, through the read path's need
decision. The suite's `history` cases come after: past turns that tell an event rather than a
durable fact, and probes that ask after one (or that state something beside one and need
nothing). A probe's evidence is the turns that state the facts or events it expects. Figures, at
each pair of floors (a question's and a request's, chat.history.excerpt_floor): the share of
probes with expectations that get an evidence turn among their excerpts, the share of the other
probes (general questions, statements about something new, how-tos) that get any excerpt at all,
and the share of excerpts given that are evidence. The sweep gives them for questions and for
requests apart, each over its own floor; a turn that only tells something is given nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model

from chat.history import QUESTION, REQUEST, STATEMENT, history_nearest, turn_form, turn_index
from chat.models import Turn
from chat.services import conversation_create, turn_append
from eval.quality import USERNAME_PREFIX
from eval.suite import Suite
from memoryapp.embeddings import get_embedder
from memoryapp.read.need import NOT_NEEDED, asks_for_profile, turn_need
from memoryapp.read.recall import TurnRead, memories_for_turn, read_turn
from memoryapp.thresholds import history_floor, history_question_floor

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def chat_read(user: User, text: str, vector: np.ndarray, embedding_model: str, *, k: int) -> TurnRead:
    """A chat turn's read path with a benchmark's longer list: its k nearest memories (as
    `nearest_for_turn` finds them) and the need and profile decisions that `history_for_turn` reads,
    so that a benchmark asks for past turns exactly as a reply does."""
    need = turn_need(text, vector, embedding_model)
    recalled, _ = memories_for_turn(user, text, vector, embedding_model, k=k, need=need)
    return TurnRead(recalled, vector, embedding_model, need=need, profile=asks_for_profile(vector, embedding_model))


def index_as_worker(*, user, turn: Turn, vector, embedding_model: str) -> None:
    """Mark a turn's memory write done and index it for the chat history reference, as the memory
    worker does once the write has run (chat.tasks), for evaluations that call `remember` directly."""
    Turn.objects.filter(pk=turn.pk, user=user).update(memory_state=Turn.MemoryState.DONE)
    turn_index(user=user, turn=turn, vector=vector, embedding_model=embedding_model)


FLOORS = tuple(round(0.20 + 0.02 * i, 2) for i in range(21))  # 0.20 .. 0.60


@dataclass
class ProbeExcerpts:
    text: str
    kind: str
    lang: str
    expects: bool
    form: str  # chat.history.turn_form: a question's excerpts clear the question floor, a statement gets none
    need: str = ""  # the read path's decision (memoryapp.read.need)
    # each excerpt the probe would be given with no floor: (similarity, is evidence)
    excerpts: list[tuple[float, bool]] = field(default_factory=list)

    def given(self, floor: float) -> list[bool]:
        if self.form == STATEMENT:
            return []
        return [evidence for similarity, evidence in self.excerpts if similarity >= floor]


def _figures(probes: list[ProbeExcerpts], given: dict[int, list[bool]]) -> dict[str, float | int]:
    """The figures for these probes, `given[i]` saying which of probe i's excerpts are evidence."""
    expecting = [i for i, p in enumerate(probes) if p.expects]
    others = [i for i, p in enumerate(probes) if not p.expects]
    excerpts = [evidence for i in range(len(probes)) for evidence in given[i]]
    found = sum(1 for i in expecting if any(given[i]))
    intruded = sum(1 for i in others if given[i])
    recall = found / len(expecting) if expecting else 0.0
    precision = sum(excerpts) / len(excerpts) if excerpts else 1.0
    return {
        "evidence found": round(recall, 3),
        "excerpts that are evidence": round(precision, 3),
        "f1": round(2 * precision * recall / (precision + recall), 3) if precision + recall else 0.0,
        "probes needing nothing given an excerpt": round(intruded / len(others), 3) if others else 0.0,
        "probes": len(probes),
        "probes needing nothing": len(others),
    }


@dataclass
class HistoryReport:
    embedding_model: str
    floor: float  # for a turn that states or requests something
    question_floor: float  # for a question
    k: int
    probes: list[ProbeExcerpts] = field(default_factory=list)

    def at(self, floor: float, question_floor: float) -> dict[str, float | int]:
        given = {i: p.given(question_floor if p.form == QUESTION else floor) for i, p in enumerate(self.probes)}
        return {"floor": floor, "question floor": question_floor, **_figures(self.probes, given)}

    def best(self, most_intruded: float = 0.02) -> dict[str, float | int]:
        """The pair of floors with the best F1 of evidence found and excerpts that are evidence at
        which at most `most_intruded` of the probes needing nothing get an excerpt (the rule the
        model's `history_floor` and `history_question_floor` are set by)."""
        pairs = [self.at(floor, question_floor) for floor in FLOORS for question_floor in FLOORS]
        allowed = [pair for pair in pairs if pair["probes needing nothing given an excerpt"] <= most_intruded]
        return max(allowed or pairs, key=lambda pair: (pair["f1"], pair["floor"], pair["question floor"]))

    def sweep(self) -> dict[str, list[dict[str, float | int]]]:
        """The figures of the questions and of the requests apart, each at every floor (a turn
        that only tells something is given nothing at any floor)."""
        sweeps = {}
        for name, form in (("questions", QUESTION), ("requests", REQUEST)):
            probes = [p for p in self.probes if p.form == form]
            sweeps[name] = [
                {"floor": floor, **_figures(probes, {i: p.given(floor) for i, p in enumerate(probes)})}
                for floor in FLOORS
            ]
        return sweeps


def run_history(suite: Suite, *, name: str) -> HistoryReport:
    """Index each user's turns, then look up each probe (see the module docstring)."""
    embedder = get_embedder()
    report = HistoryReport(
        embedding_model=embedder.name,
        floor=history_floor(embedder.name),
        question_floor=history_question_floor(embedder.name),
        k=settings.CHAT_HISTORY_EXCERPTS,
    )
    user_model = get_user_model()
    for suite_user in suite.users:
        user = user_model.objects.create_user(username=f"{USERNAME_PREFIX}{name}-history-{suite_user.name}")
        said = [(turn.text, {*turn.facts, *turn.optional}) for turn in suite_user.turns]
        said += [(turn.text, set(turn.events)) for turn in suite_user.past]
        evidence_of: dict[int, set[str]] = {}
        vectors = embedder.embed([text for text, _ in said])
        for (text, keys), vector in zip(said, vectors, strict=True):
            turn = turn_append(
                user=user, conversation=conversation_create(user=user), role=Turn.Role.USER, content=text
            )
            index_as_worker(user=user, turn=turn, vector=vector, embedding_model=embedder.name)
            evidence_of[turn.pk] = keys
        for probe in (*suite_user.probes, *suite_user.recollections):
            read = read_turn(user, probe.text)
            result = ProbeExcerpts(
                text=probe.text,
                kind=probe.kind,
                lang=probe.lang,
                expects=bool(probe.expect),
                form=turn_form(probe.text),
                need=read.need,
            )
            if read.vector is not None and not read.profile and read.need != NOT_NEEDED:
                found = history_nearest(
                    user=user,
                    text=probe.text,
                    vector=read.vector,
                    embedding_model=embedder.name,
                    exclude_conversation_id=None,
                    k=report.k,
                    min_sim=-1.0,
                )
                result.excerpts = [
                    (excerpt.similarity, bool(evidence_of.get(excerpt.turn.pk, set()) & set(probe.expect)))
                    for excerpt in found
                ]
            report.probes.append(result)
    return report
