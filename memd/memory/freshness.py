"""How far the index is behind the Markdown files, measured without the daemon.

When nothing watches the files (no daemon), an answer from the index may be stale. `freshness`
runs the reconcile scan's own comparison (size and modification time against what the index
recorded; no file is read) within a time budget, so a command can say so in one line before
it answers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from memd.db import Connection
from memd.memory import repo as docs
from memd.memory.indexer import Root, plan_reconcile, scan_root


@dataclass(frozen=True, slots=True)
class Freshness:
    """When the index was last updated and how many memory files changed since."""

    last_indexed_at: float  # epoch seconds; 0 when nothing was ever indexed
    changed: int | None  # files created, changed or deleted since; None: the scan took too long


def freshness(conn: Connection, roots: Sequence[Root], *, budget_s: float = 0.3) -> Freshness:
    """Compare the files under `roots` with the index, giving up after `budget_s` seconds.

    The folder scan runs in a daemon thread: on a huge or slow tree the caller moves on (and
    `changed` is None) instead of waiting for it.
    """
    known = {r.key: docs.manifest(conn, r.key) for r in roots}
    problems = {p.path for p in docs.problems(conn)}
    last = docs.last_indexed_at(conn)
    found: list[int] = []

    def scan() -> None:
        n = 0
        for r in roots:
            disk = scan_root(r) if r.path.is_dir() else {}
            to_read, to_delete = plan_reconcile(disk, known[r.key])
            n += sum(1 for p in (*to_read, *to_delete) if p not in problems)
        found.append(n)

    t = threading.Thread(target=scan, name="memd-freshness", daemon=True)
    t.start()
    t.join(budget_s)
    return Freshness(last, found[0] if found else None)
