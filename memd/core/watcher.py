"""Watch folders with watchdog and hand debounced, filtered path batches to a callback.

Never trust the event type: editors save by writing a temp file and renaming it over the
original (vim, VS Code, JetBrains), so every event just marks its path(s) dirty; after a quiet
period the callback re-reads whatever is there. When inotify runs out of watches or instances,
the root falls back to polling and says so.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedNoWriteEvent,
    FileOpenedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from memd.core.fsio import make_private_dir

log = logging.getLogger(__name__)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if (
            isinstance(event, FileOpenedEvent | FileClosedNoWriteEvent)
            or event.event_type == "attrib"
        ):
            return
        is_dir = isinstance(event, DirCreatedEvent | DirDeletedEvent | DirMovedEvent)
        paths = [os.fsdecode(event.src_path)]
        if event.dest_path:
            paths.append(os.fsdecode(event.dest_path))
        for p in paths:
            if is_dir or self.watcher.accept(p):
                self.watcher.mark(p)


class Watcher:
    """Recursive watches on several roots feeding one debounced callback."""

    def __init__(
        self,
        on_change: Callable[[list[str]], object],
        *,
        accept: Callable[[str], bool],
        debounce_s: float = 0.12,
        name: str = "watcher",
    ) -> None:
        self.on_change = on_change
        self.accept = accept
        self.debounce_s = debounce_s
        self.name = name
        self.observer: BaseObserver = Observer()
        self.poller: BaseObserver | None = None
        self.fallbacks: dict[str, str] = {}
        self.last_event_at = 0.0
        self._dirty: dict[str, float] = {}
        self._cond = threading.Condition()
        self._stop = False
        self._flusher = threading.Thread(target=self._flush_loop, name=f"memd-{name}", daemon=True)
        self._watched: set[str] = set()

    @property
    def watched_roots(self) -> frozenset[str]:
        return frozenset(self._watched)

    @property
    def mode(self) -> str:
        if not self.fallbacks:
            return "native"
        return "polling for " + ", ".join(f"{p} ({why})" for p, why in self.fallbacks.items())

    def start(self) -> None:
        self.observer.start()
        self._flusher.start()

    def watch(self, root: Path) -> None:
        """Watch `root` recursively; fall back to polling when inotify limits are hit."""
        key = str(root)
        if key in self._watched:
            return
        make_private_dir(root)
        handler = _Handler(self)
        try:
            self.observer.schedule(handler, key, recursive=True)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                raise
            why = (
                "inotify watch limit reached: raise fs.inotify.max_user_watches"
                if exc.errno == errno.ENOSPC
                else "inotify instance limit reached: raise fs.inotify.max_user_instances"
            )
            log.warning("%s: %s; polling %s every 2 s instead", self.name, why, key)
            if self.poller is None:
                self.poller = PollingObserver(timeout=2)
                self.poller.start()
            self.poller.schedule(handler, key, recursive=True)
            self.fallbacks[key] = why
        self._watched.add(key)

    def mark(self, path: str) -> None:
        with self._cond:
            now = time.monotonic()
            self._dirty[path] = now
            self.last_event_at = time.time()
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        for obs in (self.observer, self.poller):
            if obs is not None and obs.is_alive():
                obs.stop()
                obs.join(5)
        if self._flusher.is_alive():
            self._flusher.join(10)

    def _flush_loop(self) -> None:
        while True:
            with self._cond:
                while not self._dirty and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                now = time.monotonic()
                oldest_due = min(self._dirty.values()) + self.debounce_s
                if oldest_due > now:
                    self._cond.wait(oldest_due - now)
                    continue
                ready = [p for p, t in self._dirty.items() if t + self.debounce_s <= now]
                for p in ready:
                    del self._dirty[p]
            try:
                self.on_change(sorted(ready))
            except Exception:
                # One bad batch must not kill the watcher; the next reconcile retries it.
                log.exception("%s: handling %d changed paths failed", self.name, len(ready))
