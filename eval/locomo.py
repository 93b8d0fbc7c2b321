"""LoCoMo through the real write and read paths: evidence-turn recall per question category.

Each speaker of a sample becomes a user; their turns go through `remember` in order, each with
its session's date as the turn's time (so "last Friday" resolves to the day it meant); each
question is a probe for the speaker it is about. The figure is the share of evidence turns
found in the provenance of the top-k recalled memories, beside BM25 over the sample's raw turns
as a reference. The dataset is not shipped (its licence is CC BY-NC); pass the path of
`locomo10.json`.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.contrib.auth import get_user_model
from tqdm import tqdm

from chat.history import history_for_turn
from chat.models import Turn
from chat.services import conversation_create, turn_append
from core.llm import ModelUnavailable
from eval.history import chat_read, index_as_worker
from eval.quality import USERNAME_PREFIX
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.write import remember

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LOCOMO_KS = (5, 10, 50)
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


def session_time(raw: object) -> datetime | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as an aware datetime (UTC), or None."""
    if not isinstance(raw, str):
        return None
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


@dataclass
class LocomoCategory:
    questions: int = 0
    evidence: int = 0
    found: dict[int, int] = field(default_factory=lambda: dict.fromkeys(LOCOMO_KS, 0))
    found_bm25: dict[int, int] = field(default_factory=lambda: dict.fromkeys(LOCOMO_KS, 0))
    # the chat history reference alone (past turns over its floor), and the combined read path:
    # memories and past turns taken in turn, as a reply is given both
    found_history: dict[int, int] = field(default_factory=lambda: dict.fromkeys(LOCOMO_KS, 0))
    found_combined: dict[int, int] = field(default_factory=lambda: dict.fromkeys(LOCOMO_KS, 0))
    stored: int = 0  # evidence turns that are the source of any live memory of the question's subject
    other_speaker_recalled: int = 0

    def evidence_recall(self, k: int, *, bm25: bool = False, way: str = "memories") -> float:
        found = {"memories": self.found, "history": self.found_history, "combined": self.found_combined}[way]
        found = self.found_bm25 if bm25 else found
        return found[k] / self.evidence if self.evidence else 0.0

    @property
    def stored_share(self) -> float:
        """The ceiling of memory@k for any k: evidence turns the store has a memory from."""
        return self.stored / self.evidence if self.evidence else 0.0


@dataclass
class LocomoReport:
    samples: int = 0
    turns: int = 0
    turns_that_wrote: int = 0
    extraction_failures: int = 0  # turns whose extraction call failed or was unusable: nothing written
    memories: int = 0
    skipped_questions: int = 0
    categories: dict[int, LocomoCategory] = field(default_factory=dict)


_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "a an and are as at be by did do does for from had has have he her his how i in is it its me my of on or "
    "she that the their them they this to was we were what when where which who whom why will with you your".split()
)


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w not in _STOP]


class BM25:
    """Okapi BM25 (k1 1.5, b 0.75) over a list of documents: the raw-turn reference."""

    def __init__(self, documents: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.docs = [Counter(_terms(d)) for d in documents]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / max(len(self.docs), 1)
        frequency = Counter(term for d in self.docs for term in d)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        terms = _terms(query)
        scores = []
        for i, (doc, length) in enumerate(zip(self.docs, self.lengths, strict=True)):
            score = 0.0
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / self.average)
                    score += self.idf[term] * tf * (self.k1 + 1) / norm
            scores.append((score, -i))
        return [-i for score, i in sorted(scores, reverse=True)[:k] if score > 0]


def _locomo_sessions(conversation: dict) -> list[tuple[datetime | None, list[dict]]]:
    numbers = sorted(int(key.split("_")[1]) for key in conversation if re.fullmatch(r"session_\d+", key))
    return [
        (session_time(conversation.get(f"session_{n}_date_time")), conversation[f"session_{n}"])
        for n in numbers
        if isinstance(conversation[f"session_{n}"], list)
    ]


def _locomo_subject(question: str, speakers: list[str], evidence: list[str], speaker_of: dict[str, str]) -> str | None:
    """The speaker a question is about: the one it names, else the one who said most of the evidence."""
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", question, re.I)]
    if len(named) == 1:
        return named[0]
    said = Counter(speaker_of[e] for e in evidence if e in speaker_of)
    return said.most_common(1)[0][0] if said else None


_WITH_I = {"does": "do", "is": "am", "has": "have"}  # "When does Caroline ..." asked as "When do I ..."


def as_asked_by(question: str, subject: str, other: str) -> str:
    """The question as its subject asks it of their own assistant, whose memories say "The user":
    "When did Caroline go to the support group?" is "When did I go to the support group?", and
    "What is Caroline's job?" is "What is my job?". The other speaker's name stays; where it is
    not named, "he", "she", "his" and "her" are the subject too."""
    name = re.escape(subject)
    if subject in question and not re.search(rf"\b{re.escape(other)}\b", question):
        asked = re.sub(r"\b(?:his|her)\b", "my", question)
        question = re.sub(r"\b(?:he|she)\b", "I", asked)
    asked = re.sub(rf"\b{name}['’]s\b", "my", question)
    asked = re.sub(rf"\b(to|with|for|about|tell|told|give|gave|ask|asked|from|and) {name}\b", r"\1 me", asked)
    asked = re.sub(rf"\b{name}\b", "I", asked)
    asked = re.sub(r"\b(does|is|has) I\b", lambda m: f"{_WITH_I[m.group(1).lower()]} I", asked, flags=re.I)
    return re.sub(r"\bI (does|is|has)\b", lambda m: f"I {_WITH_I[m.group(1).lower()]}", asked, flags=re.I)


