"""`context` and `search` latency over the socket and in-process; one-shot CLI wall time.

    python -m bench.latency_bench [--files 1500] [--sections 10000] [--queries 1000] [--out docs/benchmarks.md] [--no-write]
    python -m bench.latency_bench --semantic [--threads 2] [--home DIR]   # on vs off: own block

Without --semantic the daemon runs with `semantic.kind = off` (the full-text path, as without
the extra). With --semantic two daemons run on the same tree, one with recall by meaning on
(after its backfill) and one with it off, and every query goes to both (`--home` keeps the
first one's MEMD_HOME, vectors included, for the next run).

Generates a tree of 10,000 `##` sections in ~1,500 files in a temporary MEMD_HOME, starts a
real daemon on it, and runs the same ~1,000 realistic queries (topic names, vocabulary terms,
project questions, Chinese words and sentences, mixed) through

  * the socket: `context` (budget 2000) and `search` (limit 10) on one persistent connection,
  * in-process: `build_context` / `search_sections` on a read-only connection to the same index,

and reports p50/p95/p99 of each and the socket/in-process ratio (transport + JSON + thread
hand-off). Then the one-shot CLI: `python -m memd search …` as a subprocess (process start
included, daemon running) and `python -c "import memd.cli"`, mean of 10 each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon, bench_env, cpu_s, proc_mem
from bench.report import add_common_args, machine_line, publish, summary_ms, table, verdict
from memd.core.settings import Settings

BLOCK = "latency"


def _timed(fn: Callable[..., Any], *a: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn(*a)
    return time.perf_counter() - t, out


def open_engine(home: Path, db: Path) -> Any:
    """The daemon's own handlers (features wired: conversation providers, turn search) on a
    read-only store: the socket path minus transport, thread hand-off and usage writes."""
    from memd.app import Engine
    from memd.core import settings

    return Engine(settings.load(env=bench_env(home)), open_store(db))


def open_store(db: Path) -> Any:
    """A read-only store whose reader on this thread has the page cache of the daemon's query
    thread, so in-process and socket runs differ by the transport only."""
    from memd.db import Store

    store = Store.open_readonly(db)
    store.make_hot_reader()
    return store


def interleaved_runs(d: Daemon, db: Path, qs: list[tuple[str, str]], warmup: int) -> dict[str, Any]:
    """Each query through all six paths in turn, so drifting machine load hits them alike."""
    from memd.api.client import Client
    from memd.memory.context import ContextRequest, build_context
    from memd.memory.search import search_sections

    times: dict[str, list[float]] = {
        k: [] for k in ("sock_ctx", "eng_ctx", "in_ctx", "sock_search", "eng_search", "in_search")
    }
    results: list[dict[str, Any]] = []
    store = open_store(db)
    engine = open_engine(d.home, db)
    try:
        conn = store.read()
        with Client(d.sock, timeout=30) as c:
            for i, (_, q) in enumerate([*qs[:warmup], *qs]):
                steps = (
                    (
                        "sock_ctx",
                        lambda q=q: c.call("context", {"query": q, "budget_tokens": 2000}),
                    ),
                    (
                        "eng_ctx",
                        lambda q=q: engine.handle("context", {"query": q, "budget_tokens": 2000}),
                    ),
                    (
                        "in_ctx",
                        lambda q=q: build_context(
                            conn, ContextRequest(query=q, budget_tokens=2000)
                        ),
                    ),
                    ("sock_search", lambda q=q: c.call("search", {"query": q, "limit": 10})),
                    ("eng_search", lambda q=q: engine.handle("search", {"query": q, "limit": 10})),
                    ("in_search", lambda q=q: search_sections(conn, q, limit=10)),
                )
                for name, fn in steps:
                    dt, res = _timed(fn)
                    if i >= warmup:
                        times[name].append(dt)
                        if name == "sock_ctx":
                            results.append(res)
    finally:
        store.close()
        engine.store.close()
    return {**times, "results": results}


def cpu_runs(d: Daemon, db: Path, qs: list[tuple[str, str]]) -> dict[str, float]:
    """CPU milliseconds per call: the daemon's (psutil, all its threads) vs in-process (thread
    CPU). Unlike wall time this barely moves when other processes compete for the cores."""
    import psutil

    from memd.api.client import Client
    from memd.memory.context import ContextRequest, build_context
    from memd.memory.search import search_sections

    proc = psutil.Process(d.pid)

    def daemon_cpu() -> float:
        t = proc.cpu_times()
        seconds: float = t.user + t.system
        return seconds

    out: dict[str, float] = {}
    with Client(d.sock, timeout=30) as c:
        for method, params in (("context", {"budget_tokens": 2000}), ("search", {"limit": 10})):
            c0 = daemon_cpu()
            for _, q in qs:
                c.call(method, {"query": q, **params})
            time.sleep(0.2)  # let the queued usage write after the last call finish
            out[f"sock_{method}"] = (daemon_cpu() - c0) / len(qs) * 1000
    store = open_store(db)
    engine = open_engine(d.home, db)
    try:
        conn = store.read()
        t0 = time.thread_time()
        for _, q in qs:
            build_context(conn, ContextRequest(query=q, budget_tokens=2000))
        out["in_context"] = (time.thread_time() - t0) / len(qs) * 1000
        t0 = time.thread_time()
        for _, q in qs:
            search_sections(conn, q, limit=10)
        out["in_search"] = (time.thread_time() - t0) / len(qs) * 1000
        for method, params in (("context", {"budget_tokens": 2000}), ("search", {"limit": 10})):
            t0 = time.thread_time()
            for _, q in qs:
                engine.handle(method, {"query": q, **params})
            out[f"eng_{method}"] = (time.thread_time() - t0) / len(qs) * 1000
    finally:
        store.close()
        engine.store.close()
    return out


def concurrent_runs(
    d: Daemon, qs: list[tuple[str, str]], clients: int, per_client: int
) -> dict[str, Any]:
    """`clients` threads, each on its own connection, sending `context` back to back."""
    from memd.api.client import Client

    lat: list[float] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        mine: list[float] = []
        with Client(d.sock, timeout=60) as c:
            for j in range(per_client):
                q = qs[(k * per_client + j) % len(qs)][1]
                dt, _ = _timed(c.call, "context", {"query": q, "budget_tokens": 2000})
                mine.append(dt)
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return {"lat": lat, "seconds": time.perf_counter() - t}


def cli_runs(home: Path, n: int) -> dict[str, list[float]]:
    env = bench_env(home)
    py = sys.executable
    cmds = {
        "python -c pass": [py, "-c", "pass"],
        'python -c "import memd.cli"': [py, "-c", "import memd.cli"],
        'python -m memd search "vue component performance"': [
            py,
            "-m",
            "memd",
            "search",
            "vue component performance",
        ],
    }
    out: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(2):  # warm the page cache and .pyc files
        for argv in cmds.values():
            subprocess.run(argv, env=env, capture_output=True, check=True, timeout=60)
    for _ in range(n):
        for name, argv in cmds.items():
            t = time.perf_counter()
            r = subprocess.run(argv, env=env, capture_output=True, timeout=60)
            out[name].append(time.perf_counter() - t)
            if r.returncode != 0:
                raise RuntimeError(f"{name} failed: {r.stderr.decode(errors='replace')}")
            if "memd search" in name and b"no daemon" in r.stderr:
                raise RuntimeError("the CLI did not reach the daemon")
    return out


def import_profile(home: Path, top: int = 6) -> list[tuple[str, float]]:
    """The slowest imports (cumulative µs) of `memd search` from `python -X importtime`."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memd", "search", "vue"],
        env=bench_env(home), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    rows: list[tuple[str, float]] = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self_us, cum_us, raw = line.split(":", 1)[1].split("|")
        depth = (len(raw) - len(raw.lstrip()) - 1) // 2
        if depth == 0:  # top-level imports only
            rows.append((raw.strip(), int(cum_us) / 1000))
    rows.sort(key=lambda x: -x[1])
    return rows[:top]


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-lat-"))
    d: Daemon | None = None
    try:
        home = tmp / "home"
        t = time.perf_counter()
        info = corpus.generate(home / "memory", args.files, seed=args.seed, sections=(4, 9),
                               total_sections=args.sections)  # fmt: skip
        print(f"corpus: {info.summary()} in {time.perf_counter() - t:.1f}s", flush=True)
        d = Daemon(home)
        d.start()
        ready = d.wait_ready()
        st = d.call("status")
        print(f"daemon ready in {ready:.2f}s: {st['index']['files']:,} files, "
              f"{st['index']['sections']:,} sections", flush=True)  # fmt: skip
        if args.turns:
            from bench.ingest_bench import conversations, write_generic

            log = tmp / "history.jsonl"
            write_generic(conversations(args.turns, args.seed), log)
            t = time.perf_counter()
            got = d.call("import", {"path": str(log)}, timeout=600)
            print(
                f"conversation history: {got['added']:,} turns imported in {time.perf_counter() - t:.1f}s",
                flush=True,
            )
        mem0 = proc_mem(d.pid)
        qs = corpus.queries(args.queries, seed=args.seed)
        print(f"{len(qs)} queries × (socket, in-process) × (context, search) …", flush=True)
        runs = interleaved_runs(d, Path(st["index"]["path"]), qs, args.warmup)
        mem1 = proc_mem(d.pid)
        print("CPU per call …", flush=True)
        cpu = cpu_runs(d, Path(st["index"]["path"]), qs[: args.cpu_queries])
        print(f"  {cpu}", flush=True)
        print(f"{args.clients} concurrent clients …", flush=True)
        conc = concurrent_runs(d, qs, args.clients, args.per_client)
        mem2 = proc_mem(d.pid)
        import psutil

        threads = psutil.Process(d.pid).num_threads()
        print("CLI …", flush=True)
        cli = cli_runs(home, args.cli_runs)
        imports = import_profile(home)
        d.stop()
        d = None
        mems = {"after indexing": mem0, "after the sequential runs": mem1,
                f"after {args.clients} concurrent clients": mem2}  # fmt: skip
        return render(args, info, st, ready, qs, runs, cpu, conc, cli, imports, mems, threads)
    finally:
        if d is not None:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def render(args: argparse.Namespace, info: corpus.CorpusInfo, st: dict[str, Any], ready: float,
           qs: list[tuple[str, str]], runs: dict[str, Any], cpu: dict[str, float], conc: dict[str, Any],
           cli: dict[str, list[float]], imports: list[tuple[str, float]],
           mems: dict[str, dict[str, float]], threads: int) -> str:  # fmt: skip
    sc, ss = summary_ms(runs["sock_ctx"]), summary_ms(runs["sock_search"])
    ic, is_ = summary_ms(runs["in_ctx"]), summary_ms(runs["in_search"])
    ec, es = summary_ms(runs["eng_ctx"]), summary_ms(runs["eng_search"])
    cc = summary_ms(conc["lat"])

    def row(name: str, s: dict[str, float], target: str = "", v: str = "") -> tuple[str, ...]:
        return (
            name,
            f"{s['p50']:.2f}",
            f"{s['p95']:.2f}",
            f"{s['p99']:.2f}",
            f"{s['max']:.1f}",
            target,
            v,
        )

    ctx_verdict = f"p50 {verdict(sc['p50'], 5, 2)}; p99 {verdict(sc['p99'], 20, 10)}"
    rows = [
        row("`context` over the socket (budget 2000)", sc, "p50 < 5, p99 < 20 (goal 2 / 10)", ctx_verdict),
        row("`context` in-process, the daemon's handler (`Engine.handle`)", ec),
        row("`context` in-process, library (`build_context`)", ic),
        row("`search` over the socket (limit 10)", ss),
        row("`search` in-process, the daemon's handler (`Engine.handle`)", es),
        row("`search` in-process, library (`search_sections`)", is_),
        row(f"`context` over the socket, {args.clients} concurrent clients"
            f" ({len(conc['lat']) / conc['seconds']:.0f} requests/s in total)", cc),
    ]  # fmt: skip

    def ratio(
        name: str, a: dict[str, float], b: dict[str, float], ca: float, cb: float
    ) -> tuple[str, ...]:
        return (name, f"{a['p50'] / b['p50']:.2f}×", f"{a['p99'] / b['p99']:.2f}×",
                f"{a['p50'] - b['p50']:.2f} ms", f"{ca:.2f} / {cb:.2f} ms ({ca / cb:.2f}×)")  # fmt: skip

    ratio_rows = [
        ratio(
            "context: socket / daemon's handler", sc, ec, cpu["sock_context"], cpu["eng_context"]
        ),
        ratio("context: socket / `build_context`", sc, ic, cpu["sock_context"], cpu["in_context"]),
        ratio("search: socket / daemon's handler", ss, es, cpu["sock_search"], cpu["eng_search"]),
        ratio("search: socket / `search_sections`", ss, is_, cpu["sock_search"], cpu["in_search"]),
    ]

    by_class: dict[str, list[int]] = defaultdict(list)
    for i, (cls, _) in enumerate(qs):
        by_class[cls].append(i)
    class_rows = []
    for cls, idx in by_class.items():
        cs = summary_ms([runs["sock_ctx"][i] for i in idx])
        res = [runs["results"][i] for i in idx]
        topic = [sum(1 for s in r["sections"] if s["source"] == "topic") for r in res]
        toks = [r["tokens"] for r in res]
        class_rows.append((cls, len(idx), f"{cs['p50']:.2f}", f"{cs['p99']:.2f}",
                           f"{statistics.fmean(topic):.1f}", f"{sum(1 for x in topic if x == 0) / len(idx):.0%}",
                           f"{statistics.fmean(toks):.0f}"))  # fmt: skip
    examples: dict[str, str] = {}
    for cls, q in qs:
        examples.setdefault(cls, q)

    def mean(xs: list[float]) -> float:
        return statistics.fmean(xs)

    cli_search = next(v for k, v in cli.items() if "memd search" in k)
    cli_rows = [
        (f"`{k}`", f"{mean(v) * 1000:.0f} ms", f"{min(v) * 1000:.0f} / {max(v) * 1000:.0f} ms")
        for k, v in cli.items()
    ]
    cli_rows.append(
        ("one-shot CLI search vs target < 0.3 s (goal)", verdict(mean(cli_search), 0.3), "")
    )
    body = [
        "### `context` / `search` latency and one-shot CLI (`bench/latency_bench.py`)",
        "",
        f"Tree: {info.summary()} (seed {args.seed})"
        + (f", plus a conversation history of {args.turns:,} generated turns" if args.turns else "")
        + "; the daemon indexed"
        f" {st['index']['files']:,} files / {st['index']['sections']:,} sections in {ready:.2f} s"
        f" (spawn → socket ready). {len(qs):,} queries after {args.warmup} warm-up queries; each"
        " query goes through the six paths in turn so that load drift hits all alike. One persistent"
        " socket connection. The in-process runs read the daemon's index file read-only (with the"
        " page cache of the daemon's query thread), either through the daemon's own handler"
        " (`Engine(settings, Store.open_readonly(db)).handle`,"
        " every feature wired: conversation providers, turn search) or through the bare library"
        " functions. Socket / handler therefore isolates transport, JSON, the thread hand-off and"
        " the per-request usage write; handler / library is what the wired features add."
        f" Concurrent: {args.clients} threads × {args.per_client} `context`"
        " calls, one connection each. Times in milliseconds.",
        "",
        table(["path", "p50", "p95", "p99", "max", "target (ms)", "verdict"], rows),
        "",
        table(
            [
                "socket / in-process",
                "ratio at p50",
                "ratio at p99",
                "added at p50",
                f"CPU per call, daemon / in-process (mean of {args.cpu_queries})",
            ],
            ratio_rows,
        ),  # fmt: skip
        "",
        "By query class (socket `context`; *topic sections* = sections chosen from topic/note"
        " files besides `_core/`):",
        "",
        table(
            [
                "class",
                "queries",
                "p50",
                "p99",
                "topic sections per answer",
                "answers with none",
                "mean tokens",
            ],
            class_rows,
        ),  # fmt: skip
        "",
        "Example queries: " + "; ".join(f"{k}: `{v}`" for k, v in examples.items()) + ".",
        "",
        "Daemon RSS: "
        + ", ".join(f"{m['rss_mb']:.1f} MB {k}" for k, m in mems.items())
        + f" (peak {max(m['peak_mb'] for m in mems.values()):.1f} MB; {threads} threads at the end).",
        "",
        f"One-shot CLI, daemon running, mean of {args.cli_runs} (process start included):",
        "",
        table(["command", "mean", "min / max"], cli_rows),
        "",
        "Slowest top-level imports of `memd search` (`python -X importtime`, cumulative): "
        + ", ".join(f"`{n}` {ms:.1f} ms" for n, ms in imports)
        + ".",
        "",
        machine_line(),
    ]
    return "\n".join(body)


