"""`python manage.py bench_memory`: the memory benchmark (logic in the top-level `bench` package).

A thin entry point; it sits in chat, the top of the apps' dependency chain, because the
benchmark drives whole chat turns.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = (
        "Seed separate benchmark databases with synthetic memories and measure recall latency and "
        "exactness, write and embedding throughput, the memory page and API for a user with 10,000 "
        "memories, one chat turn without the model call, and mem0 side by side. See docs/benchmarks.md."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--sizes", default="100k,1m", help="datasets to measure: 100k, 1m, heavy, partitioned (default: 100k,1m)"
        )
        parser.add_argument("--smoke", action="store_true", help="a few thousand rows, a few probes, no mem0")
        parser.add_argument("--probes", type=int, default=1000, help="probes per dataset (default 1000)")
        parser.add_argument("--heavy-probes", type=int, default=200, help="probes for the heavy user (default 200)")
        parser.add_argument("--mem0", default="100k", help="datasets to also load into mem0 ('' for none)")
        parser.add_argument("--mem0-reload", action="store_true", help="reload mem0's data even if present")
        parser.add_argument("--write-users", type=int, default=25, help="writers for the write path (40 turns each)")
        parser.add_argument(
            "--page-requests", type=int, default=50, help="timed requests per page and API URL (0 to skip)"
        )
        parser.add_argument("--chat-users", type=int, default=50, help="users taking 4 chat turns each (0 to skip)")
        parser.add_argument("--reseed", action="store_true", help="reseed our datasets even if present")
        parser.add_argument("--seed-only", action="store_true", help="seed the datasets (or keep them) and stop")
        parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
        parser.add_argument("--explain", action="store_true", help="also print one EXPLAIN ANALYZE per dataset")
        parser.add_argument("--drop", action="store_true", help="drop every benchmark database and exit")

    def handle(self, *args, **options) -> None:
        from bench import report, runner
        from core.databases import drop_database

        if options["drop"]:
            for name in runner.bench_databases():
                drop_database(name)
                self.stdout.write(f"dropped {name}")
            return
        if options["smoke"]:
            opts = runner.Options(
                sizes=["smoke"],
                probes=50,
                heavy_probes=20,
                write_users=2,
                embed_texts=64,
                page_memories=1_000,
                page_requests=5,
                chat_users=5,
            )
            opts.mem0_sizes = [s for s in options["mem0"].split(",") if s == "smoke"]
        else:
            sizes = [s.strip().lower() for s in options["sizes"].split(",") if s.strip()]
            unknown = sorted(set(sizes) - set(runner.DATASETS))
            if unknown:
                self.stderr.write(f"unknown sizes {unknown}; choose from {sorted(runner.DATASETS)}")
                return
            opts = runner.Options(
                sizes=sizes,
                probes=options["probes"],
                heavy_probes=options["heavy_probes"],
                mem0_sizes=[s.strip().lower() for s in options["mem0"].split(",") if s.strip()],
                write_users=options["write_users"],
                page_requests=options["page_requests"],
                chat_users=options["chat_users"],
            )
        opts.mem0_reload = options["mem0_reload"]
        opts.reseed = options["reseed"]
        opts.seed_only = options["seed_only"]
        results = runner.run(opts)
        if opts.seed_only:
            return
        self.stdout.write(report.render(results))
        if options["explain"]:
            self.stdout.write("\n" + report.explain_section(results))
        if options["json"]:
            options["json"].write_text(json.dumps(results.as_dict(), indent=2, default=str))
