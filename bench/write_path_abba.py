"""The daemon's everyday figures, this tree against another, in A B B A order in one session.

For a change of the write path that must not cost anything elsewhere: `context` and `search`
over the socket, `remember`, edit → searchable (the watcher), conversation ingest and the
daemon's RSS, measured on daemons started from two trees (A: `--baseline`, B: this checkout)
with the same seeded corpus and log. The runs alternate A, B, B, A, so a load that drifts
during the session hits both alike; each tree's figure is the median of its runs. The
measuring code is this checkout's (`bench/`) for both: only the daemon comes from the tree.

    python -m bench.write_path_abba --baseline /path/to/other/checkout [--files 2000]

Each run: a fresh MEMD_HOME with the corpus (`bench/corpus.py`), the daemon's first index,
`--queries` context and search calls (after `--warmup`), `--remembers` remembers, `--edits`
edits by hand (in place and by rename; `bench/index_bench.py`'s edit → searchable), then a
`--turns`-turn log moved into the daemon's log folder (turns/s until all are stored, as
`bench/ingest_bench.py` measures it, and the daemon's CPU per 1,000 turns until the work the
ingest brings is done, less its idling); RSS is read after the edits and after the ingest.
A difference counts as beyond noise when it is larger than the widest gap between two runs of
the same tree (both trees' runs, against A's median): with two runs per tree, a rough bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench import corpus
from bench.daemon import Daemon, cpu_s, proc_mem
from bench.index_bench import edit_latency
from bench.ingest_bench import conversations, write_generic
from bench.report import REPO, add_common_args, machine_line, pct, publish, table

BLOCK = "write-path-abba"
INGEST_SETTLE_S = 3.0  # after the last turn is stored: the summaries it made due
FIGURES = [  # key, label, unit
    ("ctx_p50", "context p50 (socket)", "ms"),
    ("ctx_p95", "context p95 (socket)", "ms"),
    ("search_p50", "search p50 (socket)", "ms"),
    ("search_p95", "search p95 (socket)", "ms"),
    ("ctx_cpu", "context, the daemon's CPU per call", "ms"),
    ("search_cpu", "search, the daemon's CPU per call", "ms"),
    ("remember_p50", "remember p50 (socket)", "ms"),
    ("edit_p50", "edit → searchable p50", "ms"),
    ("edit_p95", "edit → searchable p95", "ms"),
    ("turns_s", "ingest, turns/s", "/s"),
    ("ingest_cpu", "ingest, the daemon's CPU per 1,000 turns", "ms"),
    ("rss_mb", "RSS after the edits", "MB"),
    ("rss_ingest_mb", "RSS after the ingest", "MB"),
]
FINE = {"ctx_cpu", "search_cpu"}  # given to 0.01 ms: a few ms that differ by tenths


def _ms(times: list[float], p: float) -> float:
    return pct(times, p) * 1000


def one_run(
    tree: Path, tmp: Path, log: Path, turns: int, args: argparse.Namespace
) -> dict[str, float]:
    """One daemon from `tree` on a fresh home: the figures of FIGURES."""
    home = tmp / "home"
    info = corpus.generate(home / "memory", args.files, seed=args.seed, sections=(4, 9))
    folder = home / "logs"
    folder.mkdir(parents=True)
    sources = json.dumps([{"path": str(folder), "format": "jsonl"}])
    out: dict[str, float] = {}
    with Daemon(home, PYTHONPATH=str(tree), MEMD_LOGS_SOURCES=sources) as d:
        d.wait_ready()
        qs = [q for _, q in corpus.queries(args.warmup + args.queries, seed=args.seed)]
        ctx: list[float] = []
        found: list[float] = []
        # The daemon's CPU for each call (all its threads): on a loaded machine the wall times
        # stretch with the load, the CPU a call takes much less.
        cpu = {"context": 0.0, "search": 0.0}
        for i, q in enumerate(qs):
            c0 = cpu_s(d.pid)
            t = time.perf_counter()
            d.call("context", {"query": q, "budget_tokens": 2000})
            t2 = time.perf_counter()
            c1 = cpu_s(d.pid)
            d.call("search", {"query": q, "limit": 10})
            t3 = time.perf_counter()
            c2 = cpu_s(d.pid)
            if i >= args.warmup:
                ctx.append(t2 - t)
                found.append(t3 - t2)
                cpu["context"] += c1 - c0
                cpu["search"] += c2 - c1
        rem: list[float] = []
        for i in range(args.remembers):
            t = time.perf_counter()
            d.call("remember", {"text": f"bench fact {i}: the staging database is number {i}"})
            rem.append(time.perf_counter() - t)
            time.sleep(args.remember_gap)  # 0: back to back (the history records behind them)
        ed = edit_latency(d, info.files, args.edits, args.seed)
        out |= {
            "ctx_p50": _ms(ctx, 50), "ctx_p95": _ms(ctx, 95),
            "search_p50": _ms(found, 50), "search_p95": _ms(found, 95),
            "ctx_cpu": cpu["context"] / len(ctx) * 1000,
            "search_cpu": cpu["search"] / len(found) * 1000,
            "remember_p50": _ms(rem, 50),
            "edit_p50": ed["all"]["p50"], "edit_p95": ed["all"]["p95"],
            "rss_mb": proc_mem(d.pid)["rss_mb"],
        }  # fmt: skip
        shutil.copy(log, tmp / log.name)
        cpu0 = cpu_s(d.pid)
        time.sleep(2)
        idle = (cpu_s(d.pid) - cpu0) / 2  # what the daemon spends doing nothing, per second
        cpu0 = cpu_s(d.pid)
        t0 = time.perf_counter()
        os.replace(tmp / log.name, folder / log.name)
        while d.call("status")["logs"]["turns"] < turns:
            if time.perf_counter() - t0 > 600:
                raise RuntimeError(f"the log was not ingested:\n{d.log_tail()}")
            time.sleep(0.1)  # status counts every turn: polling harder slows what it measures
        out["turns_s"] = turns / (time.perf_counter() - t0)
        # Less noisy than turns/s, whose end is known to the polling interval (0.1 s of ~0.5)
        # and which waits on whatever else the machine runs. Counted until the work the
        # ingest brings is done (the sessions' summaries follow the turns), less idling; the
        # status polls' CPU is in it.
        time.sleep(INGEST_SETTLE_S)
        used = cpu_s(d.pid) - cpu0 - idle * (time.perf_counter() - t0)
        out["ingest_cpu"] = used * 1000 / (turns / 1000)
        out["rss_ingest_mb"] = proc_mem(d.pid)["rss_mb"]
    return out


def render(args: argparse.Namespace, runs: list[tuple[str, dict[str, float]]]) -> str:
    def med(tree: str, key: str) -> float:
        return statistics.median(r[key] for t, r in runs if t == tree)

    def spread(key: str) -> float:
        """The widest gap between two runs of one tree, against A's median: what the same
        daemon varies by from run to run here."""
        gaps = [max(v) - min(v) for t in ("A", "B")
                if len(v := [r[key] for u, r in runs if u == t]) > 1]  # fmt: skip
        a = med("A", key)
        return max(gaps) / a if gaps and a else 0.0

    head = ["figure", *[f"run {i + 1} ({t})" for i, (t, _) in enumerate(runs)], "A median",
            "B median", "B vs A", "noise", "beyond noise"]  # fmt: skip
    rows = []
    for key, label, unit in FIGURES:
        a, b = med("A", key), med("B", key)
        change = f"{(b - a) / a:+.0%}" if a else "—"
        d = 2 if key in FINE else 1
        noise = spread(key)
        beyond = "—" if not a else ("no" if abs(b - a) / a <= noise else "**yes**")
        rows.append([f"{label} ({unit})", *[f"{r[key]:.{d}f}" for _, r in runs],
                     f"{a:.{d}f}", f"{b:.{d}f}", change, f"{noise:.0%}", beyond])  # fmt: skip
    return (
        "### The write path against its baseline, A B B A (`bench/write_path_abba.py`)\n\n"
        f"A: the tree at `{args.baseline}` ({args.baseline_rev}); B: "
        + (
            "this checkout. "
            if args.tree.resolve() == REPO
            else f"`{args.tree}` ({_rev(args.tree)}). "
        )
        + f"{args.files:,} files, {args.queries} context and search calls, {args.remembers} "
        f"remembers, {args.edits} edits by hand, a {args.turns:,}-turn log; the same seeded "
        "data for every run, the same measuring code, only the daemon comes from each tree. "
        "Noise: the widest gap between two runs of the same tree, against A's median; a "
        "difference beyond it is marked.\n\n" + table(head, rows) + "\n\n" + machine_line()
    )


def _rev(tree: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(ap, files=2000)
    ap.add_argument("--baseline", type=Path, required=True, help="the other checkout (A)")
    ap.add_argument("--tree", type=Path, default=REPO, help="the checkout measured as B")
    ap.add_argument("--order", default="ABBA", help="runs in order: A baseline, B this tree")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--remembers", type=int, default=100)
    ap.add_argument("--remember-gap", type=float, default=0.0, help="seconds between remembers")
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--turns", type=int, default=10_000)
    args = ap.parse_args()
    args.baseline = args.baseline.resolve()
    args.baseline_rev = _rev(args.baseline)
    trees = {"A": args.baseline, "B": args.tree.resolve()}
    runs: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="memd-bench-wp-") as tmp_s:
        tmp = Path(tmp_s)
        log = tmp / "history.jsonl"
        turns = write_generic(conversations(args.turns, args.seed), log)
        for i, which in enumerate(args.order):
            where = tmp / f"run{i}"
            where.mkdir()
            fig = one_run(trees[which], where, log, turns, args)
            print(f"run {i + 1} ({which}): " + ", ".join(f"{k} {v:.1f}" for k, v in fig.items()),
                  flush=True)  # fmt: skip
            runs.append((which, fig))
            shutil.rmtree(where, ignore_errors=True)
    publish(args, BLOCK, render(args, runs))


if __name__ == "__main__":
    main()