def interleaved(first: list[set], second: list[set], k: int) -> set:
    """What the first k items name, taken in turn from two ranked lists (memories, past turns)."""
    merged: list[set] = []
    for i in range(max(len(first), len(second))):
        merged += [items[i] for items in (first, second) if i < len(items)]
    return set().union(*merged[:k])


def run_locomo(path: Path | str, *, samples: int | None = None, progress: bool = False) -> LocomoReport:
    """Each speaker of each sample becomes a user; their turns go through `remember` in order,
    and each question is a probe for the speaker it is about. Reports, per category, the share
    of evidence turns found in the provenance of the top-k recalled memories (and by BM25 over
    the raw turns), and for the adversarial category how often a memory sourced from the other
    speaker was recalled."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))[:samples]
    report = LocomoReport()
    user_model = get_user_model()
    embedder = get_embedder()
    total = sum(len(items) for sample in data for _, items in _locomo_sessions(sample["conversation"]))
    bar = tqdm(total=total, desc="LoCoMo turns", unit="turn", disable=not progress, file=sys.stderr)
    for n, sample in enumerate(data):
        conversation = sample["conversation"]
        speakers = [conversation["speaker_a"], conversation["speaker_b"]]
        users = {
            name: user_model.objects.create_user(username=f"{USERNAME_PREFIX}locomo-{n}-{i}")
            for i, name in enumerate(speakers)
        }
        threads = {name: conversation_create(user=user, title=f"locomo {n}") for name, user in users.items()}
        asked_in = {name: conversation_create(user=user, title="questions") for name, user in users.items()}
        dia_of_turn: dict[int, str] = {}
        speaker_of: dict[str, str] = {}
        raw: list[tuple[str, str]] = []  # (dia_id, text), for BM25
        for when, session in _locomo_sessions(conversation):
            for item in session:
                bar.update()
                speaker, text = item.get("speaker"), item.get("text") or ""
                if speaker not in users or not text.strip():
                    continue
                turn = turn_append(
                    user=users[speaker], conversation=threads[speaker], role=Turn.Role.USER, content=text
                )
                if when is not None:
                    Turn.objects.filter(pk=turn.pk, user=users[speaker]).update(created_at=when)
                    turn.created_at = when
                vector = embedder.embed([text])[0]
                try:
                    report.turns_that_wrote += remember(users[speaker], turn, turn_vector=vector).stored > 0
                except ModelUnavailable:
                    # The product marks such a turn for retry; the evaluation counts it and goes on.
                    report.extraction_failures += 1
                index_as_worker(user=users[speaker], turn=turn, vector=vector, embedding_model=embedder.name)
                dia_of_turn[turn.pk] = item.get("dia_id", "")
                speaker_of[item.get("dia_id", "")] = speaker
                raw.append((item.get("dia_id", ""), text))
                report.turns += 1
        report.samples += 1
        report.memories += Memory.objects.filter(user__in=users.values(), deleted_at__isnull=True).count()
        bm25 = BM25([text for _, text in raw])
        in_store = {
            name: {
                dia_of_turn.get(turn_id)
                for turn_id in MemoryEvidence.objects.filter(
                    user=user, memory__user=user, memory__deleted_at__isnull=True
                ).values_list("turn_id", flat=True)
            }
            for name, user in users.items()
        }

        for qa in sample.get("qa", []):
            evidence = locomo_evidence_ids(qa.get("evidence", []))
            subject = _locomo_subject(qa.get("question", ""), speakers, evidence, speaker_of)
            category = qa.get("category")
            if subject is None or category not in LOCOMO_CATEGORIES:
                report.skipped_questions += 1
                continue
            stats = report.categories.setdefault(category, LocomoCategory())
            stats.questions += 1
            # The read path of a chat turn (need decision and floors) with a longer list.
            probe = as_asked_by(qa["question"], subject, *(set(speakers) - {subject}))
            vector = embedder.embed([probe])[0]
            read = chat_read(users[subject], probe, vector, embedder.name, k=max(LOCOMO_KS))
            recalled = read.recalled
            past = [
                {dia_of_turn.get(excerpt.turn.pk)}
                for excerpt in history_for_turn(
                    user=users[subject], text=probe, read=read, conversation=asked_in[subject], k=max(LOCOMO_KS)
                )
            ]
            sources = [
                {
                    dia_of_turn.get(turn_id)
                    for turn_id in MemoryEvidence.objects.filter(
                        memory_id=item.memory.pk, user=users[subject]
                    ).values_list("turn_id", flat=True)
                }
                for item in recalled
            ]
            ranked_raw = [raw[i][0] for i in bm25.top(qa["question"], max(LOCOMO_KS))]
            stats.evidence += len(evidence)
            stats.stored += sum(e in in_store[subject] for e in evidence)
            for k in LOCOMO_KS:
                provenance = set().union(*sources[:k])
                stats.found[k] += sum(e in provenance for e in evidence)
                quoted = set().union(*past[:k])
                stats.found_history[k] += sum(e in quoted for e in evidence)
                combined = interleaved(sources, past, k)
                stats.found_combined[k] += sum(e in combined for e in evidence)
                stats.found_bm25[k] += sum(e in set(ranked_raw[:k]) for e in evidence)
            if category == 5:
                other = set(speakers) - {subject}
                stats.other_speaker_recalled += sum(
                    any(speaker_of.get(d) in other for d in turn_sources) for turn_sources in sources
                ) + sum(item.memory.user_id != users[subject].pk for item in recalled)
    bar.close()
    return report
