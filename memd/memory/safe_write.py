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

Reading a file once it has stopped changing, and what memd remembers of each file, are
`memd.memory.settled`'s. Writes of one file within this process are serialised (`file_lock`); each successful write is
reported to the history (`note_write`) and to the write guard (`memd.memory.guard`), which
re-applies memd's recent changes when an editor writes back an older copy of the file.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from memd.core.errors import EditConflict, PathError
from memd.core.fsio import (
    PRIVATE_FILE,
    TEMP_SUFFIX,
    inside_any,
    make_private_dir,
    resolve_inside,
)
from memd.core.rename import RENAMER
from memd.history import Cause, note_write
from memd.history.scope import current_scope
from memd.memory.guard import Op, WriteGuard
from memd.memory.settled import (
    Ident,
    Snapshot,
    encode,
    file_lock,
    forget_known,
    ident_of,
    peek,
    read_settled,
    remember,
)
from memd.memory.settled import (
    Roots as Roots,  # the roots a write must stay inside: part of this module's API
)

log = logging.getLogger(__name__)
T = TypeVar("T")

ATTEMPTS = 25
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NEW_FILE_MODE = PRIVATE_FILE

# `edit(current text or None) -> (new text or None for "no change", result)`.
Edit = Callable[[str | None], tuple[str | None, T]]


class FileBusy(EditConflict):
    """A file kept changing while memd tried to edit it; nothing was written."""


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
                remember(os.path.abspath(self.path), ident_of(os.fstat(fd)))
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
                    remember(key, snap.ident)
                return Written(path, result, snap.text, None, "", snap.ident)
            try:
                how, ident = _replace(path, snap, encode(new), new_mode, roots)
            except _Changed:
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
                continue
            remember(key, ident)
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
        now = peek(path)
        if now is None or now.ident != snap.ident or now.data != snap.data:
            raise _Changed
        try:
            swapped = RENAMER.exchange(tmp, path)
        except FileNotFoundError:
            raise _Changed from None
        if not swapped:
            os.replace(tmp, path)  # the documented window: no atomic swap on this system
            return "replace", ours
        old = peek(tmp)  # what was at `path` the instant before the swap
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
    back = peek(tmp)
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
    with file_lock(path):
        _still_inside(path, roots)
        snap = read_settled(path, inside=roots)
        if snap.data is None:
            return False
        if expected is not None and snap.text != expected:
            raise _changed_since(path)
        aside = path.with_name(f".{path.name}.{os.getpid()}.deleted{TEMP_SUFFIX}")
        os.rename(path, aside)
        gone = peek(aside)
        if gone is None or gone.ident != snap.ident or gone.data != snap.data:
            try:
                RENAMER.create(aside, path)
            except FileExistsError:
                RENAMER.exchange(aside, path)  # a newer save is at `path`: keep both apart
                RENAMER.create(aside, path.with_name(f"{path.stem}.kept-{int(time.time())}.md"))
            raise _changed_since(path)
        os.unlink(aside)
        forget_known(path)
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
        remember(os.path.abspath(path), ident)
        _noted(path, None)
        return True
