"""Reading a memory file once it has stopped changing, and what memd knows of each file.

An editor saving in place truncates the file and then writes it; one saving by rename leaves
the name missing for a moment. `read_settled` waits (bounded) until a file that looks
mid-save is whole again before memd bases an edit on it; `file_lock` serialises memd's own
edits of one file in this process, and memd remembers the identity it left each file with
(`remember`), so its own last write is never mistaken for someone else's. The safe writer
(`memd.memory.safe_write`) is built on these.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memd.core.errors import SourceError
from memd.core.fsio import open_regular

log = logging.getLogger(__name__)

# A file changed by someone else this recently may still be being written.
QUIET_S = 0.05
# An empty or cut file changed less than this long ago may be half-way through a save (one
# that has stayed so this long is simply empty or short) ...
SUSPECT_QUIET_S = 0.2
# ... and a file memd knew that is missing must stay missing this long before memd believes it.
MISSING_WAIT_S = 0.25
# The longest memd waits for a file that looks mid-save (or, RECENT_MAX_S, one just changed).
SETTLE_MAX_S = 2.0
RECENT_MAX_S = 0.2

Ident = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns
# The memory roots a read or write must stay inside (None: not checked here).
Roots = Sequence[Path | str] | None


def ident_of(st: os.stat_result) -> Ident:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def decode(data: bytes) -> str:
    """File bytes as text; bytes that are not UTF-8 survive the round trip unchanged."""
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A file as read: its bytes (None: no file) and identity."""

    data: bytes | None
    ident: Ident | None

    @property
    def text(self) -> str | None:
        return None if self.data is None else decode(self.data)


def read_snapshot(path: Path, inside: Roots = None) -> Snapshot:
    """Bytes and identity of a regular file, from one open file (None when missing).

    A symbolic link is not followed (`NotRegularFile`: resolve it and edit its target), nor is
    a FIFO or device opened for long; with `inside`, a file that is not inside those roots is
    refused (`PathError`).
    """
    try:
        fd = open_regular(path, inside=inside)
    except (FileNotFoundError, NotADirectoryError):
        return Snapshot(None, None)
    try:
        return snapshot_of(fd, os.fstat(fd))
    finally:
        os.close(fd)


def snapshot_of(fd: int, st: os.stat_result) -> Snapshot:
    """`read_snapshot` of a file already open (`fd`, read from its start; `st`: its fstat
    when opened), for a caller that checked the file itself."""
    chunks = []
    want = max(st.st_size + 1, 1 << 16)
    while chunk := os.read(fd, want):
        chunks.append(chunk)
        if len(chunk) < want:
            break  # the end of a regular file (growth since is caught by the fstat below)
    st2 = os.fstat(fd)
    data = b"".join(chunks)
    # A write while reading: the identity must describe the bytes, or the checks mean nothing.
    if ident_of(st2) != ident_of(st) or len(data) != st2.st_size:
        return Snapshot(data, None)
    return Snapshot(data, ident_of(st2))


def peek(path: Path) -> Snapshot | None:
    """`read_snapshot`, or None when what is there is not a regular file memd may read."""
    try:
        return read_snapshot(path)
    except SourceError:
        return None


_locks: dict[str, threading.RLock] = {}
_known: dict[str, tuple[Ident, float]] = {}  # path -> (identity after memd's last write, when)
_registry_guard = threading.Lock()
SizeHint = Callable[[str], int | None]
_size_hints: list[SizeHint] = []


def file_lock(path: Path | str) -> threading.RLock:
    """The lock serialising memd's own edits of one file in this process (re-entrant: a
    caller may hold it around several edits of the file)."""
    key = os.path.abspath(path)
    with _registry_guard:
        return _locks.setdefault(key, threading.RLock())