# -- with recall by meaning (--semantic) ---------------------------------------------------------
SEM_BLOCK = "latency-semantic"


def wait_backfilled(d: Daemon, timeout: float = 7200) -> tuple[float, dict[str, Any]]:
    """Seconds until the daemon's backfill worker has embedded everything, and its status."""
    t = time.perf_counter()
    while time.perf_counter() - t < timeout:
        sem = d.call("status").get("semantic", {})
        b = sem.get("backfill", {})
        if b.get("state") == "idle" and b.get("done") and not b.get("pending"):
            return time.perf_counter() - t, sem
        time.sleep(1.0)
    raise RuntimeError(f"backfill not done after {timeout:.0f} s")


def embedding_share(queries: list[str], threads: int) -> dict[str, float]:
    """What embedding one query costs alone (this process, the packaged model, uncached)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from memd.semantic.packaged import PackagedEmbedder

    emb = PackagedEmbedder(threads=threads)
    emb.embed(["warm up"], kind="query")
    wall, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        emb.embed([q], kind="query")
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = summary_ms(wall)
    out["cpu_p50"] = summary_ms(cpu)["p50"]
    # The cost grows with the query's length (a hook asks with the whole prompt).
    words = " ".join(queries).split()
    for n in (8, 32, 128, 400):
        text = " ".join((words * (n // len(words) + 1))[:n])
        times = []
        for _ in range(5):
            c = time.process_time()
            emb.embed([text], kind="query")
            times.append(time.process_time() - c)
        out[f"words_{n}"] = statistics.median(times) * 1000
    return out


def paired_pass(
    sem: Daemon, off: Daemon, qs: list[str], method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Each query to both daemons, alternating which goes first, so that load drift and the
    page cache hit both alike; wall times per query and each daemon's CPU per call."""
    from memd.api.client import Client

    out: dict[str, Any] = {"on": [], "off": [], "answers": []}
    cpu0 = {"on": cpu_s(sem.pid), "off": cpu_s(off.pid)}
    load0 = os.getloadavg()[0]
    with Client(sem.sock, timeout=60) as cs, Client(off.sock, timeout=60) as co:
        for i, q in enumerate(qs):
            order = (("on", cs), ("off", co)) if i % 2 else (("off", co), ("on", cs))
            for name, c in order:
                dt, res = _timed(c.call, method, {"query": q, **params})
                out[name].append(dt)
                if name == "on":
                    out["answers"].append(res)
    time.sleep(0.2)  # the usage write queued by the last call
    out["cpu_ms"] = {k: (cpu_s(d.pid) - cpu0[k]) / len(qs) * 1000
                     for k, d in (("on", sem), ("off", off))}  # fmt: skip
    out["load"] = (load0, os.getloadavg()[0])
    return out


