"""The daemon's CPU per `search` and `context` call, for daemons started from several trees at once.

To say which commit made a call dearer: one seeded corpus (`bench/corpus.py`, as
`bench/write_path_abba.py` makes it), copied for each tree, one daemon per tree on its copy,
all running together; the same queries (the latency mix) go to every daemon in turn, the
first daemon asked moving by one at every query, so that a load that comes and goes falls on
every tree alike. Per tree and method: the daemon's CPU per call (all its threads, read from
the kernel before and after each call) and the wall time's p50 over one connection (`--connect-each`: a connection per call).

    python -m bench.search_trees A=/path/to/one/checkout B=/path/to/another [--passes 3]

Only the daemons come from the trees; the corpus, the queries and the measuring are this
checkout's. Prints a table; updates no block (the readings under `write-path-abba` and
`latency-off` in docs/benchmarks.md quote it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon, cpu_s
from bench.report import machine_line

METHODS: dict[str, dict[str, Any]] = {
    "search": {"limit": 10},
    "context": {"budget_tokens": 2000},
}


def _rev(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout.strip() or "?"


Figures = dict[tuple[str, str], tuple[list[float], list[float]]]


def measure(trees: dict[str, Path], args: argparse.Namespace) -> Figures:
    """(tree, method) → (CPU seconds per call, wall seconds per call) over every pass."""
    from memd.api.client import Client

    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-trees-"))
    daemons: dict[str, Daemon] = {}
    clients: dict[str, Client] = {}
    try:
        corpus.generate(tmp / "corpus", args.files, seed=args.seed, sections=(4, 9))
        for name, tree in trees.items():
            shutil.copytree(tmp / "corpus", tmp / name / "memory")
            daemons[name] = Daemon(tmp / name, PYTHONPATH=str(tree))
        for d in daemons.values():
            d.start()
        for name, d in daemons.items():
            d.wait_ready(900)
            clients[name] = Client(d.sock, timeout=60)
        qs = list(dict.fromkeys(q for _, q in corpus.queries(args.queries, seed=args.seed)))
        warm = [q for _, q in corpus.queries(20, seed=args.seed + 1)]
        out: Figures = {(n, m): ([], []) for n in trees for m in args.methods}
        _ask(daemons, clients, warm, args, None)
        for _ in range(args.passes):
            _ask(daemons, clients, qs, args, out)
        return out
    finally:
        for c in clients.values():
            c.close()
        for d in daemons.values():
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _ask(
    daemons: dict[str, Daemon],
    clients: dict[str, Any],
    qs: list[str],
    args: argparse.Namespace,
    out: Figures | None,
) -> None:
    """Every query to every daemon, the first one asked moving on by one at each query."""
    names = list(daemons)
    for i, q in enumerate(qs):
        for k in range(len(names)):
            name = names[(i + k) % len(names)]
            for m in args.methods:
                params = {"query": q, **METHODS[m]}
                c0, t0 = cpu_s(daemons[name].pid), time.perf_counter()
                if args.connect_each:  # as a hook or a CLI call asks: a connection each
                    daemons[name].call(m, params)
                else:
                    clients[name].call(m, params)
                t1, c1 = time.perf_counter(), cpu_s(daemons[name].pid)
                if out is not None:
                    out[name, m][0].append(c1 - c0)
                    out[name, m][1].append(t1 - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", help="NAME=PATH of a checkout, for each tree")
    ap.add_argument("--files", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--connect-each", action="store_true", help="a new connection per call")
    ap.add_argument("--methods", nargs="+", default=["search"], choices=list(METHODS))
    args = ap.parse_args()
    trees = {n: Path(p).resolve() for n, p in (t.split("=", 1) for t in args.trees)}
    t0 = time.time()
    load0 = os.getloadavg()[0]
    found = measure(trees, args)
    print("| tree | commit | method | CPU per call (ms) | p50 wall (ms) | calls |")
    print("|---|---|---|---|---|---|")
    for (name, m), (cpu, wall) in found.items():
        print(f"| {name} | {_rev(trees[name])} | {m} | {statistics.fmean(cpu) * 1000:.2f} |"
              f" {statistics.median(wall) * 1000:.2f} | {len(cpu)} |")  # fmt: skip
    print(f"\n{machine_line()} Load at the start {load0:.2f}; {time.time() - t0:.0f} s.")


if __name__ == "__main__":
    main()