def add_size_hint(hint: SizeHint) -> Callable[[], None]:
    """Register where the indexed size of a file can be looked up; returns the unregister."""
    with _registry_guard:
        _size_hints.append(hint)

    def remove() -> None:
        with _registry_guard, contextlib.suppress(ValueError):
            _size_hints.remove(hint)

    return remove


def _expected_size(key: str, indexed: int | None = None) -> int | None:
    """How long memd last knew the file: its own last write of it, else the index."""
    known = _known.get(key)
    if known is not None:
        return known[0][2]
    if indexed is not None:
        return indexed
    for hint in list(_size_hints):
        with contextlib.suppress(Exception):
            size = hint(key)
            if size is not None:
                return size
    return None


def _suspect(snap: Snapshot, expected: int | None) -> bool:
    """Whether a file looks mid-save: missing although memd knew it, or empty or cut short
    and changed in the last moments (an old empty or short file is simply that)."""
    if snap.data is None:
        return expected is not None
    if snap.data and (expected is None or len(snap.data) >= expected):
        return False
    return snap.ident is None or time.time_ns() - snap.ident[3] < SUSPECT_QUIET_S * 1e9


def _recent_foreign(key: str, snap: Snapshot) -> bool:
    """Changed in the last moments, and not by memd's own last write."""
    if snap.ident is None:
        return snap.data is not None  # read while it was being written
    known = _known.get(key)
    if known is not None and known[0] == snap.ident:
        return False
    return time.time_ns() - snap.ident[3] < QUIET_S * 1e9


def read_settled(
    path: Path,
    *,
    indexed: int | None = None,
    inside: Roots = None,
    first: Snapshot | None = None,
) -> Snapshot:
    """The file once it has stopped changing (see the module docstring).

    A file that looks mid-save (empty or cut short, and changed less than SUSPECT_QUIET_S
    ago) is waited for until it grows back or has been still that long, at most SETTLE_MAX_S;
    a missing file memd knew, MISSING_WAIT_S; one someone else just changed, up to
    RECENT_MAX_S. A file
    that never stops changing is used as it is now if it looks whole, else in the whole state
    it stayed in longest. `indexed` is the file's size in the index, when memd has not written
    it itself; `inside`, roots the file must be in (see `read_snapshot`); `first`, the file as
    the caller just read it (`snapshot_of`), so a file that is whole is opened once.
    """
    key = os.path.abspath(path)
    expected = _expected_size(key, indexed)
    roots = list(inside) if inside is not None else None
    snap = first if first is not None else read_snapshot(path, roots)
    if not _suspect(snap, expected) and not _recent_foreign(key, snap):
        return snap
    start = still_since = time.monotonic()
    best, best_for = snap, -1.0  # the whole state that stayed unchanged longest
    while True:
        suspect = _suspect(snap, expected)
        now = time.monotonic()
        if now - start >= (SETTLE_MAX_S if suspect else RECENT_MAX_S):
            break
        time.sleep(0.005)
        again = read_snapshot(path, roots)
        now = time.monotonic()
        if again.ident != snap.ident or again.data != snap.data:
            if snap.ident is not None and not suspect and now - still_since > best_for:
                best, best_for = snap, now - still_since
            snap, still_since = again, now
            continue
        if snap.data is None:
            if now - still_since >= MISSING_WAIT_S:
                forget_known(path)  # gone: deleted (or moved) by someone else
                return snap
        elif not _suspect(snap, expected) and now - still_since >= QUIET_S:
            return snap
    if snap.ident is not None and not _suspect(snap, expected):
        return snap  # whole as far as can be told: the newest state
    log.debug("%s kept changing; using the whole state it stayed in longest", path)
    return best


def remember(key: str, ident: Ident) -> None:
    """Record the identity memd left the file at `key` (its absolute path) with."""
    with _registry_guard:
        _known[key] = (ident, time.monotonic())


def forget_known(path: Path | str) -> None:
    """Drop what memd remembers of a file (it was moved or deleted by memd)."""
    with _registry_guard:
        _known.pop(os.path.abspath(path), None)
