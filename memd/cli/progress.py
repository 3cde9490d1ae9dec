"""Progress bars for long CLI commands (`reindex --full`, `import`), on a terminal only.

The work runs in a thread while this one polls what it reports: the daemon's `status`
(`daemon.progress`), or the in-process engine's `Progress` when there is no daemon. Nothing is
drawn for work that ends within `QUIET_S`, when stderr is not a terminal, or with `--json`;
`rich` is imported only when a bar is drawn, so quick commands and the hooks never load it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from memd.core.progress import TaskSnapshot

R = TypeVar("R")
Poll = Callable[[], "list[TaskSnapshot]"]
# Work shorter than this draws nothing; then the bar refreshes every POLL_S.
QUIET_S = 0.5
POLL_S = 0.25


def daemon_progress(socket_path: Path) -> Poll:
    """The daemon's long work, from its `status` (empty when it cannot be asked)."""
    import msgspec

    from memd.api import client
    from memd.api import messages as m
    from memd.core.errors import MemdError

    def poll() -> list[TaskSnapshot]:
        try:
            st = client.request(socket_path, m.STATUS, m.NoParams(), timeout=2)
        except (MemdError, OSError, msgspec.ValidationError):
            return []
        return list(st.daemon.progress or [])

    return poll


def run_with_progress(work: Callable[[], R], poll: Poll, *, enabled: bool) -> R:
    """`work()`, with a bar of what `poll` reports while it runs (when `enabled`)."""
    if not enabled:
        return work()
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="memd-cli-work", daemon=True).start()
    if not done.wait(QUIET_S):
        _draw(done, poll)
    if "error" in box:
        raise box["error"]
    result: R = box["result"]
    return result


def _draw(done: threading.Event, poll: Poll) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    shown: dict[int, TaskID] = {}
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        while not done.is_set():
            tasks = poll()
            for t in tasks:
                total = t.total or None  # unknown yet: rich draws a pulsing bar
                rate = f"{t.rate:,.0f}/s" if t.rate else ""
                if t.id not in shown:
                    shown[t.id] = bar.add_task(t.what, total=total, unit=t.unit, rate=rate)
                bar.update(shown[t.id], completed=t.done, total=total, rate=rate)
            for tid in [k for k in shown if k not in {t.id for t in tasks}]:
                bar.remove_task(shown.pop(tid))
            done.wait(POLL_S)
