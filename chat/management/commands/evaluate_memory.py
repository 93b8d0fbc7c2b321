"""`manage.py evaluate_memory`: the memory-quality table, on a scratch database.

A thin entry point to the harness in `eval/`. It sits in chat, the top of the apps'
dependency chain, because the harness drives whole conversations.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.databases import scratch_database
from eval import calibration as calibrating
from eval import locomo, quality
from eval.suite import DEFAULT_SUITE, SuiteError, load_suite


def _scratch_name() -> str:
    return f"memory_eval_{os.getpid()}"


class Command(BaseCommand):
    help = "Run the labelled suite through remember/recall on a throwaway database and print quality figures."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--suite", type=Path, default=DEFAULT_SUITE, help="suite JSON file")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--details", action="store_true", help="also list misses, false memories and injections")
        parser.add_argument(
            "--calibrate", action="store_true", help="sweep the write gate and recall floor, write plots"
        )
        parser.add_argument(
            "--locomo", type=Path, metavar="PATH", help="run a LoCoMo JSON file (not shipped) instead of the suite"
        )
        parser.add_argument(
            "--plots", type=Path, default=Path(settings.BASE_DIR) / "eval" / "plots", help="folder for the PNG plots"
        )

    def handle(self, *args, **options) -> None:
        if options["locomo"]:
            self._locomo(options["locomo"], as_json=options["json"])
            return
        try:
            suite = load_suite(options["suite"])
        except SuiteError as exc:
            raise CommandError(str(exc)) from exc
        with scratch_database(_scratch_name()):
            report = quality.run_suite(suite)
        calibration = calibrating.calibrate(report) if options["calibrate"] else None

        if options["json"]:
            data = report.summary()
            if calibration is not None:
                data["recommended"] = {"write_gate": calibration.gate, "recall_floor": calibration.floor}
            self.stdout.write(json.dumps(data, indent=2))
        else:
            self._print_table(report)
            if options["details"]:
                self._print_details(report)
        if calibration is not None:
            paths = calibrating.plot_calibration(report, calibration, options["plots"])
            if not options["json"]:
                self._print_calibration(report, calibration, paths)

    def _locomo(self, path: Path, *, as_json: bool) -> None:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        with scratch_database(_scratch_name()):
            report = locomo.run_locomo(path)
        rows = []
        for number, stats in sorted(report.categories.items()):
            row = {
                "category": f"{number} {locomo.LOCOMO_CATEGORIES[number]}",
                "questions": stats.questions,
                "evidence turns": stats.evidence,
                **{f"evidence@{k}": round(stats.evidence_recall(k), 3) for k in locomo.LOCOMO_KS},
                "other speaker recalled": stats.other_speaker_recalled if number == 5 else "",
            }
            rows.append(row)
        if as_json:
            self.stdout.write(
                json.dumps(
                    {
                        "samples": report.samples,
                        "turns": report.turns,
                        "memories": report.memories,
                        "skipped_questions": report.skipped_questions,
                        "categories": rows,
                    },
                    indent=2,
                )
            )
            return
        self.stdout.write(
            f"{report.samples} samples, {report.turns} turns, {report.memories} memories, "
            f"{report.skipped_questions} questions skipped (no speaker or category)\n"
        )
        if rows:
            table = [list(rows[0]), *([str(v) for v in row.values()] for row in rows)]
            widths = [max(len(str(r[i])) for r in table) for i in range(len(table[0]))]
            for n, row in enumerate(table):
                self.stdout.write("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
                if n == 0:
                    self.stdout.write("  ".join("-" * w for w in widths))

    def _print_table(self, report: quality.Report) -> None:
        self.stdout.write(
            f"{report.users} users, {report.turns} turns, {report.probes} probes, {report.invented} invented facts; "
            f"embeddings {report.embedding_model}, extraction {report.extractor}, "
            f"write gate {report.write_gate:.2f}, recall floor {report.recall_floor:.2f}, k {report.k}\n"
        )
        rows = [("measure", "value", "counts"), *report.rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for n, row in enumerate(rows):
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                self.stdout.write("  ".join("-" * width for width in widths))

    def _print_details(self, report: quality.Report) -> None:
        for title, items in [
            ("Expected facts not stored", report.misses),
            ("Stored facts no turn stated (false memories)", report.false_memory_texts),
            ("Facts stored twice (twins)", report.twin_texts),
            ("Invented facts the gate let through", report.invented_accepted),
            ("No-memory probes that got a memory", report.injected),
        ]:
            self.stdout.write(f"\n{title} ({len(items)}):")
            for item in items:
                self.stdout.write(f"  {item}")

    def _print_calibration(
        self, report: quality.Report, calibration: calibrating.Calibration, paths: list[Path]
    ) -> None:
        gate = calibration.point_at_gate(calibration.gate)
        floor = calibration.point_at_floor(calibration.floor)
        self.stdout.write(f"\nCalibration for {report.embedding_model}:")
        self.stdout.write(
            f"  write gate   {calibration.gate:.2f}  (now {report.write_gate:.2f}): "
            f"keeps {gate.true_kept:.3f} of stated facts, rejects {gate.invented_rejected:.3f} of invented ones"
        )
        self.stdout.write(
            f"  recall floor {calibration.floor:.2f}  (now {report.recall_floor:.2f}): "
            f"recall@{report.k} {floor.recall:.3f}, precision {floor.precision:.3f}, "
            f"no-memory probes injected {floor.injection:.3f}"
        )
        self.stdout.write("  sweep (gate: stated kept / invented rejected; floor: recall / precision / injected):")
        for gate_point, floor_point in zip(calibration.gate_sweep, calibration.floor_sweep, strict=True):
            if round(gate_point.gate * 100) % 5 == 0 and gate_point.gate >= 0:
                self.stdout.write(
                    f"    {gate_point.gate:5.2f}   {gate_point.true_kept:.3f} / {gate_point.invented_rejected:.3f}"
                    f"      {floor_point.recall:.3f} / {floor_point.precision:.3f} / {floor_point.injection:.3f}"
                )
        for path in paths:
            self.stdout.write(f"  wrote {path}")