def long_prompts(qs: list[str], n: int, words: int = 300) -> list[str]:
    """`n` distinct prompts of `words` words made of the bench's queries (a hook asks
    `context` with the whole prompt)."""
    out = []
    for i in range(n):
        text = " ".join(qs[(i + j) % len(qs)] for j in range(0, 4 * words, 7)).split()
        out.append(f"({i}) " + " ".join(text[:words]))
    return out


def _generate(memory: Path, args: argparse.Namespace) -> corpus.CorpusInfo:
    return corpus.generate(memory, args.files, seed=args.seed, sections=(4, 9),
                           total_sections=args.sections)  # fmt: skip


def start_pair(args: argparse.Namespace, tmp: Path) -> tuple[Daemon, Daemon, dict[str, Any]]:
    """The daemon with recall by meaning on (its backfill done) and one with it off, on the
    same generated tree. With --home the first daemon's home (and its vectors) is kept and
    reused."""
    home = args.home or tmp / "on"
    reused = (home / "memory").is_dir()
    info = _generate(tmp / "off" / "memory", args)
    if not reused:
        _generate(home / "memory", args)
    sem = Daemon(home, MEMD_SEMANTIC_KIND="packaged", MEMD_SEMANTIC_THREADS=str(args.threads),
                 MEMD_SEMANTIC_QUERY_WAIT_MS=str(args.query_wait_ms))  # fmt: skip
    sem.start()
    ready = sem.wait_ready(600)
    fill_s, st = wait_backfilled(sem)
    off = Daemon(tmp / "off")
    off.start()
    off.wait_ready(600)
    print(f"ready in {ready:.1f} s, backfilled in {fill_s:.0f} s ({'reused' if reused else 'new'}):"
          f" {st.get('vectors')}", flush=True)  # fmt: skip
    return sem, off, {"info": info, "ready": ready, "fill_s": fill_s, "reused": reused}


