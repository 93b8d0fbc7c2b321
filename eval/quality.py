"""Memory quality, measured: the labelled suite run through the real write and read paths.

`run_suite` sends every turn through `remember` and every probe through `recall`, on
whatever database is current (`manage.py evaluate_memory` makes a scratch one; the test
suite uses pytest's), and compares what was stored and recalled with the labels
(eval/suite.py). The similarities it collects feed the calibration (eval/calibration.py).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model

from chat.models import Turn
from chat.services import conversation_create, turn_append
from core.llm import ModelUnavailable
from eval.suite import Suite, SuiteTurn, SuiteUser
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.parsed import ParsedTurn, parse_turn
from memoryapp.read.need import NOT_NEEDED, turn_need
from memoryapp.read.recall import recall, recall_for_turn
from memoryapp.thresholds import recall_floor, recall_gap, sensitive_floor, write_gate
from memoryapp.write import remember
from memoryapp.write.gate import GatedFact, gate_facts
from memoryapp.write.pipeline import read_in_english
from memoryapp.write.store import store_facts

USERNAME_PREFIX = "eval-"
SAID_AT = datetime(2024, 6, 3, 10, 0, tzinfo=UTC)  # a Monday: when the labelled turns are said


@dataclass
class Ranked:
    """One probe's memories, every one of the user's, nearest first: the raw material of the floor."""

    expect: tuple[str, ...]
    similarities: list[float]  # the best of each memory's text and keys
    keys: list[str | None]  # the labelled fact each memory states
    key_similarities: list[float] = field(default_factory=list)  # each memory's best key (-1 without)
    text_similarities: list[float] = field(default_factory=list)
    sensitive: list[bool] = field(default_factory=list)  # each memory is of a special category
    plain_similarities: list[float] = field(default_factory=list)  # each memory's text alone

    def given(
        self, k: int, floor: float, sensitive: float, gap: float = 2.0, *, only_sensitive: bool = False
    ) -> list[str | None]:
        """The labelled facts the read path would give at these floors (memoryapp.selectors)."""
        given: list[str | None] = []
        first = None
        for i, (key, similarity) in enumerate(zip(self.keys[:k], self.similarities[:k], strict=True)):
            special = bool(self.sensitive) and self.sensitive[i]
            if similarity < floor:
                continue
            if special and self.key_similarities[i] < floor and self.text_similarities[i] < sensitive:
                continue
            if first is not None and self.plain_similarities[i] < floor and similarity < first - gap:
                continue
            first = similarity if first is None else first
            if not only_sensitive or special:
                given.append(key)
        return given


@dataclass(frozen=True)
class TurnOutcome:
    """What one labelled turn did to memory."""

    kind: str
    lang: str
    expected: int  # facts the turn states
    found: int  # of those, written or refreshed by the turn
    written: int  # memories the turn wrote or refreshed
    correct: int  # of those, memories that state one of the turn's facts, optional ones included
    false: int  # live memories the turn created that state none of the user's facts
    seconds: float = 0.0  # the turn's `remember`: reading, extraction, gate and store


@dataclass(frozen=True)
class ProbeOutcome:
    """What `recall` gave one labelled probe."""

    kind: str
    lang: str
    expected: int  # facts the probe should recall (0: it should recall nothing)
    recalled: int  # memories recalled, after the floor
    relevant: int  # of those, memories that state an expected fact
    right_first: bool  # the first memory recalled states an expected fact
    right_first_unfloored: bool  # the same with no floor: ranking alone
    sensitive_off_topic: int = 0  # sensitive memories recalled that the probe does not need


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _share(part: int, whole: int) -> float | None:
    """A rate, or None where there is nothing to divide by (no such turns or probes)."""
    return part / whole if whole else None


def breakdown(turns: list[TurnOutcome], probes: list[ProbeOutcome]) -> dict[str, float | int | None]:
    """The write and read figures of one group of turns and probes (a kind, a language, a set)."""
    expecting = [p for p in probes if p.expected]
    null = [p for p in probes if not p.expected]
    nothing = [t for t in turns if not t.expected]
    return {
        "turns": len(turns),
        "write_precision": _share(sum(t.correct for t in turns), sum(t.written for t in turns)),
        "write_recall": _share(sum(t.found for t in turns), sum(t.expected for t in turns)),
        "false_memories": sum(t.false for t in turns),
        "nothing_turns": len(nothing),
        "nothing_turns_written": sum(t.written > 0 for t in nothing),
        "probes": len(probes),
        "right_first": _share(sum(p.right_first for p in expecting), len(expecting)),
        "right_first_unfloored": _share(sum(p.right_first_unfloored for p in expecting), len(expecting)),
        "null_probes": len(null),
        "null_probes_injected": sum(p.recalled > 0 for p in null),
        "sensitive_off_topic": sum(p.sensitive_off_topic for p in probes),
    }


@dataclass
class Report:
    embedding_model: str
    extractor: str
    write_gate: float
    recall_floor: float
    sensitive_floor: float
    recall_gap: float
    k: int
    users: int
    turns: int
    probes: int
    labelled_store: bool = False  # the labelled facts were stored as written: the read path alone
    # write
    stored: int = 0
    stored_correct: int = 0
    expected: int = 0
    expected_found: int = 0
    false_memories: int = 0
    live_memories: int = 0
    invented: int = 0
    invented_rejected: int = 0
    misattributed: int = 0
    misattributed_rejected: int = 0
    twins: int = 0
    extraction_failures: int = 0  # turns whose extraction call failed or was unusable (nothing written)
    # read
    probes_with_memories: int = 0
    expected_recalls: int = 0
    expected_recalled: int = 0
    expected_recallable: int = 0
    recalled_on_expecting: int = 0
    recalled_relevant: int = 0
    probes_without_memories: int = 0
    empty_probes_injected: int = 0
    leaked: int = 0
    # detail for the report and for calibration
    misses: list[str] = field(default_factory=list)
    failure_texts: list[str] = field(default_factory=list)
    false_memory_texts: list[str] = field(default_factory=list)
    twin_texts: list[str] = field(default_factory=list)
    invented_accepted: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    sensitive_given: list[str] = field(default_factory=list)  # sensitive memories off topic
    true_similarities: list[float] = field(default_factory=list)
    invented_similarities: list[float] = field(default_factory=list)
    misattributed_similarities: list[float] = field(default_factory=list)
    ranked: list[Ranked] = field(default_factory=list)
    turn_outcomes: list[TurnOutcome] = field(default_factory=list)
    probe_outcomes: list[ProbeOutcome] = field(default_factory=list)

    @property
    def write_precision(self) -> float:
        return _rate(self.stored_correct, self.stored)

    @property
    def write_recall(self) -> float:
        return _rate(self.expected_found, self.expected)

    @property
    def false_memory_rate(self) -> float:
        return _rate(self.false_memories, self.live_memories)

    @property
    def invented_rejection(self) -> float:
        return _rate(self.invented_rejected, self.invented)

    @property
    def misattributed_rejection(self) -> float:
        return _rate(self.misattributed_rejected, self.misattributed)

    @property
    def read_recall(self) -> float:
        return _rate(self.expected_recalled, self.expected_recalls)

    @property
    def read_recall_of_stored(self) -> float:
        return _rate(self.expected_recalled, self.expected_recallable)

    @property
    def read_precision(self) -> float:
        return _rate(self.recalled_relevant, self.recalled_on_expecting)

    @property
    def injection_rate(self) -> float:
        return _rate(self.empty_probes_injected, self.probes_without_memories)

    @property
    def right_first(self) -> float:
        """Probes that need a memory whose first recalled memory is one they need."""
        expecting = [p for p in self.probe_outcomes if p.expected]
        return _rate(sum(p.right_first for p in expecting), len(expecting))

    @property
    def right_first_unfloored(self) -> float:
        expecting = [p for p in self.probe_outcomes if p.expected]
        return _rate(sum(p.right_first_unfloored for p in expecting), len(expecting))

    @property
    def statements(self) -> list[ProbeOutcome]:
        """First-person statements that need no memory ("I started learning to juggle.")."""
        return [p for p in self.probe_outcomes if p.kind == "statement"]

    @property
    def statements_clean(self) -> float:
        """Statements that need no memory and were given none (standing instructions aside)."""
        return _rate(sum(p.recalled == 0 for p in self.statements), len(self.statements))

    @property
    def sensitive_off_topic(self) -> int:
        """Sensitive memories given to a probe that does not need them."""
        return sum(p.sensitive_off_topic for p in self.probe_outcomes)

    def by(self, label: str, *, turns: bool = True, probes: bool = True) -> dict[str, dict]:
        """The figures per value of `label` ("kind" or "lang") of the turns and/or the probes."""
        chosen_turns = self.turn_outcomes if turns else []
        chosen_probes = self.probe_outcomes if probes else []
        groups = sorted({getattr(o, label) for o in [*chosen_turns, *chosen_probes]})
        return {
            group: breakdown(
                [t for t in chosen_turns if getattr(t, label) == group],
                [p for p in chosen_probes if getattr(p, label) == group],
            )
            for group in groups
        }

    def by_language(self) -> dict[str, dict]:
        """`by("lang")`, with every language but English together as "other"."""
        groups = self.by("lang")
        groups["other"] = breakdown(
            [t for t in self.turn_outcomes if t.lang != "en"], [p for p in self.probe_outcomes if p.lang != "en"]
        )
        return groups

    def rows(self) -> list[tuple[str, str, str]]:
        """(measure, value, counts) rows of the table the command prints and the README shows;
        on a labelled store, the read rows only."""
        rows = self._rows()
        if self.labelled_store:
            reads = ("read ", "right memory", "no-memory", "sensitive", "cross-user")
            rows = [row for row in rows if row[0].startswith(reads)]
        return rows

    def _rows(self) -> list[tuple[str, str, str]]:
        pct = "{:.3f}".format
        return [
            ("write precision", pct(self.write_precision), f"{self.stored_correct}/{self.stored} stored"),
            ("write recall", pct(self.write_recall), f"{self.expected_found}/{self.expected} expected"),
            (
                "invented facts rejected by the gate",
                pct(self.invented_rejection),
                f"{self.invented_rejected}/{self.invented}",
            ),
            (
                "misattributed facts rejected by the gate",
                pct(self.misattributed_rejection),
                f"{self.misattributed_rejected}/{self.misattributed} (informational)",
            ),
            ("false-memory rate", pct(self.false_memory_rate), f"{self.false_memories}/{self.live_memories} live"),
            *self._false_by_language(),
            (
                f"read recall@{self.k}",
                pct(self.read_recall),
                f"{self.expected_recalled}/{self.expected_recalls} ({pct(self.read_recall_of_stored)} of stored)",
            ),
            (
                f"read precision@{self.k}",
                pct(self.read_precision),
                f"{self.recalled_relevant}/{self.recalled_on_expecting}",
            ),
            (
                "right memory first",
                pct(self.right_first),
                f"{self.probes_with_memories} probes need one ({pct(self.right_first_unfloored)} with no floor)",
            ),
            (
                "no-memory probes injected",
                pct(self.injection_rate),
                f"{self.empty_probes_injected}/{self.probes_without_memories}",
            ),
            (
                "no-memory statements given nothing",
                pct(self.statements_clean),
                f"{sum(p.recalled == 0 for p in self.statements)}/{len(self.statements)}",
            ),
            (
                "sensitive memories off topic",
                str(self.sensitive_off_topic),
                "sensitive memories given to a probe that does not need them",
            ),
            ("cross-user leakage", str(self.leaked), "memories of another user recalled"),
            ("dedupe twins", str(self.twins), "restated facts stored twice"),
            ("extraction failures", str(self.extraction_failures), "turns the extractor failed on (nothing written)"),
            *self._write_times(),
        ]

    def _english_and_other(self) -> list[tuple[str, list[TurnOutcome]]]:
        groups = [
            ("English", [t for t in self.turn_outcomes if t.lang == "en"]),
            ("other languages", [t for t in self.turn_outcomes if t.lang != "en"]),
        ]
        return [(label, outcomes) for label, outcomes in groups if outcomes]

    def _false_by_language(self) -> list[tuple[str, str, str]]:
        """The false-memory rate of English turns and of turns in other languages, apart: the
        memories the turns created that state none of the user's facts, of those they wrote."""
        rows = []
        for label, outcomes in self._english_and_other():
            false, written = sum(t.false for t in outcomes), sum(t.written for t in outcomes)
            rows.append((f"false-memory rate, {label}", f"{_rate(false, written):.3f}", f"{false}/{written} written"))
        return rows

    def _write_times(self) -> list[tuple[str, str, str]]:
        """Seconds per turn of the whole write (reading, extraction, gate, store), with a model
        configured; offline the write is milliseconds and its figure only noise."""
        if not settings.LLM_ENABLED:
            return []
        rows = []
        for label, outcomes in self._english_and_other():
            seconds = [t.seconds for t in outcomes]
            p50, p95 = np.percentile(seconds, [50, 95])
            counts = f"p95 of {len(seconds)} turns; p50 {p50:.2f}, max {max(seconds):.2f}"
            rows.append((f"write seconds per turn, {label}", f"{p95:.2f}", counts))
        return rows

    def summary(self) -> dict[str, object]:
        """The figures as plain data (`--json`), without the per-item detail."""
        data = {k: v for k, v in asdict(self).items() if not isinstance(v, list)}
        data.update(
            right_first=self.right_first,
            right_first_unfloored=self.right_first_unfloored,
            statements_clean=self.statements_clean,
            sensitive_off_topic=self.sensitive_off_topic,
            by_turn_kind=self.by("kind", probes=False),
            by_probe_kind=self.by("kind", turns=False),
            by_language=self.by_language(),
            write_precision=self.write_precision,
            write_recall=self.write_recall,
            false_memory_rate=self.false_memory_rate,
            invented_rejection=self.invented_rejection,
            misattributed_rejection=self.misattributed_rejection,
            read_recall=self.read_recall,
            read_recall_of_stored=self.read_recall_of_stored,
            read_precision=self.read_precision,
            injection_rate=self.injection_rate,
        )
        return data


