"""Memory quality, measured: a labelled suite run through the real write and read paths.

The suite (`eval/suite.json`, format in `eval/README.md`) lists, per user, the turns they
say, the facts a careful extractor should store from each turn, and probes with the facts
they should recall. `run_suite` sends every turn through `remember` and every probe through
`recall`, on whatever database is current (the command makes a throwaway one; the test
suite uses pytest's), and compares what was stored and recalled with the labels.

Stored facts are matched to labels by keywords, not by exact text, so the same suite
scores the rule-based extractor and any model behind the endpoint: a memory matches a
labelled fact when every keyword of one of the fact's alternatives starts a word of the
memory's normalised text.

`calibrate` sweeps the write gate and the recall floor over the similarities the same run
produces, and picks the values the README and settings use.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections

from chat.models import Turn
from chat.services import conversation_create, turn_append
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.selectors import recall
from memoryapp.services import gate_facts, remember
from memoryapp.thresholds import recall_floor, write_gate

DEFAULT_SUITE = Path(settings.BASE_DIR) / "eval" / "suite.json"
SUITE_FORMAT = 1
USERNAME_PREFIX = "eval-"


class SuiteError(ValueError):
    """The suite file does not follow the documented format."""


# --- The suite ------------------------------------------------------------------------------


def normalise(text: str) -> str:
    """Case- and accent-folded words separated by single spaces ("Lucía's" -> "lucia s")."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return " ".join(re.sub(r"[^\w+/-]+", " ", stripped).split())


@dataclass(frozen=True)
class ExpectedFact:
    key: str
    text: str
    alternatives: tuple[tuple[str, ...], ...]

    def match_strength(self, memory_text: str) -> int:
        """How many keywords of the best matching alternative the memory has; 0 if none matches."""
        words = normalise(memory_text).split()
        best = 0
        for keywords in self.alternatives:
            if all(any(word.startswith(k) for word in words) for k in keywords):
                best = max(best, len(keywords))
        return best


@dataclass(frozen=True)
class SuiteTurn:
    text: str
    facts: tuple[str, ...]


@dataclass(frozen=True)
class Probe:
    text: str
    expect: tuple[str, ...]


@dataclass(frozen=True)
class SuiteUser:
    name: str
    facts: dict[str, ExpectedFact]
    turns: tuple[SuiteTurn, ...]
    probes: tuple[Probe, ...]

    def classify(self, memory_text: str) -> str | None:
        """The labelled fact a stored memory states, or None when it states none of them."""
        best_key, best = None, 0
        for key, fact in self.facts.items():
            strength = fact.match_strength(memory_text)
            if strength > best:
                best_key, best = key, strength
        return best_key


@dataclass(frozen=True)
class InventedFact:
    kind: str
    turn: str
    fact: str


@dataclass(frozen=True)
class Suite:
    users: tuple[SuiteUser, ...]
    invented: tuple[InventedFact, ...]
    misattributed: tuple[InventedFact, ...] = ()

    @property
    def turn_count(self) -> int:
        return sum(len(u.turns) for u in self.users)

    @property
    def probe_count(self) -> int:
        return sum(len(u.probes) for u in self.users)


