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
class LeadPoint:
    lead: float
    right_first: float
    wrong_first: int  # probes that need a memory and get a wrong one first
    injected: int  # probes that should recall nothing and get something


@dataclass(frozen=True)
class Calibration:
    gate: float
    floor: float
    lead: float
    gate_sweep: list[GatePoint]
    floor_sweep: list[FloorPoint]
    lead_sweep: list[LeadPoint]

    def point_at_gate(self, gate: float) -> GatePoint:
        return min(self.gate_sweep, key=lambda p: abs(p.gate - gate))

    def point_at_floor(self, floor: float) -> FloorPoint:
        return min(self.floor_sweep, key=lambda p: abs(p.floor - floor))

    def point_at_lead(self, lead: float) -> LeadPoint:
        return min(self.lead_sweep, key=lambda p: abs(p.lead - lead))


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


# Right memories first that one wrong memory first must buy before a lower lead floor is worth it.
WRONG_FIRST_COST = 3


def sweep_lead(ranked: Sequence[Ranked], floor: float) -> list[LeadPoint]:
    """Right-first figures at each lead floor not above the recall floor, highest first: the
    first memory of a probe the read path knows needs one passes at the lead floor, the rest
    (and every memory of any other probe) at the recall floor."""
    points = []
    for lead in sorted((g for g in GRID if g <= floor), reverse=True):
        right = wrong = injected = expecting = 0
        for probe in ranked:
            first_floor = lead if probe.needed else floor
            first = probe.keys[0] if probe.keys and probe.similarities[0] >= first_floor else None
            if probe.expect:
                expecting += 1
                right += first is not None and first in probe.expect
                wrong += first is not None and first not in probe.expect
            else:
                injected += first is not None
        points.append(LeadPoint(lead, right / max(expecting, 1), wrong, injected))
    return points


def calibrate(report: Report) -> Calibration:
    """Pick the write gate and recall floor from the similarities of one run.

    Gate: the lowest value that rejects at least GATE_TARGET_REJECTION of the invented
    facts, since a false memory is worse than a miss and anything higher only loses true
    facts. Floor: the value with the best F1 of read recall@k and precision, where the
    precision also counts every memory injected into a probe that should recall nothing;
    on a tie, the higher floor. Lead floor: among the values down to which, from the floor, no
    probe that should recall nothing gets a memory, the highest with the most probes given their
    right memory first less WRONG_FIRST_COST for each given a wrong one first: a wrong memory
    put first misleads the reply, so it must be paid for by several right ones; and the lead
    floor is no lower than it needs to be, since below it a turn that needs memory takes its
    nearest one however unrelated.
    """
    gate_sweep = sweep_gate(report.true_similarities, report.invented_similarities)
    gate = next(p.gate for p in gate_sweep if p.invented_rejected >= GATE_TARGET_REJECTION)
    floor_sweep = sweep_floor(report.ranked, report.k)
    floor = max(floor_sweep, key=lambda p: (round(p.f1, 6), p.floor)).floor
    lead_sweep = sweep_lead(report.ranked, floor)
    allowed = []
    for point in lead_sweep:
        if point.injected > lead_sweep[0].injected:
            break
        allowed.append(point)
    expecting = sum(1 for probe in report.ranked if probe.expect)

    def worth(point: LeadPoint) -> float:
        return round(point.right_first * expecting - WRONG_FIRST_COST * point.wrong_first, 6)

    best = max(worth(point) for point in allowed)
    lead = max(point.lead for point in allowed if worth(point) == best)
    return Calibration(
        gate=gate, floor=floor, lead=lead, gate_sweep=gate_sweep, floor_sweep=floor_sweep, lead_sweep=lead_sweep
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