def _extractor_name() -> str:
    return f"model {settings.LLM_EXTRACT_MODEL}" if settings.LLM_ENABLED else "offline grammar and rules"


def _write_pass(suite_user: SuiteUser, user, report: Report) -> set[int]:
    """Every turn through `remember`, then each turn's memories against its labels."""
    conversation = conversation_create(user=user, title="memory evaluation")
    turns: list[tuple[Turn, SuiteTurn, float]] = []
    for suite_turn in suite_user.turns:
        turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=suite_turn.text)
        # Every run dates its turns alike, so "last June" is stored as the same month on any day.
        Turn.objects.filter(pk=turn.pk, user=user).update(created_at=SAID_AT)
        turn.created_at = SAID_AT
        start = time.perf_counter()
        try:
            remember(user, turn)
        except ModelUnavailable as exc:  # the turn's memory is lost, never the evaluation
            report.extraction_failures += 1
            report.failure_texts.append(f"{suite_user.name}: {suite_turn.text!r}: {exc}")
        turns.append((turn, suite_turn, time.perf_counter() - start))

    evidence: dict[int, list[str]] = {}
    for row in MemoryEvidence.objects.filter(user=user).select_related("memory").order_by("id"):
        evidence.setdefault(row.turn_id, []).append(row.memory.text)
    live = list(Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", "source_turn_id"))
    false_by_turn = Counter(source for text, source in live if suite_user.classify(text) is None)
    for turn, suite_turn, seconds in turns:
        written = [suite_user.classify(text) for text in evidence.get(turn.pk, [])]
        for key in suite_turn.facts:
            if key not in written:
                report.misses.append(f"{suite_user.name}: {suite_turn.text!r} -> {suite_user.facts[key].text!r}")
        outcome = TurnOutcome(
            kind=suite_turn.kind,
            lang=suite_turn.lang,
            expected=len(suite_turn.facts),
            found=sum(key in written for key in suite_turn.facts),
            written=len(written),
            correct=sum(key in suite_turn.facts or key in suite_turn.optional for key in written),
            false=false_by_turn[turn.pk],
            seconds=seconds,
        )
        report.turn_outcomes.append(outcome)
        report.stored += outcome.written
        report.stored_correct += outcome.correct
        report.expected += outcome.expected
        report.expected_found += outcome.found

    keys = Counter(suite_user.classify(text) for text, _ in live)
    report.live_memories += len(live)
    for text, _ in live:
        if suite_user.classify(text) is None:
            report.false_memories += 1
            report.false_memory_texts.append(f"{suite_user.name}: {text!r}")
    for key, n in keys.items():
        if key is not None and n > 1:
            report.twins += n - 1
            twins = [text for text, _ in live if suite_user.classify(text) == key]
            report.twin_texts.append(f"{suite_user.name}.{key}: {twins}")

    # The similarity of each labelled fact to its own turn: what the gate sees for a true fact.
    for suite_turn in suite_user.turns:
        if suite_turn.facts:
            texts = [suite_user.facts[k].text for k in suite_turn.facts]
            _, kept, rejected = gate_facts(parse_turn(suite_turn.text), texts)
            report.true_similarities.extend(f.similarity for f in (*kept, *rejected))
    return {turn.pk for turn, _, _ in turns}


def _store_labels(suite_user: SuiteUser, user) -> set[int]:
    """Every turn said, and the facts its labels give it stored as written, through the same
    upsert as `remember` (restatements refresh, corrections retire the old value) but with
    no extractor and no gate: what the read path would face if the write path were perfect."""
    conversation = conversation_create(user=user, title="memory evaluation, labelled store")
    embedder = get_embedder()
    own: set[int] = set()
    for suite_turn in suite_user.turns:
        turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=suite_turn.text)
        own.add(turn.pk)
        texts = [suite_user.facts[key].text for key in suite_turn.facts]
        if texts:
            vectors = embedder.embed(texts)
            facts = [GatedFact(text, 1.0, vector) for text, vector in zip(texts, vectors, strict=True)]
            store_facts(user, turn, facts, model_name=embedder.name)
    return own


