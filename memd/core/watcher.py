"""Watch folders with watchdog and hand debounced, filtered path batches to a callback.

Never trust the event type: editors save by writing a temp file and renaming it over the
original (vim, VS Code, JetBrains), so every event just marks its path(s) dirty; after a quiet
period the callback re-reads whatever is there. When inotify runs out of watches or instances,
the root falls back to polling and says so.

A folder that does not exist yet (an app's log folder before its first run) is waited for:
its nearest existing parent is watched, not recursively, and the folder gets its own
recursive watch the moment it appears (`watch_when_present`).

A watcher made `held` collects events without handing them on until `release()`: its owner arms
it before a full scan of the roots and releases it after, so a file written while the scan runs
(behind the scan's walk, before the watch would otherwise exist) is read all the same.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
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
from watchdog.observers.api import BaseObserver, ObservedWatch
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


class _AnchorHandler(FileSystemEventHandler):
    """Events in the nearest existing parent of a root that is not there yet."""

    def __init__(self, watcher: Watcher, root: Path) -> None:
        self.watcher = watcher
        self.root = root

    def on_any_event(self, event: FileSystemEvent) -> None:
        if isinstance(event, FileOpenedEvent | FileClosedNoWriteEvent):
            return
        key = str(self.root)
        for p in (event.src_path, event.dest_path):
            if p and os.fsdecode(p) == key and self.watcher.accept(key):
                self.watcher.mark(key)  # a root that is one file, written in its folder
        # Moved on by the flush thread: this one holds the observer's lock, and moving a watch
        # needs it after the watcher's own (the order every other caller takes them in).
        self.watcher.follow(self.root)


@dataclass
class _Pending:
    """A root waited for: the folder watched meanwhile, and what to call when it appears."""

    anchor: Path
    watch: ObservedWatch | None
    on_present: Callable[[Path], object] | None
    recursive: bool = True
    handler: FileSystemEventHandler | None = None  # its handler of the anchor's watch


class Watcher:
    """Recursive watches on several roots feeding one debounced callback."""

    def __init__(
        self,
        on_change: Callable[[list[str]], object],
        *,
        accept: Callable[[str], bool],
        debounce_s: float = 0.12,
        name: str = "watcher",
        held: bool = False,
    ) -> None:
        self.on_change = on_change
        self.accept = accept
        self.debounce_s = debounce_s
        self.name = name
        self.observer: BaseObserver = Observer()
        self.poller: BaseObserver | None = None
        self.fallbacks: dict[str, str] = {}
        self.last_event_at = 0.0
        # When every event seen so far had been handed on and handled: an event that changed
        # nothing to index (a file saved unchanged) leaves no lag behind it.
        self.handled_at = 0.0
        self._dirty: dict[str, float] = {}
        self._cond = threading.Condition()
        self._stop = False
        self._held = held
        self._flusher = threading.Thread(target=self._flush_loop, name=f"memd-{name}", daemon=True)
        self._watched: set[str] = set()
        self._pending: dict[str, _Pending] = {}
        self._pending_lock = threading.RLock()
        self._appeared: set[str] = set()

    @property
    def watched_roots(self) -> frozenset[str]:
        return frozenset(self._watched)

    @property
    def waiting_for(self) -> list[str]:
        """Roots that do not exist yet (or roots that are single files, watched in their folder)."""
        with self._pending_lock:
            return sorted(self._pending)

    @property
    def mode(self) -> str:
        if not self.fallbacks:
            return "native"
        return "polling for " + ", ".join(f"{p} ({why})" for p, why in self.fallbacks.items())

    def start(self) -> None:
        self.observer.start()
        self._flusher.start()
        # The observer adds the watches scheduled before it started only now: a folder on the
        # way to a root waited for that appeared between `watch_when_present` and here made no
        # event any watch saw (`advance` looked before a watch existed). Look again.
        with self._pending_lock:
            for key in list(self._pending):
                self.advance(Path(key))

    def watch(self, root: Path, *, recursive: bool = True) -> None:
        """Watch `root` (recursively, unless not `recursive`: its own entries only); fall back
        to polling when inotify limits are hit."""
        key = str(root)
        if key in self._watched:
            return
        make_private_dir(root)
        self._schedule(_Handler(self), root, recursive=recursive)
        self._watched.add(key)

    def watch_when_present(
        self,
        root: Path,
        on_present: Callable[[Path], object] | None = None,
        *,
        recursive: bool = True,
    ) -> None:
        """Watch the folder `root` recursively (or its own entries only) once it exists,
        without creating it.

        Until then its nearest existing parent is watched (not recursively) and the watch moves
        down as the folders on the way appear; when `root` is there it gets its own watch and
        `on_present(root)` is called (to read what was written before the watch was in place).
        A `root` that is a file is watched in its folder, for good.
        """
        key = str(root)
        with self._pending_lock:
            if key in self._watched or key in self._pending:
                return
            if root.is_dir():
                self.watch(root, recursive=recursive)
                return
            self._pending[key] = _Pending(root, None, on_present, recursive)
            self.advance(root)

    def follow(self, root: Path) -> None:
        """Something changed on the way to a root not there yet: `advance` it soon."""
        with self._cond:
            self._appeared.add(str(root))
            self._cond.notify()

    def advance(self, root: Path) -> None:
        """Move the watch of a root that was not there yet as far down as the disk allows."""
        with self._pending_lock:
            pend = self._pending.get(str(root))
            while pend is not None:
                if root.is_dir():
                    self._drop_anchor(pend)
                    del self._pending[str(root)]
                    self.watch(root, recursive=pend.recursive)
                    if pend.on_present is not None:
                        pend.on_present(root)
                    return
                anchor = root.parent if root.is_file() else _nearest_dir(root)
                if anchor == pend.anchor and pend.watch is not None:
                    return
                self._drop_anchor(pend)
                pend.anchor = anchor
                try:
                    pend.handler = _AnchorHandler(self, root)
                    pend.watch = self._schedule(pend.handler, anchor, recursive=False)
                    if root.is_file() and self.accept(str(root)):
                        self.mark(str(root))  # written before its folder was watched
                except OSError as exc:
                    # The parent vanished meanwhile (look again), or cannot be watched: then the
                    # owner's periodic scan is left to find the root.
                    if anchor.is_dir():
                        log.warning("%s: cannot watch %s for %s: %s", self.name, anchor, root, exc)
                        return
                # Loop: the root, or a folder on its way, may have appeared before the watch.

    def _drop_anchor(self, pend: _Pending) -> None:
        if pend.watch is None:
            return
        # One watch per folder: a folder another root also waits in (two workspaces in one code
        # folder), or that is watched for its own sake, keeps its watch; only this handler goes.
        watch = pend.watch
        shared = any(p is not pend and p.watch == watch for p in self._pending.values()) or (
            not watch.is_recursive and watch.path in self._watched
        )
        for obs in (self.observer, self.poller):
            if obs is not None:
                try:
                    if shared and pend.handler is not None:
                        obs.remove_handler_for_watch(pend.handler, watch)
                    else:
                        obs.unschedule(watch)
                    break
                except KeyError:
                    continue
        pend.watch = pend.handler = None

    def _schedule(
        self, handler: FileSystemEventHandler, path: Path, *, recursive: bool
    ) -> ObservedWatch:
        key = str(path)
        try:
            return self.observer.schedule(handler, key, recursive=recursive)
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
            self.fallbacks[key] = why
            return self.poller.schedule(handler, key, recursive=recursive)

    def release(self) -> None:
        """Hand on what a `held` watcher collected, and every event from now on."""
        with self._cond:
            self._held = False
            self._cond.notify()

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
                while (self._held or not self._dirty) and not self._appeared and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                appeared, self._appeared = self._appeared, set()
            for key in sorted(appeared):
                try:
                    self.advance(Path(key))
                except Exception:
                    log.exception("%s: following %s failed", self.name, key)
            with self._cond:
                if self._held or not self._dirty:
                    continue
                now = time.monotonic()
                oldest_due = min(self._dirty.values()) + self.debounce_s
                if oldest_due > now:
                    self._cond.wait(oldest_due - now)
                    continue
                ready = [p for p, t in self._dirty.items() if t + self.debounce_s <= now]
                for p in ready:
                    del self._dirty[p]
            self._hand_on(ready)

    def _hand_on(self, ready: list[str]) -> None:
        """Give `ready` to the handler; when no event came meanwhile, every one seen so far is
        handled (`handled_at`)."""
        try:
            self.on_change(sorted(ready))
        except Exception:
            # One bad batch must not kill the watcher; the next reconcile retries it.
            log.exception("%s: handling %d changed paths failed", self.name, len(ready))
            return
        with self._cond:
            if not self._dirty:
                self.handled_at = time.time()


def _nearest_dir(path: Path) -> Path:
    """The nearest folder that exists among `path`'s parents."""
    for parent in path.parents:
        if parent.is_dir():
            return parent
    return Path(path.anchor or "/")