def _keys(raw: object, known: dict[str, ExpectedFact], where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
        raise SuiteError(f"{where}: expected a list of fact keys")
    unknown = [k for k in raw if k not in known]
    if unknown:
        raise SuiteError(f"{where}: unknown fact keys {unknown}")
    return tuple(raw)


def load_suite(path: Path | str = DEFAULT_SUITE) -> Suite:
    """Read and validate a suite file; a malformed one raises SuiteError naming the place."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    if data.get("format") != SUITE_FORMAT:
        raise SuiteError(f"{path}: format must be {SUITE_FORMAT}")
    users: list[SuiteUser] = []
    for raw_user in data.get("users", []):
        name = raw_user["user"]
        facts = {}
        for key, raw_fact in raw_user.get("facts", {}).items():
            alternatives = tuple(tuple(normalise(a).split()) for a in raw_fact["match"])
            if not alternatives or not all(alternatives):
                raise SuiteError(f"{name}.{key}: match needs at least one non-empty alternative")
            facts[key] = ExpectedFact(key=key, text=raw_fact["text"], alternatives=alternatives)
        turns = tuple(
            SuiteTurn(text=t["text"], facts=_keys(t.get("facts", []), facts, f"{name} turn {n}"))
            for n, t in enumerate(raw_user.get("turns", []), start=1)
        )
        probes = tuple(
            Probe(text=p["text"], expect=_keys(p.get("expect", []), facts, f"{name} probe {n}"))
            for n, p in enumerate(raw_user.get("probes", []), start=1)
        )
        unstated = set(facts) - {k for t in turns for k in t.facts}
        if unstated:
            raise SuiteError(f"{name}: facts no turn states: {sorted(unstated)}")
        users.append(SuiteUser(name=name, facts=facts, turns=turns, probes=probes))
    if len({u.name for u in users}) != len(users):
        raise SuiteError(f"{path}: user names must be unique")
    invented, misattributed = (
        tuple(InventedFact(kind=i.get("kind", ""), turn=i["turn"], fact=i["fact"]) for i in data.get(name, []))
        for name in ("invented", "misattributed")
    )
    return Suite(users=tuple(users), invented=invented, misattributed=misattributed)


# --- Running it -----------------------------------------------------------------------------


@dataclass
class Ranked:
    """One probe's memories, every one of the user's, nearest first: the raw material of the floor."""

    expect: tuple[str, ...]
    similarities: list[float]
    keys: list[str | None]


@dataclass
class Report:
    embedding_model: str
    extractor: str
    write_gate: float
    recall_floor: float
    k: int
    users: int
    turns: int
    probes: int
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
    false_memory_texts: list[str] = field(default_factory=list)
    twin_texts: list[str] = field(default_factory=list)
    invented_accepted: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    true_similarities: list[float] = field(default_factory=list)
    invented_similarities: list[float] = field(default_factory=list)
    misattributed_similarities: list[float] = field(default_factory=list)
    ranked: list[Ranked] = field(default_factory=list)

    @staticmethod
    def _rate(part: int, whole: int) -> float:
        return part / whole if whole else 0.0

    @property
    def write_precision(self) -> float:
        return self._rate(self.stored_correct, self.stored)

    @property
    def write_recall(self) -> float:
        return self._rate(self.expected_found, self.expected)

    @property
    def false_memory_rate(self) -> float:
        return self._rate(self.false_memories, self.live_memories)

    @property
    def invented_rejection(self) -> float:
        return self._rate(self.invented_rejected, self.invented)

    @property
    def misattributed_rejection(self) -> float:
        return self._rate(self.misattributed_rejected, self.misattributed)

    @property
    def read_recall(self) -> float:
        return self._rate(self.expected_recalled, self.expected_recalls)

    @property
    def read_recall_of_stored(self) -> float:
        return self._rate(self.expected_recalled, self.expected_recallable)

    @property
    def read_precision(self) -> float:
        return self._rate(self.recalled_relevant, self.recalled_on_expecting)

    @property
    def injection_rate(self) -> float:
        return self._rate(self.empty_probes_injected, self.probes_without_memories)

    def rows(self) -> list[tuple[str, str, str]]:
        """(measure, value, counts) rows of the table the command prints and the README shows."""
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
                "no-memory probes injected",
                pct(self.injection_rate),
                f"{self.empty_probes_injected}/{self.probes_without_memories}",
            ),
            ("cross-user leakage", str(self.leaked), "memories of another user recalled"),
            ("dedupe twins", str(self.twins), "restated facts stored twice"),
        ]

    def summary(self) -> dict[str, object]:
        """The figures as plain data (`--json`), without the per-item detail."""
        data = {k: v for k, v in asdict(self).items() if not isinstance(v, list)}
        data.update(
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
    return f"model {settings.LLM_EXTRACT_MODEL}" if settings.LLM_ENABLED else "offline rules"


def _write_pass(suite_user: SuiteUser, user, report: Report) -> set[int]:
    """Every turn through `remember`, then each turn's memories against its labels."""
    conversation = conversation_create(user=user, title="memory evaluation")
    turns: list[tuple[Turn, SuiteTurn]] = []
    for suite_turn in suite_user.turns:
        turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=suite_turn.text)
        remember(user, turn)
        turns.append((turn, suite_turn))

    evidence: dict[int, list[str]] = {}
    for row in MemoryEvidence.objects.filter(user=user).select_related("memory").order_by("id"):
        evidence.setdefault(row.turn_id, []).append(row.memory.text)
    for turn, suite_turn in turns:
        found = {suite_user.classify(text) for text in evidence.get(turn.pk, [])}
        for text in evidence.get(turn.pk, []):
            report.stored += 1
            report.stored_correct += suite_user.classify(text) in suite_turn.facts
        for key in suite_turn.facts:
            report.expected += 1
            if key in found:
                report.expected_found += 1
            else:
                report.misses.append(f"{suite_user.name}: {suite_turn.text!r} -> {suite_user.facts[key].text!r}")

    live = list(Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True))
    keys = Counter(suite_user.classify(text) for text in live)
    report.live_memories += len(live)
    for text in live:
        if suite_user.classify(text) is None:
            report.false_memories += 1
            report.false_memory_texts.append(f"{suite_user.name}: {text!r}")
    for key, n in keys.items():
        if key is not None and n > 1:
            report.twins += n - 1
            twins = [text for text in live if suite_user.classify(text) == key]
            report.twin_texts.append(f"{suite_user.name}.{key}: {twins}")

    # The similarity of each labelled fact to its own turn: what the gate sees for a true fact.
    for suite_turn in suite_user.turns:
        if suite_turn.facts:
            texts = [suite_user.facts[k].text for k in suite_turn.facts]
            _, kept, rejected = gate_facts(suite_turn.text, texts)
            report.true_similarities.extend(f.similarity for f in (*kept, *rejected))
    return {turn.pk for turn, _ in turns}