def _read_pass(suite_user: SuiteUser, user, own_turns: set[int], report: Report) -> None:
    """Every probe through `recall` (the configured k and floor), then again unfloored."""
    stored_keys = {
        suite_user.classify(text)
        for text in Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True)
    }
    for probe in suite_user.probes:
        recalled = recall_for_turn(user, probe.text)
        for item in recalled:
            source_ok = item.memory.source_turn_id is None or item.memory.source_turn_id in own_turns
            if item.memory.user_id != user.pk or not source_ok:
                report.leaked += 1
        # Standing instructions go with every reply by design: they answer a probe that asks
        # for one, and are neither retrieved nor injected otherwise.
        keys = [suite_user.classify(item.memory.text) for item in recalled if not item.standing]
        standing = {suite_user.classify(item.memory.text) for item in recalled if item.standing}
        if probe.expect:
            report.probes_with_memories += 1
            report.expected_recalls += len(probe.expect)
            report.expected_recallable += sum(k in stored_keys for k in probe.expect)
            report.expected_recalled += len(set(probe.expect) & (set(keys) | standing))
            report.recalled_on_expecting += len(keys)
            report.recalled_relevant += sum(k in probe.expect for k in keys)
        else:
            report.probes_without_memories += 1
            if keys:
                report.empty_probes_injected += 1
                first = next(item for item in recalled if not item.standing)
                report.injected.append(f"{suite_user.name}: {probe.text!r} <- {first.memory.text!r}")
        off_topic = [
            item.memory.text
            for item, key in zip((i for i in recalled if not i.standing), keys, strict=True)
            if key is not None and suite_user.facts[key].sensitive and key not in probe.expect
        ]
        report.sensitive_given.extend(f"{suite_user.name}: {probe.text!r} <- {text!r}" for text in off_topic)
        # The floor applies after the decision: a probe that needs no memory ranks nothing.
        embedder = get_embedder()
        need = turn_need(probe.text, embedder.embed([probe.text])[0], embedder.name)
        everything = recall(user, probe.text, k=10_000, min_sim=-1.0) if need != NOT_NEEDED else []
        ranked = Ranked(
            expect=probe.expect,
            similarities=[item.similarity for item in everything],
            keys=[suite_user.classify(item.memory.text) for item in everything],
            key_similarities=[item.key_similarity for item in everything],
            text_similarities=[item.text_similarity for item in everything],
            sensitive=[bool(item.memory.sensitive) for item in everything],
            plain_similarities=[item.plain_similarity for item in everything],
        )
        report.ranked.append(ranked)
        report.probe_outcomes.append(
            ProbeOutcome(
                kind=probe.kind,
                lang=probe.lang,
                expected=len(probe.expect),
                recalled=len(keys),
                relevant=sum(k in probe.expect for k in keys),
                right_first=(bool(keys) and keys[0] in probe.expect) or bool(set(probe.expect) & standing),
                right_first_unfloored=bool(ranked.keys) and ranked.keys[0] in probe.expect,
                sensitive_off_topic=len(off_topic),
            )
        )


