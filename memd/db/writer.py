"""The single writer: one thread owns the only write connection; everyone else submits work.

Each submitted function runs in its own `BEGIN IMMEDIATE` transaction on the writer thread and its
result or exception comes back through a `concurrent.futures.Future` (asyncio callers wrap it
with `asyncio.wrap_future`). `close()` enqueues a sentinel, so work already queued is drained
before the connection closes — a clean shutdown loses no acknowledged write.
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memd.core.errors import StoreError
from memd.db.connection import connect
from memd.db.migrations import migrate

T = TypeVar("T")
log = logging.getLogger(__name__)
_SHUTDOWN = object()


@dataclass(frozen=True, slots=True)
class _SwapTask:
    new_path: Path
    copy_state: Callable[[sqlite3.Connection], None]


class Writer:
    """Owns the write connection of one index file."""

    generation = 0  # bumped when the file is swapped: readers must reopen

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[Any] = queue.Queue()
        self._ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, name="memd-writer", daemon=True)
        self._closed = False
        self._thread.start()
        self._ready.result()  # re-raises an open/migrate failure in the caller

    def submit(self, fn: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """Queue `fn(conn)` to run in its own transaction; the future holds its result."""
        if self._closed:
            raise StoreError("the index writer is closed")
        fut: Future[T] = Future()
        self._queue.put((fn, fut))
        return fut

    def run(self, fn: Callable[[sqlite3.Connection], T], timeout: float | None = 120) -> T:
        """Submit and wait."""
        return self.submit(fn).result(timeout)

    def swap_to(
        self, new_path: Path, copy_state: Callable[[sqlite3.Connection], None]
    ) -> Future[None]:
        """Replace the database file with `new_path` between two queued tasks.

        On the writer thread: `copy_state(current_conn)` copies what is not rebuildable into the
        new file, then the new file is renamed over the old one and reopened. Work queued while this
        runs waits and then lands in the new database, so no write is lost.
        """
        fut: Future[None] = Future()
        self._queue.put((_SwapTask(new_path, copy_state), fut))
        return fut

    def pending(self) -> int:
        return self._queue.qsize()

    def close(self, timeout: float = 30) -> None:
        """Drain queued work, then close the connection."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_SHUTDOWN)
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            conn = connect(self.path)
            migrate(conn)
        except BaseException as exc:  # handed to the constructor's caller
            self._ready.set_exception(exc)
            return
        self._ready.set_result(None)
        try:
            while True:
                # The last write's closure (a whole batch of parsed files for the indexer) and
                # its result must not stay alive until the next write comes.
                task = fn = fut = result = None
                task = self._queue.get()
                if task is _SHUTDOWN:
                    break
                fn, fut = task
                if not fut.set_running_or_notify_cancel():
                    continue
                if isinstance(fn, _SwapTask):
                    try:
                        conn = self._swap(conn, fn)
                    except BaseException as exc:
                        fut.set_exception(exc)
                    else:
                        fut.set_result(None)
                    continue
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    result = fn(conn)
                    conn.execute("COMMIT")
                except BaseException as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    log.debug("write failed: %r", exc)
                    fut.set_exception(exc)
                else:
                    fut.set_result(result)
        finally:
            self._finish(conn)

    def _swap(self, conn: sqlite3.Connection, task: _SwapTask) -> sqlite3.Connection:
        task.copy_state(conn)
        self._finish(conn)
        for suffix in ("-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        os.replace(task.new_path, self.path)
        self.generation += 1
        new = connect(self.path)
        migrate(new)
        return new

    @staticmethod
    def _finish(conn: sqlite3.Connection) -> None:
        try:
            conn.execute("PRAGMA optimize")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
        conn.close()
