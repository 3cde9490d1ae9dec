"""What memd knows of each memory file: the lock serialising its own edits of the file, the
identity it last left the file with, and how long the index says the file is.

memd's own last write must never be mistaken for someone else's save (`settle` waits for those),
and a file shorter than memd last knew it may be half-way through a save. One `KnownFiles`
belongs to one `MemoryFiles` (the door): nothing of it is kept at module level.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

Ident = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns
# How long the index says a file is (None: not indexed), for files memd has not written.
IndexedSize = Callable[[str], int | None]


def ident_of(st: os.stat_result) -> Ident:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class KnownFiles:
    """Per file (by absolute path): its edit lock and the identity memd left it with."""

    def __init__(self, indexed_size: IndexedSize | None = None) -> None:
        self.indexed_size = indexed_size
        self._locks: dict[str, threading.RLock] = {}
        self._left: dict[str, Ident] = {}
        self._guard = threading.Lock()

    def lock(self, path: Path | str) -> threading.RLock:
        """The lock serialising memd's own edits of one file (re-entrant: a caller may hold it
        around several edits of the file)."""
        key = os.path.abspath(path)
        with self._guard:
            return self._locks.setdefault(key, threading.RLock())

    def left(self, path: Path | str, ident: Ident) -> None:
        """memd just left the file at `path` with this identity."""
        with self._guard:
            self._left[os.path.abspath(path)] = ident

    def forget(self, path: Path | str) -> None:
        """Drop what memd knows of a file (it was moved or deleted)."""
        with self._guard:
            self._left.pop(os.path.abspath(path), None)

    def ident(self, path: Path | str) -> Ident | None:
        """The identity memd last left the file with (None: not known)."""
        return self._left.get(os.path.abspath(path))

    def expected_size(self, path: Path | str, indexed: int | None = None) -> int | None:
        """How long memd last knew the file: its own last write of it, else the index."""
        mine = self.ident(path)
        if mine is not None:
            return mine[2]
        if indexed is not None:
            return indexed
        if self.indexed_size is not None:
            with contextlib.suppress(Exception):
                return self.indexed_size(os.path.abspath(path))
        return None
