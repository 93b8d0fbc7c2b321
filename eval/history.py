"""The chat history reference (chat.history) on a labelled set.

Each of a user's turns is said in a conversation of its own and indexed as the memory worker
indexes it; each probe is then asked in a new conversation, through the read path's need
decision. A probe's evidence is the turns that state the facts it expects. Figures, at each
floor: the share of probes with expectations that get an evidence turn among their excerpts, the
share of the other probes (general questions, statements about something new, how-tos) that get
any excerpt at all, and the share of excerpts given that are evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model

from chat.history import history_nearest, turn_index
from chat.models import Turn
from chat.services import conversation_create, turn_append
from eval.quality import USERNAME_PREFIX
from eval.suite import Suite
from memoryapp.embeddings import get_embedder
from memoryapp.read.need import NOT_NEEDED
from memoryapp.read.recall import read_turn
from memoryapp.thresholds import history_floor


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
    need: str = ""  # the read path's decision (memoryapp.read.need)
    # each excerpt the probe would be given with no floor: (similarity, is evidence)
    excerpts: list[tuple[float, bool]] = field(default_factory=list)

    def given(self, floor: float) -> list[bool]:
        return [evidence for similarity, evidence in self.excerpts if similarity >= floor]


@dataclass
class HistoryReport:
    embedding_model: str
    floor: float
    k: int
    probes: list[ProbeExcerpts] = field(default_factory=list)

    def at(self, floor: float) -> dict[str, float | int]:
        expecting = [p for p in self.probes if p.expects]
        others = [p for p in self.probes if not p.expects]
        given = [evidence for p in self.probes for evidence in p.given(floor)]
        found = sum(1 for p in expecting if any(p.given(floor)))
        intruded = sum(1 for p in others if p.given(floor))
        recall = found / len(expecting) if expecting else 0.0
        precision = sum(given) / len(given) if given else 1.0
        return {
            "floor": floor,
            "evidence found": round(recall, 3),
            "excerpts that are evidence": round(precision, 3),
            "f1": round(2 * precision * recall / (precision + recall), 3) if precision + recall else 0.0,
            "probes needing nothing given an excerpt": round(intruded / len(others), 3) if others else 0.0,
            "probes": len(self.probes),
        }

    def sweep(self) -> list[dict[str, float | int]]:
        return [self.at(floor) for floor in FLOORS]


def run_history(suite: Suite, *, name: str) -> HistoryReport:
    """Index each user's turns, then look up each probe (see the module docstring)."""
    embedder = get_embedder()
    report = HistoryReport(
        embedding_model=embedder.name, floor=history_floor(embedder.name), k=settings.CHAT_HISTORY_EXCERPTS
    )
    user_model = get_user_model()
    for suite_user in suite.users:
        user = user_model.objects.create_user(username=f"{USERNAME_PREFIX}{name}-history-{suite_user.name}")
        evidence_of: dict[int, set[str]] = {}
        vectors = embedder.embed([turn.text for turn in suite_user.turns])
        for said, vector in zip(suite_user.turns, vectors, strict=True):
            turn = turn_append(
                user=user, conversation=conversation_create(user=user), role=Turn.Role.USER, content=said.text
            )
            index_as_worker(user=user, turn=turn, vector=vector, embedding_model=embedder.name)
            evidence_of[turn.pk] = set(said.facts) | set(said.optional)
        for probe in suite_user.probes:
            read = read_turn(user, probe.text)
            result = ProbeExcerpts(
                text=probe.text, kind=probe.kind, lang=probe.lang, expects=bool(probe.expect), need=read.need
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
