"""`context` and `search` latency while the backfill runs, and after, against the full-text path.

    python -m bench.semantic_latency [--files 5000] [--sections 12000] [--queries 300]
        [--home DIR] [--wait-after SECONDS] [--hurry] [--out docs/benchmarks.md] [--no-write]
    python -m bench.semantic_latency --semantic off [--baseline OTHER_CHECKOUT] [--files 5000]
        [--sections 12000] [--queries 300]

Generates a tree of real-sized pages (bench/corpus.py: `--files` Markdown files, `--sections`
`##` sections of ~`--section-bytes` bytes each) twice and starts two real daemons on them: one
with recall by meaning on (`semantic.kind = packaged`), one with it off (the full-text path,
as without the extra). Then, in one session:

1. **While the backfill runs** (the daemon with the extra has just started and is embedding
   its tree at nice 19): every query goes to both daemons, `context` (budget 2000) and
   `search` (limit 10), one persistent connection each, in rotating order with a bare FTS5
   query run in this process on the off daemon's index (memd's OR query of the terms, bm25
   top 10 and their texts: the least a full-text lookup does) and `build_context` called in
   this process on the same index (the library without the socket). Each query is new to the
   daemon (its vector is computed in the request), then the same queries again (cached).
   The backfill's progress over the pass shows it ran.
2. **After** (with `--wait-after`): once the backfill is idle, the same passes again. With
   `--hurry` the backfill's threads (the daemon's backfill thread and the model's process)
   are reniced to 0 after the first pass so that it finishes sooner on a busy machine (the
   first pass is always measured at nice 19, as shipped). A backfill not done within
   `--wait-after` seconds is reported as such, with the passes measured before it.
   With `--home`, the daemon's MEMD_HOME is kept there and reused: a second run measures
   "after" on vectors stored by the first.

Times are milliseconds over the socket; the 1-minute load average of each pass is printed
with it (the machine is shared).

`--semantic off` measures the full-text path alone, in minutes instead of a backfill's half
hour (block `latency-off`): one daemon with the extra off on the tree, the same queries to
its `context` and `search`, to the bare FTS5 query and to `build_context` in this process, in
rotating order, twice; with `--baseline`, a second such daemon from another checkout on a
copy of the tree takes the same queries in the same rotation (A B in one session).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon, cpu_s, proc_mem
from bench.report import add_common_args, machine_line, publish, summary_ms, table, verdict
from memd.core.settings import Settings

BLOCK = "latency-backfill"
OFF_BLOCK = "latency-off"
PATHS = ("ctx_on", "ctx_off", "ctx_lib", "fts", "search_on", "search_off")


def _generate(memory: Path, args: argparse.Namespace) -> corpus.CorpusInfo:
    return corpus.generate(memory, args.files, seed=args.seed, sections=(1, 5),
                           total_sections=args.sections, section_bytes=args.section_bytes)  # fmt: skip


def bare_fts(db: Path) -> tuple[Callable[[str], Any], Callable[[str], Any]]:
    """The bare FTS5 lookup (memd's OR query of the terms, bm25 top 10, their texts), and
    `build_context` as a library call, both on one read-only connection to `db`."""
    from memd.core.text import fts_query
    from memd.db import Store
    from memd.memory.context import ContextRequest, build_context

    store = Store.open_readonly(db)
    store.make_hot_reader()
    conn = store.read()

    def run(q: str) -> list[sqlite3.Row]:
        match = fts_query(q, mode="or")
        if not match:
            return []
        ids = [r[0] for r in conn.execute(
            "SELECT rowid FROM sections_fts WHERE sections_fts MATCH ? ORDER BY bm25(sections_fts)"
            " LIMIT 10", (match,))]  # fmt: skip
        marks = ",".join("?" * len(ids))
        return conn.execute(f"SELECT id, text FROM sections WHERE id IN ({marks})", ids).fetchall()

    def context(q: str) -> Any:
        return build_context(conn, ContextRequest(query=q, budget_tokens=2000))

    return run, context


def _cpu_s(pid: int | None) -> float:
    """`cpu_s`, 0 for no process or one gone (the model's process exits when idle)."""
    import psutil

    if not pid:
        return 0.0
    try:
        return cpu_s(pid)
    except psutil.Error:
        return 0.0


def _late(d: Daemon) -> int:
    """Query vectors the daemon answered without (later than `semantic.query_wait_ms`)."""
    return int(d.call("status").get("semantic", {}).get("query_late", 0))


def _backfill(d: Daemon) -> dict[str, Any]:
    b: dict[str, Any] = d.call("status").get("semantic", {}).get("backfill", {})
    return b


def timed_pass(
    sem: Daemon, off: Daemon, fts: tuple[Callable[[str], Any], Callable[[str], Any]], qs: list[str]
) -> dict[str, Any]:
    """Each query through the six paths in rotating order; the backfill's progress, the
    daemons' and the model process's CPU over the pass, and the load at both ends."""
    from memd.api.client import Client

    out: dict[str, Any] = {k: [] for k in PATHS}
    b0 = _backfill(sem)
    late0 = _late(sem)
    worker = b0.get("worker_pid")
    cpu0 = {"on": _cpu_s(sem.pid), "off": _cpu_s(off.pid), "worker": _cpu_s(worker)}
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    with Client(sem.sock, timeout=60) as cs, Client(off.sock, timeout=60) as co:
        steps: list[tuple[str, Callable[[str], Any]]] = [
            ("ctx_on", lambda q: cs.call("context", {"query": q, "budget_tokens": 2000})),
            ("ctx_off", lambda q: co.call("context", {"query": q, "budget_tokens": 2000})),
            ("fts", fts[0]),
            ("ctx_lib", fts[1]),
            ("search_on", lambda q: cs.call("search", {"query": q, "limit": 10})),
            ("search_off", lambda q: co.call("search", {"query": q, "limit": 10})),
        ]
        for i, q in enumerate(qs):
            for name, fn in steps[i % len(steps) :] + steps[: i % len(steps)]:
                t = time.perf_counter()
                fn(q)
                out[name].append(time.perf_counter() - t)
    b1 = _backfill(sem)
    out["late"] = _late(sem) - late0
    out["wall_s"] = time.perf_counter() - t0
    out["load"] = (load0, os.getloadavg()[0])
    out["embedded"] = int(b1.get("embedded", 0)) - int(b0.get("embedded", 0))
    out["state"] = (b0.get("state"), b1.get("state"))
    out["done"] = (b0.get("done"), b1.get("done"), b1.get("total"))
    out["cpu_s"] = {"on": _cpu_s(sem.pid) - cpu0["on"], "off": _cpu_s(off.pid) - cpu0["off"],
                    # The model's process may have ended in the pass (idle a minute): its CPU
                    # is then unknown, not negative.
                    "worker": max(0.0, _cpu_s(worker) - cpu0["worker"]) if worker else 0.0}  # fmt: skip
    return out


def _until(
    d: Daemon, ok: Callable[[dict[str, Any]], bool], timeout: float
) -> dict[str, Any] | None:
    """The backfill's progress once `ok` says so (polled every 0.5 s), None after `timeout`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        b = _backfill(d)
        if ok(b):
            return b
        time.sleep(0.5)
    return None


def _settled(d: Daemon, timeout: float = 300) -> dict[str, Any]:
    """The backfill's progress once it has looked at the stored vectors (on a home reused
    with every vector stored it goes from not started to idle without backfilling)."""
    b = _until(d, lambda b: b.get("state") in ("idle", "backfilling") and bool(b.get("total")),
               timeout)  # fmt: skip
    return b if b is not None else _backfill(d)


def wait_backfilling(d: Daemon, timeout: float = 600) -> dict[str, Any]:
    """Until the daemon's backfill is embedding."""
    b = _until(d, lambda b: b.get("state") == "backfilling", timeout)
    if b is None:
        raise RuntimeError(f"the backfill did not start within {timeout:.0f} s: {_backfill(d)}")
    return b


def renice_backfill(d: Daemon, nice: int) -> int:
    """Set the priority of the backfill's threads (those at nice 19: the daemon's backfill
    thread and the model's threads, in the daemon or in its model's process) to `nice`; how
    many were changed."""
    import psutil

    procs = [psutil.Process(d.pid)]
    procs += procs[0].children(recursive=True)
    n = 0
    for p in procs:
        try:
            tids = [t.id for t in p.threads()]
        except psutil.Error:
            continue
        for tid in tids:
            try:
                if os.getpriority(os.PRIO_PROCESS, tid) == 19:
                    os.setpriority(os.PRIO_PROCESS, tid, nice)
                    n += 1
            except OSError:
                pass
    return n


def wait_embedding(d: Daemon, texts: int, timeout: float = 900) -> None:
    """Until the backfill has embedded `texts` more texts (it is really running)."""
    start = int(_backfill(d).get("embedded", 0))
    if _until(d, lambda b: int(b.get("embedded", 0)) - start >= texts, timeout) is None:
        raise RuntimeError(f"the backfill embedded nothing in {timeout:.0f} s: {_backfill(d)}")


def wait_idle(d: Daemon, timeout: float, hurry: bool) -> float | None:
    """Seconds until the backfill is idle with nothing pending, None after `timeout`. With
    `hurry`, the backfill's threads at nice 19 (the daemon's backfill thread as well as its
    model's process: renicing the model alone left the daemon's side of each batch starved on
    a busy machine) are set to 0."""
    t0 = time.monotonic()
    said = t0
    while time.monotonic() - t0 < timeout:
        b = _backfill(d)
        if b.get("state") == "idle" and b.get("done") and not b.get("pending"):
            return time.monotonic() - t0
        if hurry:
            renice_backfill(d, 0)
        if time.monotonic() - said > 120:
            said = time.monotonic()
            print(f"  backfill {b.get('done')}/{b.get('total')} at {b.get('rate_per_s')}/s,"
                  f" load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        time.sleep(2)
    return None


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-semlat-"))
    daemons: list[Daemon] = []
    try:
        home = args.home or tmp / "on"
        reused = (home / "memory").is_dir()
        info = _generate(tmp / "off" / "memory", args)
        if not reused:
            _generate(home / "memory", args)
        off = Daemon(tmp / "off")
        sem = Daemon(home, MEMD_SEMANTIC_KIND="packaged", MEMD_SEMANTIC_THREADS=str(args.threads),
                 MEMD_SEMANTIC_QUERY_WAIT_MS=str(args.query_wait_ms))  # fmt: skip
        daemons = [off, sem]
        off.start()
        off.wait_ready(900)
        sem.start()
        ready = sem.wait_ready(900)
        qs = list(dict.fromkeys(q for _, q in corpus.queries(args.queries, seed=args.seed)))
        warm = [q for _, q in corpus.queries(20, seed=args.seed + 1) if q not in qs]
        fts = bare_fts(Path(off.call("status")["index"]["path"]))
        setup: dict[str, Any] = {"info": info, "ready": ready, "reused": reused, "qs": len(qs)}
        passes: dict[str, Any] = {}
        b = _settled(sem) if reused else _backfill(sem)
        if not (b.get("state") == "idle" and not b.get("pending") and reused):
            setup["backfill_at_start"] = wait_backfilling(sem)
            print(f"backfilling: {setup['backfill_at_start']}", flush=True)
            if args.backfill_nice is not None:
                wait_embedding(sem, 1)  # the model's threads exist
                setup["reniced"] = renice_backfill(sem, args.backfill_nice)
            wait_embedding(sem, 16)
            timed_pass(sem, off, fts, warm)
            passes["during"] = timed_pass(sem, off, fts, qs)
            passes["during, cached"] = timed_pass(sem, off, fts, qs)
            print(f"during: {summarise(passes['during'])}", flush=True)
            setup["mem_during"] = proc_mem(sem.pid)
        if args.wait_after:
            setup["fill_s"] = wait_idle(sem, args.wait_after, args.hurry)
            setup["fill_at_end"] = _backfill(sem)
        if setup.get("fill_s") is not None:
            time.sleep(5)
            timed_pass(sem, off, fts, warm)
            # Other queries than the first passes': new to the daemon again.
            after_qs = [q for _, q in corpus.queries(args.queries, seed=args.seed + 2)]
            after_qs = [q for q in dict.fromkeys(after_qs) if q not in qs]
            passes["after"] = timed_pass(sem, off, fts, after_qs)
            passes["after, cached"] = timed_pass(sem, off, fts, after_qs)
            print(f"after: {summarise(passes['after'])}", flush=True)
        setup["mem"] = {"on": proc_mem(sem.pid), "off": proc_mem(off.pid)}
        setup["status"] = sem.call("status").get("semantic", {})
        return render(args, setup, passes)
    finally:
        for d in daemons:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def summarise(p: dict[str, Any]) -> str:
    return ", ".join(f"{k} p50 {summary_ms(p[k])['p50']:.1f} p99 {summary_ms(p[k])['p99']:.1f}"
                     for k in PATHS)  # fmt: skip


LABELS = {
    "ctx_on": "`context`, recall by meaning on",
    "ctx_off": "`context`, off (full text, as without the extra)",
    "ctx_lib": "`build_context` in this process (the library, the off daemon's index)",
    "fts": "bare FTS5 query (this process, the off daemon's index)",
    "search_on": "`search` (limit 10), on",
    "search_off": "`search` (limit 10), off",
}


def _rows(passes: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, p in passes.items():
        fts = summary_ms(p["fts"])["p50"]
        for k in PATHS:
            s = summary_ms(p[k])
            target = ""
            if k in ("ctx_on", "search_on"):
                target = f"p99 {verdict(s['p99'], 40)}"
            elif k in ("ctx_off", "ctx_lib"):
                target = f"p50 {s['p50'] / fts:.2f}× the bare query: {verdict(s['p50'], 1.3 * fts)}"
            rows.append([name, LABELS[k], f"{s['p50']:.2f}", f"{s['p95']:.2f}", f"{s['p99']:.2f}",
                         f"{s['max']:.1f}", target])  # fmt: skip
    return rows


def _pass_notes(passes: dict[str, Any]) -> str:
    out = []
    for name, p in passes.items():
        n = len(p["ctx_on"])
        out.append(
            f"{name}: {n} queries in {p['wall_s']:.0f} s, load {p['load'][0]:.1f} → {p['load'][1]:.1f};"
            f" backfill {p['state'][0]} → {p['state'][1]}, done {p['done'][0]} → {p['done'][1]} of"
            f" {p['done'][2]}, {p['embedded']} texts embedded during the pass; CPU over the pass:"
            f" daemon on {p['cpu_s']['on']:.1f} s, off {p['cpu_s']['off']:.1f} s, model process"
            f" {p['cpu_s']['worker']:.1f} s; queries whose vector came later than the wait"
            f" (answered by full text alone): {p.get('late', 0)} of {n}"
        )  # fmt: skip
    return "; ".join(out)


def render(args: argparse.Namespace, setup: dict[str, Any], passes: dict[str, Any]) -> str:
    st = setup["status"]
    ix = st.get("index", {})
    mem = setup["mem"]
    fill = ""
    if setup.get("fill_s") is not None:
        fill = f"; backfill done in {setup['fill_s']:.0f} s after the first pass"
    elif "fill_at_end" in setup:
        b = setup["fill_at_end"]
        fill = (f"; the backfill was not done {args.wait_after:.0f} s after the first pass"
                f" ({b.get('done')} of {b.get('total')} texts): no pass after it")  # fmt: skip
    return "\n".join([
        "### Latency during the backfill (`bench/semantic_latency.py`)",
        "",
        f"Tree: {setup['info'].summary()} (seed {args.seed}; ~{args.section_bytes} bytes per"
        f" section). Two real daemons on copies of the tree in one session: `semantic.kind ="
        f" packaged` ({st.get('model', '')}, {args.threads} threads; ready in"
        f" {setup['ready']:.1f} s{', vectors reused from an earlier run' if setup['reused'] else ''};"
        f" `semantic.query_wait_ms = {args.query_wait_ms}`{' (wait always)' if not args.query_wait_ms else ''}"
        f"{fill}) and `semantic.kind = off`. Each query goes to both (`context` budget 2000,"
        " `search` limit 10, one connection each), to a bare FTS5 query and to `build_context`"
        f" in this process (the off daemon's index, read-only), in rotating order; {setup['qs']} distinct queries of the latency bench's mix, each first"
        " new to the daemon (its vector computed in the request), then again (cached)."
        + (" `--hurry`: the backfill's threads (the daemon's backfill thread and the model's"
           " process) were reniced to 0 after the first passes." if args.hurry else "")
        + (f" `--backfill-nice {args.backfill_nice}`: the backfill's {setup.get('reniced', 0)} threads"
           f" at nice 19 were set to nice {args.backfill_nice} before the first passes, so that it"
           " competes with the requests as an equal on a machine whose other work would otherwise"
           " leave it no CPU." if args.backfill_nice is not None else ""),
        "",
        table(["pass", "path", "p50 ms", "p95 ms", "p99 ms", "max ms", "target"], _rows(passes)),
        "",
        _pass_notes(passes) + ".",
        "",
        f"Daemon RSS at the end: on {mem['on']['rss_mb']:.0f} MB (peak {mem['on']['peak_mb']:.0f}),"
        f" off {mem['off']['rss_mb']:.0f} MB; vectors {st.get('vectors')}; matrices "
        + ", ".join(f"{k} {v['rows']:,} rows" for k, v in ix.items())
        + f"; index updates {st.get('index_updates')}.",
        "",
        machine_line(),
    ])  # fmt: skip


OFF_PATHS = ("ctx_off", "ctx_base", "ctx_lib", "fts", "search_off", "search_base")
OFF_LABELS = {
    "ctx_off": "`context` over the socket (this checkout)",
    "ctx_base": "`context` over the socket (the baseline)",
    "ctx_lib": "`build_context` in this process (the library, this checkout's daemon's index)",
    "fts": "bare FTS5 query (this process, the same index)",
    "search_off": "`search` (limit 10) over the socket (this checkout)",
    "search_base": "`search` (limit 10) over the socket (the baseline)",
}


def off_pass(
    daemons: dict[str, Daemon],
    fts: tuple[Callable[[str], Any], Callable[[str], Any]],
    qs: list[str],
) -> dict[str, Any]:
    """Each query through every path (`OFF_PATHS` whose daemon runs) in rotating order."""
    from contextlib import ExitStack

    from memd.api.client import Client

    out: dict[str, Any] = {}
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    # Each step's CPU clock: this thread's for the library calls, the daemon's (all its
    # threads) for a call over the socket. A loaded machine stretches the wall times; the CPU
    # a call takes is what a change is judged by there.
    cpu: dict[str, float] = {}
    with ExitStack() as stack:
        steps: list[tuple[str, Callable[[str], Any], Callable[[], float]]] = [
            ("fts", fts[0], time.thread_time), ("ctx_lib", fts[1], time.thread_time)]  # fmt: skip
        for who, d in daemons.items():
            c = stack.enter_context(Client(d.sock, timeout=60))
            clock: Callable[[], float] = functools.partial(cpu_s, d.pid)
            steps += [(f"ctx_{who}", _asking(c, "context", budget_tokens=2000), clock),
                      (f"search_{who}", _asking(c, "search", limit=10), clock)]  # fmt: skip
        out = {name: [] for name, _, _ in steps}
        cpu = dict.fromkeys(out, 0.0)
        for i, q in enumerate(qs):
            for name, fn, read in steps[i % len(steps) :] + steps[: i % len(steps)]:
                c0 = read()
                t = time.perf_counter()
                fn(q)
                out[name].append(time.perf_counter() - t)
                cpu[name] += read() - c0
    out["cpu_ms"] = {name: total / len(qs) * 1e3 for name, total in cpu.items()}
    out["wall_s"] = time.perf_counter() - t0
    out["load"] = (load0, os.getloadavg()[0])
    return out


def _asking(client: Any, method: str, **params: Any) -> Callable[[str], Any]:
    def ask(q: str) -> Any:
        return client.call(method, {"query": q, **params})

    return ask


def run_off(args: argparse.Namespace) -> str:
    """`--semantic off`: the full-text path alone (see the module's docstring)."""
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-offlat-"))
    daemons: dict[str, Daemon] = {}
    try:
        info = _generate(tmp / "off" / "memory", args)
        daemons["off"] = Daemon(tmp / "off")
        if args.baseline is not None:
            shutil.copytree(tmp / "off" / "memory", tmp / "base" / "memory")
            daemons["base"] = Daemon(tmp / "base", PYTHONPATH=str(args.baseline))
        for d in daemons.values():
            d.start()
            d.wait_ready(900)
        qs = list(dict.fromkeys(q for _, q in corpus.queries(args.queries, seed=args.seed)))
        warm = [q for _, q in corpus.queries(20, seed=args.seed + 1) if q not in qs]
        fts = bare_fts(Path(daemons["off"].call("status")["index"]["path"]))
        off_pass(daemons, fts, warm)
        passes = {"first": off_pass(daemons, fts, qs), "again": off_pass(daemons, fts, qs)}
        return render_off(args, info, len(qs), passes)
    finally:
        for d in daemons.values():
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def render_off(
    args: argparse.Namespace, info: corpus.CorpusInfo, n: int, passes: dict[str, Any]
) -> str:
    rows = []
    for name, p in passes.items():
        fts = summary_ms(p["fts"])["p50"]
        for k in (k for k in OFF_PATHS if k in p):
            s = summary_ms(p[k])
            target = ""
            if k in ("ctx_off", "ctx_base", "ctx_lib"):
                target = f"p50 {s['p50'] / fts:.2f}× the bare query: {verdict(s['p50'], 1.3 * fts)}"
            rows.append([name, OFF_LABELS[k], f"{s['p50']:.2f}", f"{s['p95']:.2f}",
                         f"{s['p99']:.2f}", f"{s['max']:.1f}", f"{p['cpu_ms'][k]:.2f}",
                         target])  # fmt: skip
    base = (f" The baseline: a second daemon from `{args.baseline}` ({_rev(args.baseline)}) on a"
            " copy of the tree, asked the same queries in the same rotation."
            if args.baseline is not None else "")  # fmt: skip
    notes = "; ".join(f"{name}: {len(p['fts'])} queries in {p['wall_s']:.0f} s, load"
                      f" {p['load'][0]:.1f} → {p['load'][1]:.1f}" for name, p in passes.items())  # fmt: skip
    return "\n".join([
        "### Latency without the extra (`bench/semantic_latency.py --semantic off`)",
        "",
        f"Tree: {info.summary()} (seed {args.seed}; ~{args.section_bytes} bytes per section)."
        " A real daemon with `semantic.kind = off` (the full-text path, as without the extra)"
        " answers `context` (budget 2000) and `search` (limit 10) over one connection; the same"
        " query goes to a bare FTS5 query (memd's OR query of the terms, bm25 top 10 and their"
        " texts) and to `build_context` in this process on the daemon's index, in rotating"
        f" order; {n} distinct queries of the latency bench's mix, twice.{base}",
        "",
        "CPU per call: the mean, in this process's thread for the library calls and in the"
        " daemon's process (all its threads, read from the kernel's 10 ms ticks before and"
        " after each call) for the socket's.",
        "",
        table(["pass", "path", "p50 ms", "p95 ms", "p99 ms", "max ms", "CPU per call ms",
               "target"], rows),  # fmt: skip
        "",
        notes + ".",
        "",
        machine_line(),
    ])  # fmt: skip


def _rev(tree: Path) -> str:
    import subprocess

    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=5, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, files=5_000)
    ap.add_argument("--sections", type=int, default=12_000)
    ap.add_argument("--section-bytes", type=int, default=450)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--query-wait-ms", type=int, default=Settings.semantic_query_wait_ms,
                    help="semantic.query_wait_ms of the daemon with the extra (0: wait always)")  # fmt: skip
    ap.add_argument("--home", type=Path, default=None, help="keep and reuse the daemon's home")
    ap.add_argument("--wait-after", type=float, default=0.0,
                    help="wait up to this many seconds for the backfill, then measure again")  # fmt: skip
    ap.add_argument("--hurry", action="store_true", help="renice the model's process to 0")
    ap.add_argument("--backfill-nice", type=int, default=None,
                    help="renice the backfill's threads to this before the first passes")  # fmt: skip
    ap.add_argument("--semantic", choices=("both", "off"), default="both",
                    help="off: the full-text path alone, no backfill (block latency-off)")  # fmt: skip
    ap.add_argument("--baseline", type=Path, default=None,
                    help="with --semantic off: a second daemon from this checkout")  # fmt: skip
    args = ap.parse_args()
    if args.semantic == "off":
        publish(args, OFF_BLOCK, run_off(args))
        return
    if args.baseline is not None:
        ap.error("--baseline goes with --semantic off")
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
