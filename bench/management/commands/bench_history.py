"""`manage.py bench_history`: the chat history reference for a user with many past turns
(bench/history_bench.py), in a scratch database dropped afterwards."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from bench.history_bench import run_history_bench
from core.databases import scratch_database


class Command(BaseCommand):
    help = "Time the chat history reference's statement and the combined read path for a heavy user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--turns", type=int, default=100_000, help="the user's past turns (default 100000)")
        parser.add_argument("--repeats", type=int, default=10, help="passes over the ten probes (default 10)")
        parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")

    def handle(self, *args, **options) -> None:
        with scratch_database("memory_bench_history"):
            result = run_history_bench(turns=options["turns"], repeats=options["repeats"])
        self.stdout.write(
            f"{result.turns} past turns, {result.probes} probes, {result.excerpts_given} excerpts given, "
            f"shared_buffers {result.machine['shared_buffers']}"
        )
        self.stdout.write(f"{'milliseconds':<44} {'p50':>8} {'p95':>8} {'p99':>8}")
        for label, figures in (
            ("history_nearest (the statement)", result.statement_ms),
            ("history_nearest, matching by every word", result.every_word_ms),
            ("read_turn + history_for_turn (combined)", result.combined_ms),
        ):
            self.stdout.write(f"{label:<44} {figures['p50']:8.1f} {figures['p95']:8.1f} {figures['p99']:8.1f}")
        self.stdout.write(
            f"exact: {result.top10_exact:.3f} of the exact top 10, {result.nearest30_exact:.3f} of the exact "
            f"{30} nearest by embedding; the exact nearest's similarity at places 1, 10, 30: "
            + ", ".join(f"{value:.3f}" for value in result.nearest_similarity)
        )
        self.stdout.write(f"plan of the statement for the first probe:\n{result.plan}")
        if options["json"]:
            options["json"].write_text(json.dumps(asdict(result), indent=2))