def _read(turn: str) -> ParsedTurn:
    """The turn parsed, with its English reading as `remember` asks for it; without one when the model fails."""
    said = parse_turn(turn)
    try:
        return read_in_english(said)
    except ModelUnavailable:
        return said


def _gate_pass(suite: Suite, report: Report) -> None:
    """Each invented or misattributed fact against the turn it is claimed to come from, through the real gate.

    Invented facts were never stated: rejecting them is the gate's job. Misattributed ones
    were stated about someone else (or only hypothetically), so they are close to their
    turn by construction; the extractor must not propose them, and the figure shows how
    little the gate can help when it does. Each turn is weighed as the write path weighs it:
    with the model's English reading when a model is configured and the turn is not English.
    """
    for item in suite.invented:
        _, kept, rejected = gate_facts(_read(item.turn), [item.fact])
        (outcome,) = (*kept, *rejected)
        report.invented += 1
        report.invented_similarities.append(outcome.similarity)
        if rejected:
            report.invented_rejected += 1
        else:
            report.invented_accepted.append(f"{item.kind}: {item.turn!r} -> {item.fact!r} ({outcome.similarity:.2f})")
    for item in suite.misattributed:
        _, kept, rejected = gate_facts(_read(item.turn), [item.fact])
        report.misattributed += 1
        report.misattributed_similarities.append((*kept, *rejected)[0].similarity)
        report.misattributed_rejected += bool(rejected)