def _read_pass(suite_user: SuiteUser, user, own_turns: set[int], report: Report) -> None:
    """Every probe through `recall` (the configured k and floor), then again unfloored."""
    stored_keys = {
        suite_user.classify(text)
        for text in Memory.objects.filter(user=user, deleted_at__isnull=True).values_list("text", flat=True)
    }
    for probe in suite_user.probes:
        recalled = recall(user, probe.text)
        for item in recalled:
            source_ok = item.memory.source_turn_id is None or item.memory.source_turn_id in own_turns
            if item.memory.user_id != user.pk or not source_ok:
                report.leaked += 1
        keys = [suite_user.classify(item.memory.text) for item in recalled]
        if probe.expect:
            report.probes_with_memories += 1
            report.expected_recalls += len(probe.expect)
            report.expected_recallable += sum(k in stored_keys for k in probe.expect)
            report.expected_recalled += len(set(probe.expect) & set(keys))
            report.recalled_on_expecting += len(keys)
            report.recalled_relevant += sum(k in probe.expect for k in keys)
        else:
            report.probes_without_memories += 1
            if recalled:
                report.empty_probes_injected += 1
                report.injected.append(f"{suite_user.name}: {probe.text!r} <- {recalled[0].memory.text!r}")
        everything = recall(user, probe.text, k=10_000, min_sim=-1.0)
        report.ranked.append(
            Ranked(
                expect=probe.expect,
                similarities=[item.similarity for item in everything],
                keys=[suite_user.classify(item.memory.text) for item in everything],
            )
        )


def _gate_pass(suite: Suite, report: Report) -> None:
    """Each invented or misattributed fact against the turn it is claimed to come from, through the real gate.

    Invented facts were never stated: rejecting them is the gate's job. Misattributed ones
    were stated about someone else (or only hypothetically), so they are close to their
    turn by construction; the extractor must not propose them, and the figure shows how
    little the gate can help when it does.
    """
    for item in suite.invented:
        _, kept, rejected = gate_facts(item.turn, [item.fact])
        (outcome,) = (*kept, *rejected)
        report.invented += 1
        report.invented_similarities.append(outcome.similarity)
        if rejected:
            report.invented_rejected += 1
        else:
            report.invented_accepted.append(f"{item.kind}: {item.turn!r} -> {item.fact!r} ({outcome.similarity:.2f})")
    for item in suite.misattributed:
        _, kept, rejected = gate_facts(item.turn, [item.fact])
        report.misattributed += 1
        report.misattributed_similarities.append((*kept, *rejected)[0].similarity)
        report.misattributed_rejected += bool(rejected)


