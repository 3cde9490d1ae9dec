"""The backfill's texts per second and CPU per text, in-process, for before/after comparisons.

    python -m bench.backfill_rate [--sections 400] [--turns 200] [--threads 2] [--json]

Generates a memory tree (bench/corpus.py, `--sections` sections) and `--turns` conversation
turns (bench/ingest_bench.py's generator) into a fresh index, then runs the backfill worker
(`memd.semantic.backfill.Backfill.run_until_idle`) in this process with the embedder the
daemon would give it: the packaged model in a child process (`memd.semantic.worker`) where
this tree has one, else in-process. Everything runs at this process's priority (the child
too: `nice=0`), so that a tree without the child process and one with it are compared at the
same priority on a shared machine. Prints wall seconds, texts, texts per second, and CPU
seconds of this process and the model's process (`/proc`), per phase (sections, then turns).
It is meant to be run from two trees in turn (A B B A), each with its own code on PYTHONPATH;
`bench/semantic_speed.py --backfill-only` measures the daemon as shipped.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")


def _embedder(threads: int) -> tuple[Any, str]:
    try:
        from memd.semantic.worker import WorkerEmbedder
    except ImportError:
        from memd.semantic.packaged import PackagedEmbedder

        return PackagedEmbedder(threads=threads), "in-process"
    return WorkerEmbedder(threads=threads, nice=0), "child process"


def _cpu(pid: int | None) -> float:
    if not pid:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(sections: int, turns: int, threads: int, seed: int) -> dict[str, Any]:
    from bench.corpus import generate
    from bench.ingest_bench import conversations
    from memd.conversations.ingest import write_turns
    from memd.core.models import Turn
    from memd.db import Store
    from memd.memory.indexer import Indexer, Root
    from memd.semantic.backfill import Backfill
    from memd.semantic.index import VectorIndex

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memd-fillrate-", dir="/tmp") as tmp:
        mem = Path(tmp) / "memory"
        generate(mem, files=max(1, sections * 2 // 5), seed=seed, total_sections=sections)
        store = Store.open(Path(tmp) / "index.db")
        try:
            Indexer(store, [Root(mem)]).reconcile()
            emb, where = _embedder(threads)
            out["model"] = where
            fill = Backfill(store, emb, VectorIndex(store, emb.model_id), batch=16)
            out["sections"] = _phase(fill, emb)
            rows = [Turn("ingest", sid, f"{sid}-{i}", role, text, ts)
                    for sid, ts_ in conversations(turns, seed) for i, (role, text, ts) in enumerate(ts_)]  # fmt: skip
            store.w.run(lambda c: write_turns(c, rows))
            out["turns"] = _phase(fill, emb)
            close = getattr(emb, "close", None)
            if close is not None:
                close()
        finally:
            store.close()
    return out


def _phase(fill: Any, emb: Any) -> dict[str, Any]:
    done0 = fill.progress.embedded
    me0 = time.process_time()
    pid = getattr(emb, "pid", None)
    child0 = _cpu(pid)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    child = 0.0
    fill.begin() if not getattr(fill, "_begun", False) else None
    while True:
        worked = fill.step()
        now_pid = getattr(emb, "pid", None)
        if now_pid != pid:  # started (or restarted): count from its start
            child += _cpu(pid) - child0 if pid else 0.0
            pid, child0 = now_pid, 0.0
        if not worked:
            break
    fill._refresh()
    child += _cpu(pid) - child0 if pid else 0.0
    wall = time.perf_counter() - t0
    n = fill.progress.embedded - done0
    me = time.process_time() - me0
    return {"texts": n, "wall_s": wall, "per_s": n / wall if wall else 0.0, "cpu_s": me,
            "child_cpu_s": child, "cpu_ms_per_text": (me + child) / max(n, 1) * 1000,
            "load": (load0, os.getloadavg()[0]),
            "reused": getattr(fill.progress, "reused", 0)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sections", type=int, default=400)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    print(json.dumps(run(args.sections, args.turns, args.threads, args.seed)), flush=True)


if __name__ == "__main__":
    main()
