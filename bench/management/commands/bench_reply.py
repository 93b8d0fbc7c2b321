"""`manage.py bench_reply`: time to the first streamed word and to the whole reply (bench/reply_bench.py)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from bench.reply_bench import SHORT_TURNS, measure_replies


class Command(BaseCommand):
    help = "Time streamed replies to short turns through the configured model endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--turns", type=int, default=len(SHORT_TURNS), help="short turns to time, after a warm-up")
        parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")

    def handle(self, *args, **options) -> None:
        result = measure_replies(turns=options["turns"])
        self.stdout.write(f"Streamed replies: {result['model']} at {result['endpoint']}")
        self.stdout.write(
            f"{result['answered']} of {result['turns']} short turns answered; "
            f"replies of {result['reply_chars_mean']:.0f} characters on average"
        )
        self.stdout.write(f"{'milliseconds':<32} {'p50':>8} {'p95':>8} {'mean':>8}")
        for label, key in (
            ("first streamed text (page)", "first_text_ms"),
            ("whole reply (page)", "whole_reply_ms"),
            ("first piece (model alone)", "model_alone_first_ms"),
            ("whole answer (model alone)", "model_alone_whole_ms"),
        ):
            figures = result[key]
            if figures.get("n"):
                row = f"{figures['p50']:8.0f} {figures['p95']:8.0f} {figures['mean']:8.0f}"
                self.stdout.write(f"{label:<32} {row}")
        if options["json"]:
            options["json"].write_text(json.dumps(result, indent=2))