def run_suite(suite: Suite, *, name: str = "suite", labelled_store: bool = False) -> Report:
    """Run the suite through `remember`, the write gate and `recall` on the current database.

    Creates one user per suite user (username "eval-<name>-<user>"); the caller provides a
    database where that is harmless: a scratch one, or a test database. With
    `labelled_store`, each turn's labelled facts are stored as written instead of extracted
    (see `_store_labels`), so the figures are the read path's alone.
    """
    model = get_embedder().name
    report = Report(
        embedding_model=model,
        extractor=_extractor_name(),
        write_gate=write_gate(model),
        recall_floor=recall_floor(model),
        sensitive_floor=sensitive_floor(model),
        recall_gap=recall_gap(model),
        k=settings.MEMORY_RECALL_K,
        users=len(suite.users),
        turns=suite.turn_count,
        probes=suite.probe_count,
        labelled_store=labelled_store,
    )
    if labelled_store:
        report.extractor = "none: the labelled facts, stored as written"
    user_model = get_user_model()
    for suite_user in suite.users:
        user = user_model.objects.create_user(username=f"{USERNAME_PREFIX}{name}-{suite_user.name}")
        if labelled_store:
            own_turns = _store_labels(suite_user, user)
        else:
            own_turns = _write_pass(suite_user, user, report)
        _read_pass(suite_user, user, own_turns, report)
    if not labelled_store:
        _gate_pass(suite, report)
    return report
