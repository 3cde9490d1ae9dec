"""Long work under way, as `memd status` and the CLI's progress bars show it.

A feature doing something that can take seconds to minutes (the first index of a big tree, a
rebuild, an import, a backfill) opens a `Task` on the engine's `Progress` and advances it as it
goes; `snapshot()` is what the `progress` part of `status` carries. Updates are a lock and two
integer additions, cheap enough for every batch of a loop.

Each report is also where long work stops when the daemon does: after `Progress.stop()`,
`advance` and `add_total` raise `DaemonStopping`, so a stop during a first index of minutes
ends at the next batch instead of when the index is done.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from memd.core.errors import DaemonStopping

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """A task as `status` shows it (`daemon.progress`): `done` of `total` `unit`s, the seconds
    since it started, its rate per second and the seconds left (None while not known)."""

    id: int
    what: str
    unit: str
    done: int
    total: int
    elapsed_s: float
    rate: float
    eta_s: float | None


@dataclass
class Task:
    """One piece of long work: `done` of `total` `unit`s (total 0: not known yet)."""

    what: str
    unit: str = "files"
    total: int = 0
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    id: int = field(default_factory=lambda: next(_ids))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False)

    def add_total(self, n: int) -> None:
        """More work found (a scan that plans root by root adds each root's share)."""
        self._check()
        with self._lock:
            self.total += n

    def advance(self, n: int = 1) -> None:
        self._check()
        with self._lock:
            self.done += n

    def _check(self) -> None:
        if self._stopping.is_set():
            raise DaemonStopping(
                f"memd is stopping: {self.what} ended at {self.done:,} {self.unit}"
            )

    def snapshot(self, now: float) -> TaskSnapshot:
        with self._lock:
            done, total = self.done, self.total
        elapsed = max(now - self.started, 1e-6)
        rate = done / elapsed if done else 0.0
        eta = (total - done) / rate if rate and total >= done else None
        return TaskSnapshot(
            self.id, self.what, self.unit, done, total, round(elapsed, 1), round(rate, 1),
            round(eta, 1) if eta is not None else None,
        )  # fmt: skip


class Progress:
    """The tasks of one engine, open while their work runs."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._tasks: dict[int, Task] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def stop(self) -> None:
        """The daemon is stopping: every task, open or opened later, raises `DaemonStopping` at
        its next report."""
        self._stopping.set()

    @contextlib.contextmanager
    def task(self, what: str, *, unit: str = "files", total: int = 0) -> Iterator[Task]:
        """A task shown while the block runs."""
        t = Task(what, unit, total, started=self.clock(), _stopping=self._stopping)
        with self._lock:
            self._tasks[t.id] = t
        try:
            yield t
        finally:
            with self._lock:
                del self._tasks[t.id]

    def snapshot(self) -> list[TaskSnapshot]:
        """Every open task, oldest first."""
        with self._lock:
            tasks = list(self._tasks.values())
        now = self.clock()
        return [t.snapshot(now) for t in tasks]
