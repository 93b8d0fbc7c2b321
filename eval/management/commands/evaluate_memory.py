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
from core.llm import ModelUnavailable
from eval import calibration as calibrating
from eval import locomo, quality
from eval.suite import CHATS, DEFAULT_SUITE, UNSEEN, SuiteError, load_suite
from memoryapp.write.extract import warm_up, warm_up_wanted


def _scratch_name() -> str:
    return f"memory_eval_{os.getpid()}"


# Tune on the suite, report on the unseen and chat sets (eval/README.md).
SETS = {"suite": DEFAULT_SUITE, "unseen": UNSEEN, "chats": CHATS}
REPORTING = frozenset(SETS) - {"suite"}

WRITE_COLUMNS = [
    ("turns", "turns", "{}"),
    ("write P", "write_precision", "{:.2f}"),
    ("write R", "write_recall", "{:.2f}"),
    ("false memories", "false_memories", "{}"),
    ("turns to skip", "nothing_turns", "{}"),
    ("wrote anyway", "nothing_turns_written", "{}"),
]
READ_COLUMNS = [
    ("probes", "probes", "{}"),
    ("right first", "right_first", "{:.2f}"),
    ("no floor", "right_first_unfloored", "{:.2f}"),
    ("null probes", "null_probes", "{}"),
    ("recalled anyway", "null_probes_injected", "{}"),
    ("sensitive off topic", "sensitive_off_topic", "{}"),
]


def _cells(figures: dict, columns: list) -> list[str]:
    return ["-" if figures[key] is None else fmt.format(figures[key]) for _, key, fmt in columns]