def run_suite(suite: Suite) -> Report:
    """Run the suite through `remember`, the write gate and `recall` on the current database.

    Creates one user per suite user (username prefixed "eval-"); the caller provides a
    database where that is harmless: a throwaway one, or a test database.
    """
    model = get_embedder().name
    report = Report(
        embedding_model=model,
        extractor=_extractor_name(),
        write_gate=write_gate(model),
        recall_floor=recall_floor(model),
        k=settings.MEMORY_RECALL_K,
        users=len(suite.users),
        turns=suite.turn_count,
        probes=suite.probe_count,
    )
    user_model = get_user_model()
    for suite_user in suite.users:
        user = user_model.objects.create_user(username=USERNAME_PREFIX + suite_user.name)
        own_turns = _write_pass(suite_user, user, report)
        _read_pass(suite_user, user, own_turns, report)
    _gate_pass(suite, report)
    return report


@contextmanager
def throwaway_database(name: str | None = None) -> Iterator[str]:
    """Create a fresh database on the configured server, migrate it, use it, then drop it.

    Django's test-database machinery does the work: the connection is switched to the new
    database for the duration and back afterwards, so the configured one is never written.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    saved_test_name = test_settings.get("NAME")
    original_name = connection.settings_dict["NAME"]
    test_settings["NAME"] = name or f"memory_eval_{os.getpid()}"
    try:
        created = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            yield created
        finally:
            connection.creation.destroy_test_db(original_name, verbosity=0)
    finally:
        test_settings["NAME"] = saved_test_name


# --- Calibration ----------------------------------------------------------------------------

GRID = [round(x * 0.01, 2) for x in range(-10, 101)]
# The gate must reject this share of invented facts (CI fails under 0.95; keep a margin).
GATE_TARGET_REJECTION = 0.98


@dataclass(frozen=True)
class GatePoint:
    gate: float
    true_kept: float
    invented_rejected: float


@dataclass(frozen=True)
class FloorPoint:
    floor: float
    recall: float
    precision: float
    injection: float
    f1: float


@dataclass(frozen=True)
class Calibration:
    gate: float
    floor: float
    gate_sweep: list[GatePoint]
    floor_sweep: list[FloorPoint]

    def point_at_gate(self, gate: float) -> GatePoint:
        return min(self.gate_sweep, key=lambda p: abs(p.gate - gate))

    def point_at_floor(self, floor: float) -> FloorPoint:
        return min(self.floor_sweep, key=lambda p: abs(p.floor - floor))


def sweep_gate(true_sims: Sequence[float], invented_sims: Sequence[float]) -> list[GatePoint]:
    points = []
    for gate in GRID:
        kept = sum(s >= gate for s in true_sims) / max(len(true_sims), 1)
        rejected = sum(s < gate for s in invented_sims) / max(len(invented_sims), 1)
        points.append(GatePoint(gate, kept, rejected))
    return points


def sweep_floor(ranked: Sequence[Ranked], k: int) -> list[FloorPoint]:
    """Read figures at each floor, as `recall` would give them: top k by similarity, then the floor."""
    points = []
    for floor in GRID:
        expected = hits = returned = relevant = empty = injected = noise = 0
        for probe in ranked:
            keys = [key for key, sim in zip(probe.keys[:k], probe.similarities[:k], strict=True) if sim >= floor]
            if probe.expect:
                expected += len(probe.expect)
                hits += len(set(probe.expect) & set(keys))
                returned += len(keys)
                relevant += sum(key in probe.expect for key in keys)
            else:
                empty += 1
                injected += bool(keys)
                noise += len(keys)
        recall_at_k = hits / max(expected, 1)
        # Memories injected into a probe that should get none are wrong returns too.
        overall_precision = relevant / (returned + noise) if returned + noise else 1.0
        f1 = 2 * recall_at_k * overall_precision / (recall_at_k + overall_precision) if relevant else 0.0
        points.append(
            FloorPoint(
                floor,
                recall=recall_at_k,
                precision=relevant / returned if returned else 1.0,
                injection=injected / max(empty, 1),
                f1=f1,
            )
        )
    return points


def calibrate(report: Report) -> Calibration:
    """Pick the write gate and recall floor from the similarities of one run.

    Gate: the lowest value that rejects at least GATE_TARGET_REJECTION of the invented
    facts, since a false memory is worse than a miss and anything higher only loses true
    facts. Floor: the value with the best F1 of read recall@k and precision, where the
    precision also counts every memory injected into a probe that should recall nothing;
    on a tie, the higher floor.
    """
    gate_sweep = sweep_gate(report.true_similarities, report.invented_similarities)
    gate = next(p.gate for p in gate_sweep if p.invented_rejected >= GATE_TARGET_REJECTION)
    floor_sweep = sweep_floor(report.ranked, report.k)
    floor = max(floor_sweep, key=lambda p: (round(p.f1, 6), p.floor)).floor
    return Calibration(gate=gate, floor=floor, gate_sweep=gate_sweep, floor_sweep=floor_sweep)


def plot_calibration(report: Report, calibration: Calibration, folder: Path) -> list[Path]:
    """Two PNGs: each similarity distribution with the chosen threshold marked, and its sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    bins = [x * 0.05 for x in range(-4, 21)]
    written = []

    fig, (hist, sweep) = plt.subplots(1, 2, figsize=(12, 4.5))
    hist.hist(report.true_similarities, bins=bins, alpha=0.6, label=f"stated facts (n={len(report.true_similarities)})")
    hist.hist(
        report.invented_similarities,
        bins=bins,
        alpha=0.6,
        label=f"invented facts (n={len(report.invented_similarities)})",
    )
    hist.hist(
        report.misattributed_similarities,
        bins=bins,
        histtype="step",
        linewidth=2,
        color="tab:red",
        label=f"misattributed facts (n={len(report.misattributed_similarities)})",
    )
    hist.axvline(calibration.gate, color="black", linestyle="--", label=f"write gate {calibration.gate:.2f}")
    hist.set(xlabel="cosine similarity of fact to its turn (best clause)", ylabel="facts")
    hist.set_title(f"Write gate, {report.embedding_model}")
    hist.legend()
    sweep.plot(
        [p.gate for p in calibration.gate_sweep],
        [p.true_kept for p in calibration.gate_sweep],
        label="stated facts kept",
    )
    sweep.plot(
        [p.gate for p in calibration.gate_sweep],
        [p.invented_rejected for p in calibration.gate_sweep],
        label="invented facts rejected",
    )
    sweep.axvline(calibration.gate, color="black", linestyle="--")
    sweep.set(xlabel="write gate", ylabel="share", xlim=(-0.1, 1.0), ylim=(0, 1.02))
    sweep.set_title("Sweep")
    sweep.grid(alpha=0.3)
    sweep.legend(loc="lower left")
    fig.tight_layout()
    path = folder / "write_gate.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)

    relevant, irrelevant, empty = [], [], []
    for probe in report.ranked:
        for key, sim in zip(probe.keys, probe.similarities, strict=True):
            if not probe.expect:
                empty.append(sim)
            elif key in probe.expect:
                relevant.append(sim)
            else:
                irrelevant.append(sim)
    fig, (hist, sweep) = plt.subplots(1, 2, figsize=(12, 4.5))
    hist.hist(irrelevant, bins=bins, alpha=0.5, density=True, label=f"other memories of the user (n={len(irrelevant)})")
    hist.hist(empty, bins=bins, alpha=0.5, density=True, label=f"memories vs no-memory probes (n={len(empty)})")
    hist.hist(relevant, bins=bins, alpha=0.6, density=True, label=f"expected memories (n={len(relevant)})")
    hist.axvline(calibration.floor, color="black", linestyle="--", label=f"recall floor {calibration.floor:.2f}")
    hist.set(xlabel="cosine similarity of memory to probe", ylabel="density")
    hist.set_title(f"Recall floor, {report.embedding_model}")
    hist.legend()
    xs = [p.floor for p in calibration.floor_sweep]
    sweep.plot(xs, [p.recall for p in calibration.floor_sweep], label=f"recall@{report.k}")
    sweep.plot(xs, [p.precision for p in calibration.floor_sweep], label=f"precision@{report.k}")
    sweep.plot(xs, [p.injection for p in calibration.floor_sweep], label="no-memory probes injected")
    sweep.axvline(calibration.floor, color="black", linestyle="--")
    sweep.set(xlabel="recall floor", ylabel="share", xlim=(-0.1, 1.0), ylim=(0, 1.02))
    sweep.set_title("Sweep")
    sweep.grid(alpha=0.3)
    sweep.legend(loc="center right")
    fig.tight_layout()
    path = folder / "recall_floor.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)
    return written


# --- LoCoMo ---------------------------------------------------------------------------------

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
