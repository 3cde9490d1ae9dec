"""Reading a memory file once it has stopped changing.

An editor saving in place truncates the file and then writes it; one saving by rename leaves
the name missing for a moment. `read_settled` waits (bounded) until a file that looks
mid-save is whole again before memd bases an edit on it (or the index reads it). A file cut
short that has stayed so for SUSPECT_QUIET_S is believed to be simply short — unless another
program holds it open for writing (`core.writers`, a few microseconds when nobody does): on a
loaded machine the pause between an editor's writes can last longer, and the index would
forget, for a moment, every item after the cut. What memd knows of the file (its own
last write, the index's size) is given by the door, so its own last write is never mistaken
for someone else's. Part of `memd.memory.files`: other features use the door.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memd.core.errors import SourceError
from memd.core.fsio import open_regular
from memd.core.writers import writers

log = logging.getLogger(__name__)

Ident = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns


def ident_of(st: os.stat_result) -> Ident:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def ident_now(path: Path) -> Ident | None:
    """The identity of what is at `path` now (never through a link; None: nothing there)."""
    try:
        return ident_of(os.stat(path, follow_symlinks=False))
    except OSError:
        return None


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

# The memory roots a read or write must stay inside (None: not checked here).
Roots = Sequence[Path | str] | None


def decode(data: bytes) -> str:
    """File bytes as text; bytes that are not UTF-8 survive the round trip unchanged."""
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A file as read: its bytes (None: no file), identity and text (`decode` of the bytes)."""

    data: bytes | None
    ident: Ident | None
    text: str | None  # built by `of`, which decodes the bytes once

    @classmethod
    def of(cls, data: bytes | None, ident: Ident | None) -> Snapshot:
        return cls(data, ident, None if data is None else decode(data))


def read_snapshot(path: Path, inside: Roots = None) -> Snapshot:
    """Bytes and identity of a regular file, from one open file (None when missing).

    A symbolic link is not followed (`NotRegularFile`: resolve it and edit its target), nor is
    a FIFO or device opened for long; with `inside` (the roots' real paths, resolved once by
    the door), a file that is not inside those roots is refused (`PathError`).
    """
    try:
        fd = open_regular(path, inside=inside, resolved=True)
    except (FileNotFoundError, NotADirectoryError):
        return Snapshot.of(None, None)
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
        return Snapshot.of(data, None)
    return Snapshot.of(data, ident_of(st2))


def peek(path: Path) -> Snapshot | None:
    """`read_snapshot`, or None when what is there is not a regular file memd may read."""
    try:
        return read_snapshot(path)
    except SourceError:
        return None


def _suspect(snap: Snapshot, expected: int | None, path: Path | None = None) -> bool:
    """Whether a file looks mid-save: missing although memd knew it, or empty or cut short
    and changed in the last moments (an old empty or short file is simply that) or held open
    for writing by another program (`path` given: its save goes on — on a loaded machine the
    pause between an editor's writes can outlast SUSPECT_QUIET_S)."""
    if snap.data is None:
        return expected is not None
    if snap.data and (expected is None or len(snap.data) >= expected):
        return False
    if snap.ident is None or time.time_ns() - snap.ident[3] < SUSPECT_QUIET_S * 1e9:
        return True
    # Asked after the read: a save that ended in between leaves nobody holding the file, and
    # the read was its first part. Read again whatever is there now.
    return path is not None and (bool(writers(path)) or ident_now(path) != snap.ident)


def _recent_foreign(mine: Ident | None, snap: Snapshot) -> bool:
    """Changed in the last moments, and not by memd's own last write (`mine`)."""
    if snap.ident is None:
        return snap.data is not None  # read while it was being written
    if mine == snap.ident:
        return False
    return time.time_ns() - snap.ident[3] < QUIET_S * 1e9


def _whole_longest(
    best: Snapshot, best_for: float, snap: Snapshot, suspect: bool, still_for: float
) -> tuple[Snapshot, float]:
    """The whole state the file stayed in longest so far: `best`, or `snap` (which it stayed in
    for `still_for` seconds) if that is whole and longer."""
    if snap.ident is not None and not suspect and still_for > best_for:
        return snap, still_for
    return best, best_for


def _saved_again(before: Snapshot, now: Snapshot, path: Path) -> bool:
    """Whether `now` is another save of exactly the bytes of `before` (each read whole, not
    empty) and nobody holds the file open for writing: a program writing the same text again
    and again (an editor's older copy, shorter than memd's last write, saved every moment). A
    save cut short is not written again byte for byte by the next save: the next one is
    whole, or longer."""
    return (
        before.ident is not None
        and now.ident is not None
        and now.ident != before.ident
        and bool(now.data)
        and now.data == before.data
        and not writers(path)
    )


def read_settled(
    path: Path,
    *,
    expected: int | None = None,
    mine: Ident | None = None,
    inside: Roots = None,
    first: Snapshot | None = None,
    recent: bool = True,
) -> Snapshot:
    """The file once it has stopped changing (see the module docstring).

    A file that looks mid-save (empty or cut short, and changed less than SUSPECT_QUIET_S
    ago) is waited for until it grows back or has been still that long, at most SETTLE_MAX_S;
    a missing file memd knew, MISSING_WAIT_S; one someone else just changed, up to
    RECENT_MAX_S. A file saved again with exactly the same bytes, nobody holding it open for
    writing, is taken as it is (`_saved_again`: an editor writing its copy again and again is
    not in the middle of a save, however short its copy). A file
    that never stops changing is used as it is now if it looks whole, else in the whole state
    it stayed in longest. `expected` is how long memd last knew the file (its own last write,
    else the index); `mine`, the identity memd's last write left it with; `inside`, roots the
    file must be in (see `read_snapshot`); `first`, the file as
    the caller just read it (`snapshot_of`), so a file that is whole is opened once. `recent`
    False: a file someone just changed is not waited for unless it looks mid-save (the caller
    knows no program holds it open for writing).
    """
    roots = list(inside) if inside is not None else None
    snap = first if first is not None else read_snapshot(path, roots)
    quiet_s = QUIET_S if recent else 0.0
    if not _suspect(snap, expected, path) and not (recent and _recent_foreign(mine, snap)):
        return snap
    start = still_since = time.monotonic()
    best, best_for = snap, -1.0  # the whole state that stayed unchanged longest
    while True:
        suspect = _suspect(snap, expected, path)
        now = time.monotonic()
        if now - start >= (SETTLE_MAX_S if suspect else RECENT_MAX_S):
            break
        time.sleep(0.005)
        again = read_snapshot(path, roots)
        now = time.monotonic()
        if again.ident != snap.ident or again.data != snap.data:
            best, best_for = _whole_longest(best, best_for, snap, suspect, now - still_since)
            if _saved_again(snap, again, path):
                return again
            snap, still_since = again, now
            continue
        if snap.data is None:
            if now - still_since >= MISSING_WAIT_S:
                return snap  # gone: deleted (or moved) by someone else
        elif not _suspect(snap, expected, path) and now - still_since >= quiet_s:
            return snap
    if snap.ident is not None and not _suspect(snap, expected, path):
        return snap  # whole as far as can be told: the newest state
    log.debug("%s kept changing; using the whole state it stayed in longest", path)
    return best
