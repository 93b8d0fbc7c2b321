"""LoCoMo through the real write and read paths: evidence-turn recall per question category.

The dataset is not shipped (its licence is CC BY-NC); pass the path of `locomo10.json`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model

from chat.models import Turn
from chat.services import conversation_create, turn_append
from eval.quality import USERNAME_PREFIX
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.selectors import recall
from memoryapp.services import remember

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LOCOMO_KS = (5, 10)
_DIA_ID = re.compile(r"D(\d+):(\d+)")


def locomo_evidence_ids(raw: object) -> list[str]:
    """Evidence ids as "D<session>:<turn>"; malformed entries such as "D8:6; D9:17" are split,
    and anything without an id is skipped."""
    items = raw if isinstance(raw, list) else [raw]
    ids: list[str] = []
    for item in items:
        if isinstance(item, str):
            ids.extend(f"D{s}:{t}" for s, t in _DIA_ID.findall(item))
    return list(dict.fromkeys(ids))


@dataclass
class LocomoCategory:
    questions: int = 0
    evidence: int = 0
    found: dict[int, int] = field(default_factory=lambda: dict.fromkeys(LOCOMO_KS, 0))
    other_speaker_recalled: int = 0

    def evidence_recall(self, k: int) -> float:
        return self.found[k] / self.evidence if self.evidence else 0.0


@dataclass
class LocomoReport:
    samples: int = 0
    turns: int = 0
    memories: int = 0
    skipped_questions: int = 0
    categories: dict[int, LocomoCategory] = field(default_factory=dict)


def _locomo_sessions(conversation: dict) -> list[list[dict]]:
    numbers = sorted(int(key.split("_")[1]) for key in conversation if re.fullmatch(r"session_\d+", key))
    return [conversation[f"session_{n}"] for n in numbers if isinstance(conversation[f"session_{n}"], list)]


def _locomo_subject(question: str, speakers: list[str], evidence: list[str], speaker_of: dict[str, str]) -> str | None:
    """The speaker a question is about: the one it names, else the one who said most of the evidence."""
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", question, re.I)]
    if len(named) == 1:
        return named[0]
    said = Counter(speaker_of[e] for e in evidence if e in speaker_of)
    return said.most_common(1)[0][0] if said else None


def run_locomo(path: Path | str) -> LocomoReport:
    """Each speaker of each sample becomes a user; their turns go through `remember` in order,
    and each question is a probe for the speaker it is about. Reports, per category, the share
    of evidence turns found in the provenance of the top-k recalled memories, and for the
    adversarial category how often a memory sourced from the other speaker was recalled."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    report = LocomoReport()
    user_model = get_user_model()
    for n, sample in enumerate(data):
        conversation = sample["conversation"]
        speakers = [conversation["speaker_a"], conversation["speaker_b"]]
        users = {
            name: user_model.objects.create_user(username=f"{USERNAME_PREFIX}locomo-{n}-{i}")
            for i, name in enumerate(speakers)
        }
        threads = {name: conversation_create(user=user, title=f"locomo {n}") for name, user in users.items()}
        dia_of_turn: dict[int, str] = {}
        speaker_of: dict[str, str] = {}
        for session in _locomo_sessions(conversation):
            for item in session:
                speaker, text = item.get("speaker"), item.get("text") or ""
                if speaker not in users or not text.strip():
                    continue
                turn = turn_append(
                    user=users[speaker], conversation=threads[speaker], role=Turn.Role.USER, content=text
                )
                remember(users[speaker], turn)
                dia_of_turn[turn.pk] = item.get("dia_id", "")
                speaker_of[item.get("dia_id", "")] = speaker
                report.turns += 1
        report.samples += 1
        report.memories += Memory.objects.filter(user__in=users.values(), deleted_at__isnull=True).count()

        for qa in sample.get("qa", []):
            evidence = locomo_evidence_ids(qa.get("evidence", []))
            subject = _locomo_subject(qa.get("question", ""), speakers, evidence, speaker_of)
            category = qa.get("category")
            if subject is None or category not in LOCOMO_CATEGORIES:
                report.skipped_questions += 1
                continue
            stats = report.categories.setdefault(category, LocomoCategory())
            stats.questions += 1
            recalled = recall(users[subject], qa["question"], k=max(LOCOMO_KS))
            sources = [
                {
                    dia_of_turn.get(turn_id)
                    for turn_id in MemoryEvidence.objects.filter(
                        memory_id=item.memory.pk, user=users[subject]
                    ).values_list("turn_id", flat=True)
                }
                for item in recalled
            ]
            stats.evidence += len(evidence)
            for k in LOCOMO_KS:
                provenance = set().union(*sources[:k])
                stats.found[k] += sum(e in provenance for e in evidence)
            if category == 5:
                other = set(speakers) - {subject}
                stats.other_speaker_recalled += sum(
                    any(speaker_of.get(d) in other for d in turn_sources) for turn_sources in sources
                ) + sum(item.memory.user_id != users[subject].pk for item in recalled)
    return report
