"""Mixed load: many clients at once mixing `context`, `search` and `remember`, p50/p99 each.

    python -m bench.mixed_load [--files 1500] [--sections 10000] [--clients 8,64] [--ops 800]
                               [--out docs/benchmarks.md] [--no-write]

Generates the 10,000-section bench tree (`bench/corpus.py`) in a temporary MEMD_HOME, starts
a real daemon on it, and for each client count runs that many threads, each on its own
connection, sending a seeded mix of requests (70% `context` with budget 2000, 20% `search`,
10% `remember`) back to back, `--ops` requests in total per round. Reports p50/p95/p99/max per
method and the throughput. Target: `context` p99 under 50 ms with 8 clients.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon, proc_mem
from bench.report import add_common_args, machine_line, publish, summary_ms, table, verdict

BLOCK = "mixed-load"
MIX = (("context", 0.7), ("search", 0.2), ("remember", 0.1))
TARGET_CONTEXT_P99_MS = 50.0


def pick(rng: random.Random) -> str:
    x = rng.random()
    for name, share in MIX:
        if x < share:
            return name
        x -= share
    return MIX[-1][0]


def run_round(d: Daemon, qs: list[tuple[str, str]], clients: int, ops: int, seed: int) -> dict[str, Any]:  # fmt: skip
    """`clients` threads, `ops` requests in total; latencies in seconds by method."""
    from memd.api import messages as m
    from memd.api.client import Client

    times: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients)
    per_client = max(1, ops // clients)

    def client(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        mine: dict[str, list[float]] = defaultdict(list)
        try:
            with Client(d.sock, timeout=120) as c:
                barrier.wait()
                for n in range(per_client):
                    method = pick(rng)
                    q = qs[rng.randrange(len(qs))][1]
                    t = time.perf_counter()
                    if method == "context":
                        c.request(m.CONTEXT, m.ContextParams(query=q, budget_tokens=2000))
                    elif method == "search":
                        c.request(m.SEARCH, m.SearchParams(query=q, limit=10))
                    else:
                        c.request(m.REMEMBER, m.RememberParams(text=f"bench note {i}-{n}: {q}"))
                    mine[method].append(time.perf_counter() - t)
        except Exception as exc:  # reported in the output, not hidden
            with lock:
                errors.append(f"client {i}: {type(exc).__name__}: {exc}")
        with lock:
            for k, v in mine.items():
                times[k].extend(v)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"times": dict(times), "wall": wall, "errors": errors}


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-mix-"))
    d: Daemon | None = None
    try:
        home = tmp / "home"
        info = corpus.generate(home / "memory", args.files, seed=args.seed, sections=(4, 9),
                               total_sections=args.sections)  # fmt: skip
        print(f"corpus: {info.summary()}", flush=True)
        d = Daemon(home)
        d.start()
        ready = d.wait_ready()
        qs = corpus.queries(1000, seed=args.seed)
        rounds = {}
        mem = {"start": proc_mem(d.pid)}
        for clients in [int(x) for x in args.clients.split(",")]:
            print(f"{clients} clients, {args.ops} requests …", flush=True)
            rounds[clients] = run_round(d, qs, clients, args.ops, args.seed)
            mem[f"after {clients} clients"] = proc_mem(d.pid)
        d.stop()
        d = None
        return render(args, info, ready, rounds, mem)
    finally:
        if d is not None:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def render(args: argparse.Namespace, info: corpus.CorpusInfo, ready: float,
           rounds: dict[int, dict[str, Any]], mem: dict[str, dict[str, float]]) -> str:  # fmt: skip
    rows = []
    for clients, r in rounds.items():
        total = sum(len(v) for v in r["times"].values())
        for method, _ in MIX:
            s = summary_ms(r["times"].get(method, []))
            target = ""
            if method == "context" and clients == 8:
                target = f"p99 < {TARGET_CONTEXT_P99_MS:.0f}: " + verdict(
                    s["p99"], TARGET_CONTEXT_P99_MS
                )
            rows.append([f"{clients} clients: `{method}`", s["n"], f"{s['p50']:.2f}",
                         f"{s['p95']:.2f}", f"{s['p99']:.2f}", f"{s['max']:.1f}", target])  # fmt: skip
        rows.append([f"{clients} clients: all ({total / r['wall']:.0f} requests/s)", total,
                     "", "", "", "", f"{len(r['errors'])} errors"])  # fmt: skip
    errors = [e for r in rounds.values() for e in r["errors"]][:5]
    mem_line = ", ".join(f"{k} {v['rss_mb']:.1f} MB" for k, v in mem.items())
    return "\n".join([
        "### Mixed load: `context`, `search`, `remember` from many clients at once (`bench/mixed_load.py`)",
        "",
        f"Tree: {info.summary()}; daemon ready in {ready:.2f} s. Each round: that many client "
        f"threads, one connection each, {args.ops:,} requests in total sent back to back, mixed "
        "70% `context` (budget 2000), 20% `search` (limit 10), 10% `remember` (into "
        "`_core/notes.md`, which grows through the run). Times in milliseconds, from send to "
        "answer at the client (queueing in the daemon included).",
        "",
        table(["round: method", "requests", "p50", "p95", "p99", "max", "target"], rows),
        "",
        f"Daemon RSS: {mem_line}.",
        *(["", "Errors: " + "; ".join(errors)] if errors else []),
        "",
        machine_line(),
    ])  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, files=1_500)
    ap.add_argument("--sections", type=int, default=10_000)
    ap.add_argument("--clients", default="8,64", help="client counts, comma-separated")
    ap.add_argument("--ops", type=int, default=800, help="requests per round, all clients")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
