"""The final table, as Markdown (printed by the command and pasted into docs/benchmarks.md)."""

from __future__ import annotations

from bench.runner import Results


def _ms(stats: dict[str, float], key: str) -> str:
    return f"{stats[key]:.2f}" if stats.get("n") else "-"


def _triple(stats: dict[str, float]) -> str:
    return " / ".join(_ms(stats, key) for key in ("p50", "p95", "p99"))


def _ratio(theirs: dict[str, float], ours: dict[str, float], key: str) -> str:
    if not theirs.get("n") or not ours.get("n"):
        return "-"
    ratio = theirs[key] / ours[key]
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def render(results: Results) -> str:
    m = results.machine
    lines = [
        f"Machine: {m['cpus']} CPUs, {m['memory_gib']} GiB RAM, {m['platform']}, Python {m['python']}, "
        f"PostgreSQL {m['postgresql']} + pgvector {m['pgvector']} (shared_buffers {m['shared_buffers']}). "
        f"Load average at start {tuple(round(x, 2) for x in m['load_average_start'])}, "
        f"at end {tuple(round(x, 2) for x in m.get('load_average_end', (0, 0, 0)))}. "
        f"Run took {results.seconds:.0f} s. Embedding model: {m.get('embedding_model', '-')}.",
        "",
        "### Recall (k = 5; milliseconds, p50 / p95 / p99)",
        "",
        "| dataset | rows in table | rows of the user | probes | SQL | SQL server-side (EXPLAIN ANALYZE) "
        "| recall without embedding | recall with embedding | chat turn: decision + recall "
        "| exact (without / with embedding) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.recall:
        lines.append(
            f"| {r.label} | {r.table_rows:,} | {r.user_rows:,} | {r.probes} | {_triple(r.sql)} | {_triple(r.server)} "
            f"| {_triple(r.nearest)} | {_triple(r.recall)} | {_triple(r.turn)} "
            f"| {r.exact_nearest:.3f} / {r.exact_recall:.3f} |"
        )
    if results.mem0:
        lines += [
            "",
            "### Side by side with mem0 2.2.1 (same server, data, probes, model; milliseconds p50 / p95)",
            "",
            "| dataset | ours: SQL | mem0: pgvector query | ratio p50 / p95 | ours: whole recall | mem0: Memory.search "
            "| ratio p50 / p95 | exact: ours | exact: mem0 query / search | mem0 rows returned of 5 | mem0 load |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        ours = {r.label: r for r in results.recall}
        for name, theirs in results.mem0.items():
            if "error" in theirs:
                lines.append(f"| {name} | mem0 did not run: {theirs['error']} |||||||||")
                continue
            r = ours[name]
            load = theirs["load"]
            load_text = "reused" if load.get("reused") else f"{load['memories_per_second']:.0f} memories/s"
            for variant in [theirs, theirs.get("exact")]:
                if not variant:
                    continue
                vs, s = variant["vector_search"], variant["search"]
                lines.append(
                    f"| {name}, mem0 {variant.get('variant', 'hnsw (default)')} "
                    f"| {_ms(r.sql, 'p50')} / {_ms(r.sql, 'p95')} | {_ms(vs, 'p50')} / {_ms(vs, 'p95')} "
                    f"| {_ratio(vs, r.sql, 'p50')} / {_ratio(vs, r.sql, 'p95')} "
                    f"| {_ms(r.recall, 'p50')} / {_ms(r.recall, 'p95')} | {_ms(s, 'p50')} / {_ms(s, 'p95')} "
                    f"| {_ratio(s, r.recall, 'p50')} / {_ratio(s, r.recall, 'p95')} | {r.exact_recall:.3f} "
                    f"| {variant['exact_vector_search']:.3f} / {variant['exact_search']:.3f} "
                    f"| {variant['mean_returned_vector_search']:.2f} / {variant['mean_returned_search']:.2f} "
                    f"| {load_text} |"
                )
    if results.writes:
        lines += [
            "",
            "### Write path without a model call: `remember` with a fixed extractor (bench.extractor), and with "
            "the offline default (the grammar extractor) on the same turns",
            "",
            "| extractor | turns | facts | turns/s | facts/s | ms per turn (mean; p50 / p95) "
            "| of which: embedding (local model) | extraction | gate + SQL | turns/s without the embedding |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        partitioned = results.writes_partitioned
        if partitioned:
            partitioned = {**partitioned, "extractor": f"{partitioned['extractor']}, tables partitioned by owner"}
        for w in [results.writes, results.writes_offline, partitioned]:
            if w:
                lines.append(
                    f"| {w['extractor']} | {w['turns']} | {w['facts']} | {w['turns_per_second']:.0f} "
                    f"| {w['facts_per_second']:.0f} "
                    f"| {w['remember_ms_per_turn']:.2f}; {_ms(w['latency'], 'p50')} / {_ms(w['latency'], 'p95')} "
                    f"| {w['embed_ms_per_turn']:.2f} | {w['extract_ms_per_turn']:.3f} | {w['rest_ms_per_turn']:.2f} "
                    f"| {w['without_embedding_turns_per_second']:.0f} |"
                )
    if results.partition_plans:
        lines += _partition_plans(results.partition_plans)
    if results.embedding:
        e = results.embedding
        lines += [
            "",
            f"### Embedding alone ({m.get('embedding_model', '-')})",
            "",
            f"| texts | single (texts/s) | single, ms p50 / p95 / p99 | batch of {e['batch_size']} (texts/s) |",
            "|---|---|---|---|",
            f"| {e['texts']} | {e['single_texts_per_second']:.0f} | {_triple(e['single_latency'])} "
            f"| {e['batch_texts_per_second']:.0f} |",
        ]
    if results.heavy:
        h = results.heavy
        built = "kept from an earlier run" if h["build_seconds"] is None else f"built in {h['build_seconds']:.0f} s"
        lines += [
            "",
            f"### Heavy user, realistic memories ({h['memories']:,} memories, {h['keys']:,} keys, "
            f"{h['needs']:,} needs' wordings; {h['probes']} probes of each kind)",
            "",
            f"Approximate indexes {built}: " + ", ".join(f"{name} {mb} MB" for name, mb in h["index_mb"].items()) + ".",
            "",
            "The exact answers, by the scan through which each scored best: "
            + "; ".join(
                f"{kind}: " + ", ".join(f"{scan} {count}" for scan, count in scans.items())
                for kind, scans in h["answered_by"].items()
            )
            + ".",
            "",
            "| probes | recall | ms p50 / p95 / p99 | exact top-k returned "
            "| returned at or above the exact k-th score |",
            "|---|---|---|---|---|",
        ]
        for kind, times in h["exact"].items():
            lines.append(f"| {kind} | every memory scored (exact) | {_triple(times)} | 1.000 | 1.000 |")
            lines += [
                f"| {kind} | approximate indexes, {a['lists']} lists searched | {_triple(a)} "
                f"| {a['same_ids']:.3f} | {a['by_score']:.3f} |"
                for a in h["approximate"]
                if a["probes"] == kind
            ]
    if results.pages:
        p = results.pages
        lines += [
            "",
            f"### Memory page and GET /api/memories/ ({p['client']}; {p['requests']} requests each; "
            f"{p['page_size']} rows a page; milliseconds)",
            "",
            "| user's memories | endpoint | page | rows | SQL queries | p50 | p95 | p99 |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for t in p["timings"]:
            endpoint = "GET /memories/" if t["endpoint"] == "page" else "GET /api/memories/"
            lines.append(
                f"| {t['user_memories']:,} | {endpoint} | {t['page']} | {t['rows']} | {t['queries']} "
                f"| {_ms(t['time'], 'p50')} | {_ms(t['time'], 'p95')} | {_ms(t['time'], 'p99')} |"
            )
        counts = p["query_counts"]
        lines += [
            "",
            f"Queries per request: page {counts['page']}, API {counts['api']}: "
            f"{'constant' if p['constant_queries'] else 'NOT constant'} over users and pages; "
            f"rows {'equal' if p['rows_exact'] else 'NOT equal'} to the expected newest-first slice.",
        ]
    for c in (results.chat, results.chat_worker):
        if not c:
            continue
        where = (
            "the memory write in the turn (immediate task backend)"
            if c["mode"] == "immediate"
            else "the memory write queued for the worker (no worker competing for the cores while timed)"
        )
        lines += [
            "",
            f"### One chat turn without the model call, {where} ({c['turns']} turns by {c['users']} users with "
            f"{c['per_user']} memories each; milliseconds, p50 / p95 / p99)",
            "",
            "| whole turn | recall | remember (in the turn) | the rest | of the whole: embedding "
            "| whole turn without the embedding |",
            "|---|---|---|---|---|---|",
            f"| {_triple(c['total'])} | {_triple(c['recall'])} | {_triple(c['remember'])} | {_triple(c['rest'])} "
            f"| {_triple(c['embedding'])} | {_triple(c['without_embedding'])} |",
            "",
            "| kind of turn | whole turn | recall | remember | the rest | embedding |",
            "|---|---|---|---|---|---|",
            *(
                f"| {kind} | "
                + " | ".join(
                    _triple(c["by_kind"][kind][key]) for key in ("total", "recall", "remember", "rest", "embedding")
                )
                + " |"
                for kind in ("question", "statement")
            ),
            "",
            f"Queries per turn: {c['queries']['question']:.0f} for a question, {c['queries']['statement']:.0f} for a "
            f"statement of new facts. Replies {c['replies']} of {c['turns']}, memory writes done {c['writes_done']}, "
            f"memories added {c['memories_written']}, recalled memories logged per turn {c['recalled_per_turn']:.1f}.",
        ]
        if c.get("queue_latency"):
            lines.append(
                f"Queue latency, from the write's enqueue (the turn's commit) to its end on a running worker, "
                f"statements sent one a second: {_triple(c['queue_latency'])} ms (p50 / p95 / p99) over "
                f"{c['queue_latency']['n']} writes."
            )
    return "\n".join(lines)


def _partition_plans(plans: dict) -> list[str]:
    """Per statement of a turn's log append, memory write and read: the partitions its plan reads."""
    lines = [
        "",
        f"### Statements on tables hash-partitioned by owner ({plans['partitions']} partitions each): "
        "partitions each plan reads",
        "",
        "| step | statement (first words) | partitions read, per table |",
        "|---|---|---|",
    ]
    for step in ("log", "write", "read"):
        for plan in plans[step]:
            read = ", ".join(f"{table} {count}" for table, count in plan["partitions"].items())
            statement = plan["statement"].replace("|", "\\|")
            if not read:
                read = "its row's, routed on insert" if statement.startswith("INSERT") else "no user table"
            lines.append(f"| {step} | `{statement}` | {read} |")
    return lines


def explain_section(results: Results) -> str:
    parts = []
    for r in results.recall:
        parts += [f"#### {r.label} ({r.table_rows:,} rows, user with {r.user_rows:,})", "", "```", r.explain, "```", ""]
    return "\n".join(parts)
