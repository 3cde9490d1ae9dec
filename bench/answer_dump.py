"""Every answer of the latency mix on one index as JSON lines: a change that must not change
answers is checked by dumping on both trees and comparing the files byte for byte.

    PYTHONPATH=/path/to/tree-A python -m bench.answer_dump INDEX a.jsonl
    PYTHONPATH=/path/to/tree-B python -m bench.answer_dump INDEX b.jsonl
    cmp a.jsonl b.jsonl

INDEX is a daemon's index (`status`'s `index.path`), opened read-only. For each query of the
mix (`bench/corpus.py`, `--queries` of seed 42 and 300 of seed 7, distinct): `search` with
limits 10, 3 and 25, `search` of memory alone, and `context` (budget 2,000), as the library
gives them to the socket. Prints the number of queries and the file's SHA-1. Times nothing.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import msgspec

from bench import corpus


def main() -> None:
    from memd.conversations import ranking
    from memd.db import Store
    from memd.memory.context import ContextRequest, build_context

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--queries", type=int, default=1_000)
    args = ap.parse_args()
    conn = Store.open_readonly(args.index).read()
    mix = [q for _, q in corpus.queries(args.queries, seed=42)]
    qs = list(dict.fromkeys(mix + [q for _, q in corpus.queries(300, seed=7)]))
    enc = msgspec.json.Encoder()
    with args.out.open("wb") as out:
        for q in qs:
            for limit in (10, 3, 25):
                out.write(enc.encode(["search", limit, q, ranking.search(conn, q, limit=limit)]))
                out.write(b"\n")
            memory = ranking.search(conn, q, limit=10, scope="memory")
            out.write(enc.encode(["search-memory", q, memory]) + b"\n")
            ctx = build_context(conn, ContextRequest(query=q, budget_tokens=2000))
            out.write(enc.encode(["context", q, ctx]) + b"\n")
    print(len(qs), "queries", hashlib.sha1(args.out.read_bytes()).hexdigest())


if __name__ == "__main__":
    main()
