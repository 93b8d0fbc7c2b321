"""`manage.py bench_reply`: time to the first streamed word and to the whole reply (bench/reply_bench.py)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from bench.reply_bench import CONVERSATION, SHORT_TURNS, measure_conversation, measure_replies


class Command(BaseCommand):
    help = "Time streamed replies to short turns through the configured model endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--turns", type=int, default=len(SHORT_TURNS), help="short turns to time, after a warm-up")
        parser.add_argument(
            "--conversation",
            type=int,
            default=len(CONVERSATION),
            help="then one conversation of this many turns, each memory write run between turns (0: none)",
        )
        parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")

    def _table(self, result: dict, rows: tuple[tuple[str, str], ...]) -> None:
        """p50, p95 and mean in milliseconds of each (label, key) of `result` that has figures."""
        self.stdout.write(f"{'milliseconds':<32} {'p50':>8} {'p95':>8} {'mean':>8}")
        for label, key in rows:
            figures = result[key]
            if figures.get("n"):
                self.stdout.write(f"{label:<32} {figures['p50']:8.0f} {figures['p95']:8.0f} {figures['mean']:8.0f}")

    def handle(self, *args, **options) -> None:
        result = {"short_turns": self._short(options["turns"])} if options["turns"] else {}
        if options["conversation"]:
            result["conversation"] = self._conversation(options["conversation"])
        if options["json"]:
            options["json"].write_text(json.dumps(result, indent=2))

    def _short(self, turns: int) -> dict:
        result = measure_replies(turns=turns)
        self.stdout.write(f"Streamed replies: {result['model']} at {result['endpoint']}")
        self.stdout.write(
            f"{result['answered']} of {result['turns']} short turns answered; "
            f"replies of {result['reply_chars_mean']:.0f} characters on average"
        )
        self._table(
            result,
            (
                ("first streamed text (page)", "first_text_ms"),
                ("whole reply (page)", "whole_reply_ms"),
                ("first piece (model alone)", "model_alone_first_ms"),
                ("whole answer (model alone)", "model_alone_whole_ms"),
            ),
        )
        return result

    def _conversation(self, turns: int) -> dict:
        result = measure_conversation(texts=[CONVERSATION[n % len(CONVERSATION)] for n in range(turns)])
        self.stdout.write(f"\nOne conversation of {turns} turns, each memory write run after its reply")
        if (warmed := result["write_warm_up_s"]) is not None:
            self.stdout.write(f"(the model read the write path's instructions first, in {warmed:.1f} s)")
        header = f"{'first text':>10} {'reply':>6} {'reading':>8} {'extract':>8} {'write':>6}"
        self.stdout.write(f"{'seconds':>8} {header}  turn")
        for row in result["turns"]:
            first = "-" if row["first_text"] is None else f"{row['first_text']:.1f}"
            self.stdout.write(
                f"{'':>8} {first:>10} {row['done']:6.1f} {row['reading']:8.1f} {row['extraction']:8.1f}"
                f" {row['write']:6.1f}  {row['turn'][:48]}"
            )
        self._table(
            result,
            (
                ("first text, after the first turn", "first_text_after_first_ms"),
                ("whole reply, after the first", "whole_reply_after_first_ms"),
                ("extraction (reading + extract)", "extraction_ms"),
                ("whole memory write", "write_ms"),
            ),
        )
        return result
