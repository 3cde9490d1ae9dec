"""Answering without the daemon: the index opened read-only, a method run in-process.

The CLI's query commands use it when no daemon answers, and `memd hook` / `memd mcp` are given
`answer_offline` so they do the same (they sit below the composition root and cannot build an
engine themselves). Nothing is opened until the daemon is found missing, so a one-shot command
with a running daemon pays nothing for it.

Without a daemon nothing watches the files, so every offline answer comes with a note saying
how old the index is and how many files changed since (`staleness`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from memd.core.settings import Settings

if TYPE_CHECKING:
    from memd.api.messages import Params, Signature
    from memd.app import Engine
    from memd.db import Store

P = TypeVar("P", bound="Params")
R = TypeVar("R")
# Time the staleness note may spend comparing files with the index.
SCAN_BUDGET_S = 0.3


@contextlib.contextmanager
def readonly_engine(settings: Settings) -> Iterator[Engine]:
    """An engine over the index opened read-only (`MemdError` when there is no index)."""
    from memd.app import Engine
    from memd.db import Store

    store = Store.open_readonly(settings.db_path)
    try:
        yield Engine(settings, store)
    finally:
        store.close()


def answer_offline(settings: Settings, sig: Signature[P, R], params: P) -> tuple[R, str]:
    """Run a read method in-process on the read-only index: (its result, the staleness note)."""
    with readonly_engine(settings) as engine:
        note = staleness(settings, engine.store)
        result: R = engine.call(sig, params)
        return result, note


def staleness(settings: Settings, store: Store, now: float | None = None) -> str:
    """``index last updated 12 min ago; 3 files changed since`` (memory files and logs)."""
    from memd.cli.render import span
    from memd.conversations.repo import logs as log_repo
    from memd.memory.api import user_roots
    from memd.memory.freshness import freshness

    now = time.time() if now is None else now
    conn = store.read()
    fresh = freshness(conn, user_roots(settings), budget_s=SCAN_BUDGET_S)
    grown = _grown_logs(log_repo.tailed_files(conn))
    last = fresh.last_indexed_at
    when = f"{span(now - last)} ago" if last else "never"
    if fresh.changed is None:
        changed = f"more than {SCAN_BUDGET_S:g} s to count the files changed since"
    else:
        n = fresh.changed + grown
        changed = f"{n} file{'s' if n != 1 else ''} changed since"
        if n:
            changed += " (answers may be stale: `memd reindex` or start the daemon)"
    return f"index last updated {when}; {changed}"


def _grown_logs(tailed: dict[str, Any]) -> int:
    """Conversation logs that grew past what was read (a cheap stat per known log)."""
    import os

    n = 0
    for path, cp in tailed.items():
        with contextlib.suppress(OSError):
            if os.stat(path).st_size != cp.offset:
                n += 1
    return n
