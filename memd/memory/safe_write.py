"""Every read-modify-write of a memory file: never over a change memd has not read.

memd shares its Markdown files with a person and their editor. Editors save in place (truncate,
then write) or by rename (write a temp file, rename it over the original), at any moment. A
plain "read, change, rename a new copy over it" loses whatever the editor saved in between, and
reading while an in-place save is half done sees an empty or cut file. `edit_file` is the one
way memd changes an existing memory file:

1. **Read** the file's bytes and identity (device, inode, size, mtime in ns). A file that is
   empty or shorter than memd last knew it (its last write, or the index) and changed in the
   last moments, missing although memd knew it, or just changed by someone else, is being
   written: wait until it has been still for a short while (bounded), then read it again.
   Never a reason to write a template over it.
2. **Compute** the new content as a pure function of what was read (`edit`), so it can be
   applied again to a newer version.
3. **Replace**, checking first that the identity and the bytes are still those read:
   - an edit that only adds bytes at the end is appended (`O_APPEND`), after checking the open
     file is the one read and still that long, and verified by reading back; the file is not
     rewritten;
   - otherwise the new content is written to a hidden temp file in the same folder and swapped
     in with `renameat2(RENAME_EXCHANGE)` (Linux) or `renamex_np(RENAME_SWAP)` (macOS): the
     previous file is left at the temp name, so memd can check it is exactly what the edit was
     based on. If an editor's save landed in between, the swap is reversed (the editor's
     version is put back, never lost) and the edit is applied again on top of it;
   - where neither exists, the check is followed by a plain rename: a save landing in the
     microseconds between the check and the rename can be overwritten.
4. **Retry** a bounded number of times, with a short backoff, when the file changed; then
   give up with an error, having written nothing.

A missing file is created only when the edit asks for it (the first item of a new topic); a
file that disappears while memd edits it was deleted or is being saved by rename: memd waits
briefly for it to come back and otherwise treats the deletion as the person's.

Given the memory roots (`inside`), every function here writes only inside them: the path is
resolved (a link whose target is inside is written at its target, and stays a link), and one
that leads anywhere else (a linked file or folder on its way) is refused with `PathError`
before anything is read or written. The check is made again at each attempt, right before
the file is replaced and on the temp file the new version is in, so a folder moved away and
replaced by a link while the edit ran (the file looks the same through it) is caught too.

Writes of one file within this process are serialised (`file_lock`); each successful write is
reported to the history (`note_write`) and to the write guard (`memd.memory.guard`), which
re-applies memd's recent changes when an editor writes back an older copy of the file.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import ctypes.util
import errno
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from memd.core.errors import EditConflict, PathError, SourceError
from memd.core.fsio import (
    PRIVATE_FILE,
    TEMP_SUFFIX,
    inside_any,
    make_private_dir,
    open_regular,
    resolve_inside,
)
from memd.history import Cause, note_write
from memd.history.scope import current_scope
from memd.memory.guard import Op, WriteGuard

log = logging.getLogger(__name__)
T = TypeVar("T")

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
ATTEMPTS = 25
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NEW_FILE_MODE = PRIVATE_FILE

Ident = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns
# The memory roots a read or write must stay inside (None: not checked here).
Roots = Sequence[Path | str] | None
# `edit(current text or None) -> (new text or None for "no change", result)`.
Edit = Callable[[str | None], tuple[str | None, T]]


class FileBusy(EditConflict):
    """A file kept changing while memd tried to edit it; nothing was written."""


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


def _peek(path: Path) -> Snapshot | None:
    """`read_snapshot`, or None when what is there is not a regular file memd may read."""
    try:
        return read_snapshot(path)
    except SourceError:
        return None


# -- swapping two names atomically ------------------------------------------------------------
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_RENAME_SWAP = 0x2  # macOS renamex_np
_RENAME_EXCL = 0x4


class _Renamer:
    """`renameat2`/`renamex_np` through ctypes, where the C library has them."""

    def __init__(self) -> None:
        self.exchange_ok = False
        self.noreplace_ok = False
        self._fn: Any = None
        self._mac = sys.platform == "darwin"
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            if self._mac:
                fn = libc.renamex_np
                fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
            else:
                fn = libc.renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                               ctypes.c_uint]  # fmt: skip
            fn.restype = ctypes.c_int
        except (OSError, AttributeError):
            return
        self._fn = fn
        self.exchange_ok = self.noreplace_ok = True

    def _call(self, src: Path, dst: Path, flags: int) -> None:
        a, b = os.fsencode(src), os.fsencode(dst)
        rc = self._fn(a, b, flags) if self._mac else self._fn(_AT_FDCWD, a, _AT_FDCWD, b, flags)
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(src), None, str(dst))

    def exchange(self, a: Path, b: Path) -> bool:
        """Swap two names in one step; False when this system or file system cannot."""
        if not self.exchange_ok:
            return False
        try:
            self._call(a, b, _RENAME_SWAP if self._mac else _RENAME_EXCHANGE)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
                self.exchange_ok = False  # e.g. a file system without it: check, then rename
                log.info("atomic swap unsupported here (%s): using check-then-rename", exc)
                return False
            raise
        return True

    def create(self, src: Path, dst: Path) -> None:
        """Rename `src` to `dst` only if `dst` does not exist (FileExistsError otherwise)."""
        if self.noreplace_ok:
            try:
                self._call(src, dst, _RENAME_EXCL if self._mac else _RENAME_NOREPLACE)
                return
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise
                self.noreplace_ok = False
        os.link(src, dst)  # fails with EEXIST; then the temp name goes
        os.unlink(src)


RENAMER = _Renamer()


# -- what memd knows of each file ------------------------------------------------------------
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


# -- reading a settled file ------------------------------------------------------------------
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


# -- the memory roots ------------------------------------------------------------------------
def _roots(inside: Roots) -> list[Path | str] | None:
    return None if inside is None else list(inside)


def placed(path: Path | str, roots: Roots) -> Path:
    """Where memd writes `path`: the path itself, or, given the roots, its real place when that
    is inside them (`PathError` otherwise)."""
    return Path(path) if roots is None else resolve_inside(roots, path)


def _still_inside(path: Path, roots: Roots) -> None:
    """`PathError` when `path` no longer leads inside the roots (a folder on its way was
    replaced by a link since it was resolved)."""
    if roots is not None and not inside_any(path, roots):
        resolve_inside(roots, path)  # raises, naming where it leads
        raise PathError(f"{path} is outside memd's memory folders")


# -- the edit --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Written(Generic[T]):
    """The outcome of `edit_file`: what the edit returned and what was written."""

    path: Path
    result: T
    before: str | None  # the text the edit was based on (None: no file)
    after: str | None  # the text written (None: nothing written)
    how: str  # "append" | "swap" | "replace" | "create" | "" (nothing written)
    ident: Ident | None = None  # of the file as memd left it

    @property
    def changed(self) -> bool:
        return bool(self.how)

    def take_back(self) -> bool:
        """Remove this write again if the file is exactly as memd left it and the write only
        appended (cutting the file back needs no disk space). True when taken back."""
        if self.how != "append" or self.before is None or self.after is None:
            return False
        with file_lock(self.path):
            try:
                fd = os.open(self.path, os.O_RDWR | _NOFOLLOW | _CLOEXEC)
            except OSError:
                return False
            try:
                st = os.fstat(fd)
                if ident_of(st) != self.ident or os.pread(fd, st.st_size + 1, 0) != encode(
                    self.after
                ):
                    return False
                os.ftruncate(fd, len(encode(self.before)))
                os.fsync(fd)
                _remember(os.path.abspath(self.path), ident_of(os.fstat(fd)))
            finally:
                os.close(fd)
        return True


class _Changed(Exception):
    """The file changed between reading it and replacing it: read it again."""


# Writes that are not memd's own item edits but still memd's (journal entries): the history
# records them coalesced, with this cause, instead of as one change each.
_COALESCE: contextvars.ContextVar[tuple[Any, Cause] | None] = contextvars.ContextVar(
    "memd_coalesce", default=None
)


@contextlib.contextmanager
def coalesced_writes(history: Any, cause: Cause) -> Iterator[None]:
    """Within this block, files `edit_file` writes are recorded by `history.note_coalesced`."""
    token = _COALESCE.set((history, cause) if history is not None else None)
    try:
        yield
    finally:
        _COALESCE.reset(token)


def _noted(path: Path, before: str | None) -> None:
    note_write(path, before)
    co = _COALESCE.get()
    if co is not None:
        co[0].note_coalesced(path, co[1])


def _remember(key: str, ident: Ident) -> None:
    with _registry_guard:
        _known[key] = (ident, time.monotonic())


def edit_file(
    path: Path,
    edit: Edit[T],
    *,
    guard: WriteGuard | None = None,
    ops_of: Callable[[T], list[Op]] | None = None,
    new_mode: int = NEW_FILE_MODE,
    inside: Roots = None,
) -> Written[T]:
    """Apply `edit` to the file's current text and write the result safely (module docstring).

    `edit` gets the text (None when there is no file) and returns (new text, result); a new
    text of None, or equal to the current text, writes nothing. It may run several times,
    each time on newer content: it must be a pure function of its argument. `guard` first
    re-applies memd's own recent changes an editor wrote over, then learns this write's item
    changes, `ops_of(result)` (without `ops_of` the write is a whole-file one the guard lets
    go of). With `inside`, the memory roots: a path leading out of them raises `PathError`
    and nothing is written. Raises `FileBusy` when the file kept changing.
    """
    roots = _roots(inside)
    path = placed(path, roots)
    key = os.path.abspath(path)
    with file_lock(path):
        delay = 0.002
        for _ in range(ATTEMPTS):
            _still_inside(path, roots)
            snap = read_settled(path, inside=roots)
            base = snap.text
            if guard is not None:
                base = guard.restore(path, snap.data, base)
            new, result = edit(base)
            if new is None:
                new = base
            if new == snap.text or new is None:
                if snap.ident is not None:
                    _remember(key, snap.ident)
                return Written(path, result, snap.text, None, "", snap.ident)
            try:
                how, ident = _replace(path, snap, encode(new), new_mode, roots)
            except _Changed:
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
                continue
            _remember(key, ident)
            if guard is not None:
                scope = current_scope()
                cause = str(scope.cause) if scope is not None else ""
                guard.written(path, encode(new), ops_of(result) if ops_of else None, cause)
            _noted(path, snap.text)
            return Written(path, result, snap.text, new, how, ident)
    raise FileBusy(
        f"{path} kept changing while memd tried to edit it; nothing was written",
        hint="try again once the file is saved",
    )


def _replace(
    path: Path, snap: Snapshot, new: bytes, new_mode: int, roots: Roots
) -> tuple[str, Ident]:
    if snap.ident is None and snap.data is not None:
        raise _Changed  # it was read mid-write
    if snap.data is None:
        return "create", _create(path, new, new_mode, roots)
    # A folder on the way may have been moved and replaced by a link while the edit ran: the
    # file still looks the same through it (same inode), so where it is is checked again.
    _still_inside(path, roots)
    if len(new) > len(snap.data) and new.startswith(snap.data):
        return "append", _append(path, snap, new[len(snap.data) :], roots)
    return _swap(path, snap, new, roots)


def _append(path: Path, snap: Snapshot, tail: bytes, roots: Roots = None) -> Ident:
    assert snap.data is not None
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:  # gone, or a link put in its place: read it again
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.EMLINK):
            raise _Changed from None
        raise
    try:
        _still_inside(path, roots)
        st = os.fstat(fd)
        if ident_of(st) != snap.ident or os.pread(fd, st.st_size + 1, 0) != snap.data:
            raise _Changed
        try:
            n = os.write(fd, tail)
        except OSError:
            _cut_back(fd, len(snap.data))
            raise
        if n != len(tail):  # a short write: the disk is full
            _cut_back(fd, len(snap.data))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        os.fsync(fd)
        after = os.fstat(fd)
        if os.pread(fd, after.st_size + 1, 0) != snap.data + tail:
            # Someone wrote at the same moment: the edit is applied again on what is there.
            raise _Changed
        return ident_of(after)
    finally:
        os.close(fd)


def _cut_back(fd: int, size: int) -> None:
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)


def _temp_for(path: Path, data: bytes, mode: int) -> Path:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def _create(path: Path, data: bytes, mode: int, roots: Roots = None) -> Ident:
    _still_inside(path.parent, roots)  # before a missing folder is made, through any link
    make_private_dir(path.parent)
    tmp = _temp_for(path, data, mode)
    try:
        _still_inside(tmp, roots)  # where the new file really is, the instant before it counts
        RENAMER.create(tmp, path)
    except FileExistsError:
        raise _Changed from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return ident_of(os.stat(path))


def _swap(path: Path, snap: Snapshot, new: bytes, roots: Roots = None) -> tuple[str, Ident]:
    st = os.lstat(path)
    tmp = _temp_for(path, new, st.st_mode & 0o7777)
    try:
        _still_inside(tmp, roots)  # where the new version really is, before it takes the name
        ours = ident_of(os.stat(tmp))
        now = _peek(path)
        if now is None or now.ident != snap.ident or now.data != snap.data:
            raise _Changed
        try:
            swapped = RENAMER.exchange(tmp, path)
        except FileNotFoundError:
            raise _Changed from None
        if not swapped:
            os.replace(tmp, path)  # the documented window: no atomic swap on this system
            return "replace", ours
        old = _peek(tmp)  # what was at `path` the instant before the swap
        if old is not None and old.ident == snap.ident and old.data == snap.data:
            return "swap", ours
        _put_back(path, tmp, ours)
        raise _Changed
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _put_back(path: Path, tmp: Path, ours: Ident) -> None:
    """An editor saved between memd's check and its swap: put the editor's version back."""
    RENAMER.exchange(tmp, path)
    back = _peek(tmp)
    if back is not None and back.ident is not None and back.ident[:2] == ours[:2]:
        return  # `tmp` holds memd's version again; the caller removes it
    # Yet another save landed at `path` meanwhile: it is the newest, keep it there, and keep
    # the version it replaced beside it rather than delete a file memd has not read.
    RENAMER.exchange(tmp, path)
    kept = path.with_name(f"{path.stem}.kept-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")
    with contextlib.suppress(OSError):
        RENAMER.create(tmp, kept)
        log.warning("%s was saved twice while memd wrote it; the older save is kept as %s",
                    path, kept)  # fmt: skip


def delete_file(path: Path, expected: str | None, *, inside: Roots = None) -> bool:
    """Delete `path` only if it holds `expected` (its text when memd decided to delete it).

    The file is renamed aside first and checked there, so a save landing meanwhile is put back.
    Returns whether it was deleted (False: it was already gone). `inside`: as for `edit_file`.
    """
    roots = _roots(inside)
    path = placed(path, roots)
    key = os.path.abspath(path)
    with file_lock(path):
        _still_inside(path, roots)
        snap = read_settled(path, inside=roots)
        if snap.data is None:
            return False
        if expected is not None and snap.text != expected:
            raise _changed_since(path)
        aside = path.with_name(f".{path.name}.{os.getpid()}.deleted{TEMP_SUFFIX}")
        os.rename(path, aside)
        gone = _peek(aside)
        if gone is None or gone.ident != snap.ident or gone.data != snap.data:
            try:
                RENAMER.create(aside, path)
            except FileExistsError:
                RENAMER.exchange(aside, path)  # a newer save is at `path`: keep both apart
                RENAMER.create(aside, path.with_name(f"{path.stem}.kept-{int(time.time())}.md"))
            raise _changed_since(path)
        os.unlink(aside)
        with _registry_guard:
            _known.pop(key, None)
        _noted(path, snap.text)
        return True


def _changed_since(path: Path) -> FileBusy:
    return FileBusy(f"{path} changed since memd read it; it was not deleted",
                    hint="look at the file and try again")  # fmt: skip


def replace_when(
    path: Path,
    ok: Callable[[str | None], bool],
    new: str | None,
    *,
    guard: WriteGuard | None = None,
    inside: Roots = None,
) -> bool:
    """Write `new` to `path` (None deletes it) only while `ok(its text)` holds (text None: no
    file). For whole-file writes decided on a known version (an undo, a pulled file): raises
    `FileBusy` and writes nothing when it does not hold. Returns whether anything changed.
    `inside`: as for `edit_file`.
    """
    roots = _roots(inside)
    path = placed(path, roots)
    if new is None:
        with file_lock(path):
            _still_inside(path, roots)
            current = read_settled(path, inside=roots).text
            if not ok(current):
                raise _changed_since(path)
            done = current is not None and delete_file(path, current, inside=roots)
    else:

        def replace(current: str | None) -> tuple[str | None, None]:
            if not ok(current):
                raise _changed_since(path)
            return new, None

        done = edit_file(path, replace, inside=roots).changed
    if guard is not None:
        guard.forget_file(path)
    return done


def write_if(
    path: Path,
    expected: str | None,
    new: str | None,
    *,
    guard: WriteGuard | None = None,
    inside: Roots = None,
) -> None:
    """Write `new` to `path` (None deletes it) only while it holds `expected` (None: missing).
    `inside`: as for `edit_file`."""
    replace_when(path, lambda current: current == expected, new, guard=guard, inside=inside)


def create_new(path: Path, text: str, *, inside: Roots = None) -> bool:
    """Create `path` holding `text` unless it exists (never replaces a file); True if created.
    `inside`: as for `edit_file` (a link at `path` counts as existing: nothing is written)."""
    roots = _roots(inside)
    if roots is not None:
        resolve_inside(roots, path)  # a link there leading out is refused, one inside exists
    with file_lock(path):
        if os.path.lexists(path):
            return False
        try:
            ident = _create(path, encode(text), NEW_FILE_MODE, roots)
        except _Changed:
            return False
        _remember(os.path.abspath(path), ident)
        _noted(path, None)
        return True


def forget_known(path: Path | str) -> None:
    """Drop what memd remembers of a file (it was moved or deleted by memd)."""
    with _registry_guard:
        _known.pop(os.path.abspath(path), None)