def _table(rows: list[list[str]]) -> list[str]:
    """Left-aligned columns, a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return [lines[0], "  ".join("-" * width for width in widths), *lines[1:]]


class Command(BaseCommand):
    help = (
        "Run the labelled sets through remember/recall on a scratch database and print quality figures: "
        "the suite (tuned on), the unseen and chat sets (never tuned on), side by side, by kind and by language."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--set", choices=[*SETS, "all"], default="all", help="which labelled set (default: all three)"
        )
        parser.add_argument("--suite", type=Path, help="run this suite file instead of the named sets")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument(
            "--details",
            action="store_true",
            help="also list misses, false memories and injections (with --json, under each set's 'details')",
        )
        parser.add_argument(
            "--calibrate", action="store_true", help="sweep the write gate and recall floor on the suite, write plots"
        )
        parser.add_argument(
            "--locomo", type=Path, metavar="PATH", help="run a LoCoMo JSON file (not shipped) instead of the sets"
        )
        parser.add_argument(
            "--samples",
            type=int,
            metavar="N",
            help="with --locomo: only the first N samples; with --longmemeval: N questions",
        )
        parser.add_argument(
            "--longmemeval",
            type=Path,
            metavar="PATH",
            help="run LongMemEval questions (a JSON list or a folder of one per file; not shipped) instead",
        )
        parser.add_argument(
            "--labelled-store",
            action="store_true",
            help="store each turn's labelled facts as written instead of extracting them: the read path alone",
        )
        parser.add_argument(
            "--fit-need",
            action="store_true",
            help="fit the memory-need decision for turns the parser cannot read on the suite, write its weights",
        )
        parser.add_argument(
            "--history",
            action="store_true",
            help="measure the chat history reference instead: excerpts found per probe, at each floor",
        )
        parser.add_argument(
            "--plots", type=Path, default=Path(settings.BASE_DIR) / "eval" / "plots", help="folder for the PNG plots"
        )

    def handle(self, *args, **options) -> None:
        if options["fit_need"]:
            self._fit_need(options["suite"] or DEFAULT_SUITE)
            return
        if options["longmemeval"]:
            self._longmemeval(options["longmemeval"], samples=options["samples"], as_json=options["json"])
            return
        if options["locomo"]:
            self._locomo(options["locomo"], as_json=options["json"], samples=options["samples"])
            return
        if options["suite"]:
            paths = {options["suite"].stem: options["suite"]}
        else:
            paths = SETS if options["set"] == "all" else {options["set"]: SETS[options["set"]]}
        if options["calibrate"] and set(paths) <= REPORTING:
            raise CommandError("--calibrate tunes on the suite; the unseen and chat sets are for reporting only.")
        if options["calibrate"] and options["labelled_store"]:
            raise CommandError("--calibrate needs the write path; it cannot run on a labelled store.")
        try:
            suites = {name: load_suite(path) for name, path in paths.items()}
        except SuiteError as exc:
            raise CommandError(str(exc)) from exc
        if options["history"]:
            self._history(suites)
            return
        if warm_up_wanted():
            # As the memory worker does when it starts: the seconds per turn are then each turn's own.
            try:
                seconds = warm_up()
            except ModelUnavailable as exc:
                raise CommandError(f"the model is unavailable: {exc}") from exc
            self.stderr.write(f"The model read the write path's instructions in {seconds:.1f} s.")
        with scratch_database(_scratch_name()):
            reports = {
                name: quality.run_suite(suite, name=name, labelled_store=options["labelled_store"])
                for name, suite in suites.items()
            }
        tuned = next((report for name, report in reports.items() if name not in REPORTING), None)
        calibration = calibrating.calibrate(tuned) if options["calibrate"] and tuned else None

        if options["json"]:
            data = {name: report.summary() for name, report in reports.items()}
            if options["details"]:
                for name, report in reports.items():
                    data[name]["details"] = dict(self._details(report))
            if calibration is not None:
                data["recommended"] = {
                    "write_gate": calibration.gate,
                    "recall_floor": calibration.floor,
                    "sensitive_floor": calibration.sensitive,
                    "recall_gap": calibration.gap,
                }
            self.stdout.write(json.dumps(data, indent=2))
        else:
            self._print_tables(reports)
            if options["details"]:
                for name, report in reports.items():
                    self._print_details(name, report)
        if calibration is not None:
            paths_written = calibrating.plot_calibration(tuned, calibration, options["plots"])
            if not options["json"]:
                self._print_calibration(tuned, calibration, paths_written)

    def _longmemeval(self, path: Path, *, samples: int | None, as_json: bool) -> None:
        from eval import longmemeval

        if not path.exists():
            raise CommandError(f"{path}: no such file or folder")
        with scratch_database(_scratch_name()):
            report = longmemeval.run_longmemeval(path, samples=samples, progress=not as_json)
        summary = {
            "questions": report.questions,
            "turns": report.turns,
            "extraction_failures": report.extraction_failures,
        }
        if as_json:
            self.stdout.write(json.dumps({**summary, "types": report.rows()}, indent=2))
            return
        self.stdout.write(
            f"{report.questions} questions, {report.turns} user turns ({report.extraction_failures} extraction "
            "failures); the share of questions with an evidence turn in the top 10 of each way\n"
        )
        rows = report.rows()
        for line in _table([list(rows[0]), *([str(v) for v in row.values()] for row in rows)]):
            self.stdout.write(line)

    def _history(self, suites: dict) -> None:
        from eval.history import run_history

        with scratch_database(_scratch_name()):
            reports = {name: run_history(suite, name=name) for name, suite in suites.items()}
        data = {}
        for name, report in reports.items():
            data[name] = {
                "embedding model": report.embedding_model,
                "excerpts at most": report.k,
                "at the floors": report.at(report.floor, report.question_floor),
                **({"best": report.best(), "sweep": report.sweep()} if name not in REPORTING else {}),
            }
        self.stdout.write(json.dumps(data, indent=2))

    def _fit_need(self, path: Path) -> None:
        from eval import need as fitting
        from memoryapp.embeddings import get_embedder
        from memoryapp.read.need import weights_path

        embedder = get_embedder()
        target = weights_path(embedder.name)
        if target is None:
            raise CommandError(f"cannot name a weights file after the model {embedder.name!r}")
        try:
            suite = load_suite(path)
        except SuiteError as exc:
            raise CommandError(str(exc)) from exc
        data = fitting.fit_suite(suite, embedder)
        fitting.write(data, target)
        self.stdout.write(
            f"Fitted on {data['examples']} examples of {path.name} ({data['needed']} need memory) with "
            f"{embedder.name}: agrees with {data['training_agreement']:.3f} of them. Wrote {target}."
        )

    def _locomo(self, path: Path, *, as_json: bool, samples: int | None) -> None:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        with scratch_database(_scratch_name()):
            report = locomo.run_locomo(path, samples=samples, progress=not as_json)
        everything = locomo.LocomoCategory()
        for stats in report.categories.values():
            everything.questions += stats.questions
            everything.evidence += stats.evidence
            for k in locomo.LOCOMO_KS:
                everything.found[k] += stats.found[k]
                everything.found_bm25[k] += stats.found_bm25[k]
                everything.found_history[k] += stats.found_history[k]
                everything.found_combined[k] += stats.found_combined[k]
            everything.stored += stats.stored
        rows = []
        for name, stats in [
            *((f"{n} {locomo.LOCOMO_CATEGORIES[n]}", s) for n, s in sorted(report.categories.items())),
            ("all", everything),
        ]:
            rows.append(
                {
                    "category": name,
                    "questions": stats.questions,
                    "evidence turns": stats.evidence,
                    **{f"memory@{k}": round(stats.evidence_recall(k), 3) for k in locomo.LOCOMO_KS},
                    "in store": round(stats.stored_share, 3),
                    **{f"history@{k}": round(stats.evidence_recall(k, way="history"), 3) for k in locomo.LOCOMO_KS},
                    **{f"combined@{k}": round(stats.evidence_recall(k, way="combined"), 3) for k in locomo.LOCOMO_KS},
                    **{f"bm25@{k}": round(stats.evidence_recall(k, bm25=True), 3) for k in locomo.LOCOMO_KS},
                    "other speaker recalled": stats.other_speaker_recalled if name.startswith("5 ") else "",
                }
            )
        summary = {
            "samples": report.samples,
            "turns": report.turns,
            "turns_that_wrote": report.turns_that_wrote,
            "extraction_failures": report.extraction_failures,
            "memories": report.memories,
            "skipped_questions": report.skipped_questions,
        }
        if as_json:
            self.stdout.write(json.dumps({**summary, "categories": rows}, indent=2))
            return
        self.stdout.write(
            f"{report.samples} samples, {report.turns} turns ({report.turns_that_wrote} wrote a memory, "
            f"{report.extraction_failures} extraction failures), "
            f"{report.memories} memories, {report.skipped_questions} questions skipped (no speaker or category)\n"
            "memory@k: evidence turns in the provenance of the top k recalled memories; "
            "in store: in the provenance of any of the subject's memories; "
            "history@k: among the top k past turns over the chat history reference's floor; "
            "combined@k: in the first k of memories and past turns taken in turn; "
            "bm25@k: in the top k raw turns by BM25\n"
        )
        for line in _table([list(rows[0]), *([str(v) for v in row.values()] for row in rows)]):
            self.stdout.write(line)

    def _print_tables(self, reports: dict[str, quality.Report]) -> None:
        first = next(iter(reports.values()))
        self.stdout.write(
            f"embeddings {first.embedding_model}, extraction {first.extractor}, "
            f"write gate {first.write_gate:.2f}, recall floor {first.recall_floor:.2f}, "
            f"sensitive floor {first.sensitive_floor:.2f}, k {first.k}"
        )
        for name, report in reports.items():
            self.stdout.write(
                f"{name}: {report.users} users, {report.turns} turns, {report.probes} probes, "
                f"{report.invented} invented and {report.misattributed} misattributed facts"
            )
        columns = [report.rows() for report in reports.values()]
        rows = [["measure", *reports]]
        for cells in zip(*columns, strict=True):
            rows.append([cells[0][0], *(f"{value}  {counts}" for _, value, counts in cells)])
        self.stdout.write("")
        for line in _table(rows):
            self.stdout.write(line)
        for name, report in reports.items():
            tables = [
                ("turn kind", report.by("kind", probes=False), WRITE_COLUMNS),
                ("probe kind", report.by("kind", turns=False), READ_COLUMNS),
                ("language", report.by_language(), WRITE_COLUMNS + READ_COLUMNS),
            ]
            if report.labelled_store:
                tables = [
                    ("probe kind", report.by("kind", turns=False), READ_COLUMNS),
                    ("language", report.by_language(), READ_COLUMNS),
                ]
            for title, groups, columns in tables:
                rows = [[title, *(header for header, _, _ in columns)]]
                rows += [[group, *_cells(figures, columns)] for group, figures in groups.items()]
                self.stdout.write(f"\n{name}, by {title}:")
                for line in _table(rows):
                    self.stdout.write(line)

    @staticmethod
    def _details(report: quality.Report) -> list[tuple[str, list[str]]]:
        return [
            ("Expected facts not stored", report.misses),
            ("Stored facts no turn stated (false memories)", report.false_memory_texts),
            ("Facts stored twice (twins)", report.twin_texts),
            ("Invented facts the gate let through", report.invented_accepted),
            ("No-memory probes that got a memory", report.injected),
            ("Sensitive memories given off topic", report.sensitive_given),
            ("Turns the extractor failed on", report.failure_texts),
        ]

    def _print_details(self, name: str, report: quality.Report) -> None:
        for title, items in self._details(report):
            self.stdout.write(f"\n{name}: {title} ({len(items)}):")
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
        sensitive = calibration.point_at_sensitive(calibration.sensitive)
        self.stdout.write(
            f"  sensitive floor {calibration.sensitive:.2f}  (now {report.sensitive_floor:.2f}): "
            f"sensitive memories given on their topic {sensitive.on_topic}, off it {sensitive.off_topic}"
        )
        gap = calibration.point_at_gap(calibration.gap)
        self.stdout.write(
            f"  recall gap {calibration.gap:.2f}  (now {report.recall_gap:.2f}): "
            f"recall@{report.k} {gap.recall:.3f}, precision {gap.precision:.3f} on probes that need memory"
        )
        self.stdout.write("  sensitive sweep (on topic / off topic):")
        for point in calibration.sensitive_sweep:
            if round(point.floor * 100) % 5 == 0:
                self.stdout.write(f"    {point.floor:5.2f}   {point.on_topic} / {point.off_topic}")
        self.stdout.write("  sweep (gate: stated kept / invented rejected; floor: recall / precision / injected):")
        for gate_point, floor_point in zip(calibration.gate_sweep, calibration.floor_sweep, strict=True):
            if round(gate_point.gate * 100) % 5 == 0 and gate_point.gate >= 0:
                self.stdout.write(
                    f"    {gate_point.gate:5.2f}   {gate_point.true_kept:.3f} / {gate_point.invented_rejected:.3f}"
                    f"      {floor_point.recall:.3f} / {floor_point.precision:.3f} / {floor_point.injection:.3f}"
                )
        for path in paths:
            self.stdout.write(f"  wrote {path}")