def run_semantic(args: argparse.Namespace) -> str:
    """`context` and `search` with recall by meaning on, after the backfill is done, against a
    daemon with it off on the same tree in the same session: each distinct query first
    uncached (its embedding computed in the request), then again from the query cache; the
    embedding alone measured in this process afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-sem-"))
    daemons: list[Daemon] = []
    try:
        sem, off, setup = start_pair(args, tmp)
        daemons = [sem, off]
        qs_cls = list(dict.fromkeys(corpus.queries(args.queries, seed=args.seed)))
        qs = [q for _, q in qs_cls]
        warm = [q for _, q in corpus.queries(args.warmup, seed=args.seed + 1) if q not in qs]
        cached = qs[-min(len(qs), 500) :]  # the query cache keeps the last 512
        paired_pass(sem, off, warm, "context", {"budget_tokens": 2000})
        setup["warmup"] = len(warm)
        print(f"{len(qs)} queries: uncached …", flush=True)
        passes = {"first": paired_pass(sem, off, qs, "context", {"budget_tokens": 2000})}
        print("cached …", flush=True)
        passes["cached"] = paired_pass(sem, off, cached, "context", {"budget_tokens": 2000})
        passes["search"] = paired_pass(sem, off, cached, "search", {"limit": 10})
        passes["long"] = paired_pass(sem, off, long_prompts(qs, 40), "context",
                                     {"budget_tokens": 2000})  # fmt: skip
        mems = {"on": proc_mem(sem.pid), "off": proc_mem(off.pid)}
        status = sem.call("status").get("semantic", {})
        for d in daemons:
            d.stop()
        daemons = []
        emb = embedding_share(qs[: min(len(qs), 300)], args.threads)
        return render_semantic(args, setup, qs_cls, passes, emb, mems, status)
    finally:
        for d in daemons:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _sem_row(name: str, x: dict[str, float], target: str = "") -> list[str]:
    v = f"p50 {verdict(x['p50'], 20)}; p99 {verdict(x['p99'], 40)}" if target else ""
    return [name, f"{x['p50']:.2f}", f"{x['p95']:.2f}", f"{x['p99']:.2f}", f"{x['max']:.1f}",
            target, v]  # fmt: skip


def _found_by(answers: list[dict[str, Any]]) -> str:
    by: dict[str, int] = defaultdict(int)
    for r in answers:
        for sec in r["sections"]:
            for f in sec.get("found_by", []):
                by[f] += 1
    return ", ".join(f"{k} {v}" for k, v in sorted(by.items())) or "none"


def _class_rows(qs: list[tuple[str, str]], passes: dict[str, Any]) -> list[list[str]]:
    at = {q: i for i, (_, q) in enumerate(qs)}
    cached_at = {q: i for i, q in enumerate(q for _, q in qs[-len(passes["cached"]["on"]) :])}
    rows = []
    for cls in dict.fromkeys(c for c, _ in qs):
        mine = [q for c, q in qs if c == cls]
        first = passes["first"]
        off = summary_ms([first["off"][at[q]] for q in mine])
        on = summary_ms([first["on"][at[q]] for q in mine])
        hit = [q for q in mine if q in cached_at]
        onc = summary_ms([passes["cached"]["on"][cached_at[q]] for q in hit])
        rows.append([cls, str(len(mine)), f"{off['p50']:.2f}", f"{on['p50']:.2f}",
                     f"{on['p99']:.2f}", f"{onc['p50']:.2f}", f"{onc['p99']:.2f}"])  # fmt: skip
    return rows


def render_semantic(args: argparse.Namespace, setup: dict[str, Any], qs: list[tuple[str, str]],
                    passes: dict[str, Any], emb: dict[str, float],
                    mems: dict[str, dict[str, float]], sem: dict[str, Any]) -> str:  # fmt: skip
    first, cached = passes["first"], passes["cached"]
    s = {f"{p}_{k}": summary_ms(passes[p][k]) for p in passes for k in ("on", "off")}
    n_cached = len(cached["on"])
    # The embedding's share as the daemon sees it: the same query, first time minus cached.
    tail = first["on"][-n_cached:]
    diff = sorted(a - b for a, b in zip(tail, cached["on"], strict=True))
    rows = [
        _sem_row(f"`context`, recall by meaning off (same tree, same session; {len(qs)} queries)",
                 s["first_off"]),
        _sem_row(f"`context`, on, each query's first time ({len(qs)} distinct: its embedding"
                 " computed in the request)", s["first_on"], "p50 < 20, p99 < 40"),
        _sem_row(f"`context`, off, again ({n_cached})", s["cached_off"]),
        _sem_row(f"`context`, on, the query's vector cached ({n_cached})", s["cached_on"],
                 "p50 < 20, p99 < 40"),
        _sem_row("`search` (limit 10), off", s["search_off"]),
        _sem_row("`search` (limit 10), on, cached", s["search_on"]),
        _sem_row(f"`context`, off, a {300}-word prompt ({len(passes['long']['off'])})",
                 s["long_off"]),
        _sem_row(f"`context`, on, a {300}-word prompt, uncached ({len(passes['long']['on'])})",
                 s["long_on"]),
        _sem_row("embedding one query alone (packaged model, in-process, uncached)", emb),
    ]  # fmt: skip
    ix = sem.get("index", {})
    fill = (f"the vectors its backfill worker stored in an earlier run with the same `--home`,"
            f" checked in {setup['fill_s']:.0f} s"
            if setup["reused"] else f"its backfill worker embedded every section in"
            f" {setup['fill_s']:.0f} s")  # fmt: skip
    loads = "; ".join(f"{k} {p['load'][0]:.2f} → {p['load'][1]:.2f}" for k, p in passes.items())
    body = [
        "### `context` latency with recall by meaning on and off (`bench/latency_bench.py --semantic`)",
        "",
        f"Tree: {setup['info'].summary()} (seed {args.seed}). Two real daemons on the same tree in"
        f" the same session: one with `semantic.kind = packaged` ({sem.get('model', '')},"
        f" {args.threads} threads; {fill}: {sem.get('vectors')}), one with `semantic.kind = off`"
        " (the full-text path, as without the extra). Every query goes to both, alternating which"
        " is asked first, one persistent connection each. Queries: the latency bench's mix,"
        f" distinct, after {setup['warmup']} warm-up queries of another seed. Times in ms.",
        "",
        table(["path", "p50", "p95", "p99", "max", "target (ms)", "verdict"], rows),
        "",
        "By query class (`context`, p50 / p99 ms):",
        "",
        table(
            [
                "class",
                "queries",
                "off p50",
                "on, uncached p50",
                "on, uncached p99",
                "on, cached p50",
                "on, cached p99",
            ],
            _class_rows(qs, passes),
        ),  # fmt: skip
        "",
        f"Embedding share: alone, one query costs p50 {emb['p50']:.1f} ms wall /"
        f" {emb['cpu_p50']:.1f} ms CPU (p99 {emb['p99']:.1f} ms); it grows with the query's length"
        " (CPU ms for a query of "
        + ", ".join(f"{n} words {emb[f'words_{n}']:.0f}" for n in (8, 32, 128, 400))
        + "); in the daemon, the same query's"
        f" first `context` minus its cached one is p50 {summary_ms(diff)['p50']:.1f} ms."
        f" Daemon CPU per `context` call: on {first['cpu_ms']['on']:.2f} ms uncached,"
        f" {cached['cpu_ms']['on']:.2f} ms cached; off {first['cpu_ms']['off']:.2f} ms."
        f" Query cache: {sem.get('query_cache')}. Sections chosen by ranking (cached pass):"
        f" {_found_by(cached['answers'])}. Daemon RSS: on {mems['on']['rss_mb']:.0f} MB (peak"
        f" {mems['on']['peak_mb']:.0f} MB), off {mems['off']['rss_mb']:.0f} MB; matrices: "
        + ", ".join(f"{k} {v['rows']:,} rows" for k, v in ix.items())
        + f". 1-minute load average over each timed pass: {loads}.",
        "",
        machine_line(),
    ]
    return "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, files=1_500)
    ap.add_argument("--sections", type=int, default=10_000, help="total ## sections in the tree")
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument(
        "--turns", type=int, default=0, help="conversation turns imported before measuring"
    )
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--cli-runs", type=int, default=10)
    ap.add_argument("--cpu-queries", type=int, default=300, help="queries of the CPU-per-call pass")
    ap.add_argument("--clients", type=int, default=8, help="concurrent socket clients")
    ap.add_argument("--per-client", type=int, default=100)
    ap.add_argument(
        "--semantic", action="store_true", help="recall by meaning on (packaged model; own block)"
    )
    ap.add_argument("--threads", type=int, default=2, help="model threads (--semantic)")
    ap.add_argument("--query-wait-ms", type=int, default=Settings.semantic_query_wait_ms,
                    help="semantic.query_wait_ms of the daemon with the extra (0: wait always)")  # fmt: skip
    ap.add_argument("--home", type=Path, default=None,
                    help="--semantic: keep the daemon's MEMD_HOME here and reuse its vectors")  # fmt: skip
    args = ap.parse_args()
    if args.semantic:
        publish(args, SEM_BLOCK, run_semantic(args))
        return
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
