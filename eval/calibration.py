"""Calibration: sweep the write gate and the recall floor over the similarities of one run,
pick the values settings and the README use, and plot both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from eval.quality import Ranked, Report

GRID = [round(x * 0.01, 2) for x in range(-10, 101)]
# The gate must reject this share of invented facts (CI fails under 0.95; keep a margin).
GATE_TARGET_REJECTION = 0.98
# How far above the suite's last coincidence the recall floor sits: turns unlike the suite's
# come a little closer to a memory by chance.
FLOOR_MARGIN = 0.02


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
    right_first: float = 0.0  # probes that need a memory given a right one first


@dataclass(frozen=True)
class SensitivePoint:
    floor: float  # the sensitive floor: what a sensitive memory's text must clear without a key
    on_topic: int  # sensitive memories given to a probe that expects them
    off_topic: int  # sensitive memories given to a probe that does not


@dataclass(frozen=True)
class GapPoint:
    gap: float
    recall: float  # read recall@k
    precision: float


@dataclass(frozen=True)
class Calibration:
    gate: float
    floor: float
    sensitive: float
    gap: float
    gate_sweep: list[GatePoint]
    floor_sweep: list[FloorPoint]
    sensitive_sweep: list[SensitivePoint]
    gap_sweep: list[GapPoint]

    def point_at_gate(self, gate: float) -> GatePoint:
        return min(self.gate_sweep, key=lambda p: abs(p.gate - gate))

    def point_at_floor(self, floor: float) -> FloorPoint:
        return min(self.floor_sweep, key=lambda p: abs(p.floor - floor))

    def point_at_sensitive(self, floor: float) -> SensitivePoint:
        return min(self.sensitive_sweep, key=lambda p: abs(p.floor - floor))

    def point_at_gap(self, gap: float) -> GapPoint:
        return min(self.gap_sweep, key=lambda p: abs(p.gap - gap))


def sweep_gate(true_sims: Sequence[float], invented_sims: Sequence[float]) -> list[GatePoint]:
    points = []
    for gate in GRID:
        kept = sum(s >= gate for s in true_sims) / max(len(true_sims), 1)
        rejected = sum(s < gate for s in invented_sims) / max(len(invented_sims), 1)
        points.append(GatePoint(gate, kept, rejected))
    return points


def sweep_gap(ranked: Sequence[Ranked], k: int, floor: float, sensitive: float) -> list[GapPoint]:
    """Read recall and precision at each gap (how far under the first memory another may be)."""
    points = []
    for gap in (g for g in GRID if g > 0):
        expected = hits = returned = relevant = 0
        for probe in ranked:
            if not probe.expect:
                continue
            keys = probe.given(k, floor, sensitive, gap)
            expected += len(probe.expect)
            hits += len(set(probe.expect) & set(keys))
            returned += len(keys)
            relevant += sum(key in probe.expect for key in keys)
        points.append(GapPoint(gap, hits / max(expected, 1), relevant / returned if returned else 1.0))
    return points


def sweep_floor(ranked: Sequence[Ranked], k: int, sensitive: float = 1.0) -> list[FloorPoint]:
    """Read figures at each floor, as `recall` would give them: top k by similarity, then the
    floor (and for a sensitive memory, a key at the floor or its text at `sensitive`)."""
    points = []
    for floor in GRID:
        expected = hits = returned = relevant = empty = injected = noise = firsts = expecting = 0
        for probe in ranked:
            keys = probe.given(k, floor, sensitive)
            if probe.expect:
                expecting += 1
                firsts += bool(keys) and keys[0] in probe.expect
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
                right_first=firsts / max(expecting, 1),
            )
        )
    return points


def sweep_sensitive(ranked: Sequence[Ranked], k: int, floor: float) -> list[SensitivePoint]:
    """Sensitive memories given on and off their topic at each sensitive floor from the recall
    floor up."""
    points = []
    for sensitive in (g for g in GRID if g >= floor):
        on = off = 0
        for probe in ranked:
            for key in probe.given(k, floor, sensitive, only_sensitive=True):
                on += key in probe.expect
                off += key not in probe.expect
        points.append(SensitivePoint(sensitive, on, off))
    return points


def calibrate(report: Report) -> Calibration:
    """Pick the write gate, the recall floor and the sensitive floor from one run.

    Gate: the lowest value that rejects at least GATE_TARGET_REJECTION of the invented
    facts, since a false memory is worse than a miss and anything higher only loses true
    facts. Floor: among the values at least FLOOR_MARGIN above the last at which a probe that
    should recall nothing (a general question, a statement about something new) is given a
    memory, the one that gives the most probes their right memory first, and on a tie the
    highest (fewer memories the reply does not need). With keys a need meets its memory high
    and a coincidence stays low, so there is room between them. Sensitive floor: the lowest
    value, from the floor up, past which no further sensitive memory given off its topic is
    kept out: by its own words alone such a memory is given only when the turn all but says
    it; on its topic, the needs of its kind carry it. Gap: FLOOR_MARGIN above the smallest that
    keeps every memory the floor gives to a probe that needs it.
    """
    gate_sweep = sweep_gate(report.true_similarities, report.invented_similarities)
    gate = next(p.gate for p in gate_sweep if p.invented_rejected >= GATE_TARGET_REJECTION)
    floor_sweep = sweep_floor(report.ranked, report.k)
    clean = len(floor_sweep)
    while clean > 0 and floor_sweep[clean - 1].injection == 0:
        clean -= 1
    lowest = floor_sweep[min(clean, len(floor_sweep) - 1)].floor + FLOOR_MARGIN - 1e-9
    allowed = [point for point in floor_sweep if point.floor >= lowest]
    floor = max(allowed, key=lambda p: (round(p.right_first, 6), p.floor)).floor
    sensitive_sweep = sweep_sensitive(report.ranked, report.k, floor)
    fewest = min(point.off_topic for point in sensitive_sweep)
    sensitive = next(point.floor for point in sensitive_sweep if point.off_topic == fewest)
    gap_sweep = sweep_gap(report.ranked, report.k, floor, sensitive)
    gap = round(next(point.gap for point in gap_sweep if point.recall >= gap_sweep[-1].recall) + FLOOR_MARGIN, 2)
    return Calibration(
        gate=gate,
        floor=floor,
        sensitive=sensitive,
        gap=gap,
        gate_sweep=gate_sweep,
        floor_sweep=floor_sweep,
        sensitive_sweep=sensitive_sweep,
        gap_sweep=gap_sweep,
    )


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
