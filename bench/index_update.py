"""What the backfill thread holds the interpreter for when it updates the in-memory matrices.

    python -m bench.index_update [--sections 25000] [--items 11000] [--turns 10000] [--json]

A request thread waits for the interpreter whenever another thread of the daemon computes in
Python; the backfill thread used to rebuild the matrices from the stored vectors every 5 s
while it worked. This builds an index with a generated tree of `--sections` sections, stores
a vector (random, unit length: the cost does not depend on the values) for every section,
`--items` memories and `--turns` turns, then times, on this thread (thread CPU time, which
is time holding the interpreter, and wall):

- `VectorIndex.refresh` of each kind (a full rebuild: what the old backfill did every 5 s);
- `VectorIndex.append` of a batch of 16 rows (what the backfill does per batch since), where
  the tree has it.

Meant to be run from two trees in turn (A B B A), each with its own code on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np


def _blobs(m: Any) -> list[bytes]:
    try:
        from memd.semantic.vectors import encode
    except ImportError:
        return [r.astype("<f4").tobytes() for r in m]
    return encode(m)


def _timed(fn: Any, reps: int) -> dict[str, float]:
    wall, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.thread_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    return {"wall_ms": statistics.median(wall) * 1000, "cpu_ms": statistics.median(cpu) * 1000}


def run(sections: int, items: int, turns: int, seed: int) -> dict[str, Any]:
    from bench.corpus import generate
    from memd.conversations.ingest import write_turns
    from memd.core.models import Turn
    from memd.db import Store
    from memd.memory.indexer import Indexer, Root
    from memd.semantic import repo
    from memd.semantic.index import VectorIndex
    from memd.semantic.texts import MAX_CHARS, item_key, section_key
    from memd.semantic.vectors import normalise

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memd-ixupd-", dir="/tmp") as tmp:
        mem = Path(tmp) / "memory"
        generate(mem, files=max(1, sections * 2 // 5), seed=seed, total_sections=sections)
        store = Store.open(Path(tmp) / "index.db")
        try:
            Indexer(store, [Root(mem)]).reconcile()
            conn = store.read()
            keys = [section_key(r.stem, r.heading, r.sha256) for r in repo.section_keys(conn)]
            its = list(dict.fromkeys(it.text for it in repo.items_to_embed(conn, MAX_CHARS)))[
                :items
            ]
            store.w.run(lambda c: write_turns(c, [
                Turn("ingest", f"s{i // 50}", str(i), "user", f"turn {i}", 1.7e9 + i)
                for i in range(turns)]))  # fmt: skip
            tids = [str(r[0]) for r in store.read().execute("SELECT id FROM turns")]
            model = "bench"

            def put(kind: str, ks: list[str]) -> None:
                m = normalise(rng.normal(size=(len(ks), 384)).astype(np.float32))
                rows = [
                    repo.VectorRow(k, k, "latin", 384, b)
                    for k, b in zip(ks, _blobs(m), strict=True)
                ]
                store.w.run(lambda c: repo.put(c, kind, model, rows))

            put(repo.SECTION, keys)
            put(repo.ITEM, [item_key(t) for t in its])
            put(repo.TURN, tids)
            ix = VectorIndex(store, model)
            out["rows"] = {k: ix.refresh(k).rows for k in ("section", "turn")}
            out["refresh"] = {k: _timed(lambda k=k: ix.refresh(k), 3) for k in ("section", "turn")}
            if hasattr(ix, "append"):
                from memd.semantic.index import Row

                snap = ix.snapshot("turn")
                assert snap is not None
                m = normalise(rng.normal(size=(16, 384)).astype(np.float32))
                rows = [Row(10**9 + i, b, ("s", "", "", "latin")) for i, b in enumerate(_blobs(m))]
                out["append"] = _timed(lambda: ix.append("turn", rows), 20)
        finally:
            store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sections", type=int, default=25_000)
    ap.add_argument("--items", type=int, default=11_000)
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    print(json.dumps(run(args.sections, args.items, args.turns, args.seed)), flush=True)


if __name__ == "__main__":
    main()
