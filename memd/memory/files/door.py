"""`MemoryFiles`: the one door through which memd writes (and reads, safely) memory files.

memd shares its Markdown files with a person and their editor. Editors save in place (truncate,
then write) or by rename (write a temp file, rename it over the original), at any moment. A
plain "read, change, rename a new copy over it" loses whatever the editor saved in between, and
reading while an in-place save is half done sees an empty or cut file. Every write of a memory
file — remember, forget, a page edit, extraction, archival, the journal, a sync pull, an
import, an undo, a relationship file — goes through `MemoryFiles.edit` (or its whole-file
forms), which:

1. takes the file's lock (memd's own edits of one file never overlap) and **reads** it once it
   has stopped changing (`settle.read_settled`): a file empty or shorter than memd last knew
   it, missing although memd knew it, or just changed by someone else, is waited for (bounded)
   — never a reason to write a template over it;
2. applies memd's recent changes again if an editor wrote back an older copy (the write
   guard), then **computes** the new text as a pure function of what was read, so it can be
   applied again to a newer version;
3. **replaces** the file only if it is still the version read (`disk.replace`: an append, an
   atomic swap, or a create that never replaces), and reads it again to retry, a bounded
   number of times, when it changed (`FileBusy` then, nothing written);
4. remembers the identity it left the file with, tells the guard which items it changed, and
   tells the open **operation** what it wrote: when the operation ends, all it wrote is one
   change of the history.

Every path is resolved inside the memory roots first (a link whose target is inside is written
at its target and stays a link; one leading anywhere else is refused with `PathError` before
anything is read or written), and checked again right before each replacement.

Operations run one at a time (`lock`): two read-modify-writes of one file by two operations
would otherwise lose one of them, and the history could not record them as one change each.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from memd.core.errors import EditConflict, MemdError, SourceError
from memd.core.fsio import (
    inside_any,
    is_regular,
    make_private_dir,
    real,
    resolve_inside,
)
from memd.core.rename import Renamer
from memd.core.writers import writers
from memd.history import Cause
from memd.memory.files import disk
from memd.memory.files.guard import Op, WriteGuard, reapply
from memd.memory.files.operation import NEW_FILE_MODE, Operation, TextEdit, cause_of, texts
from memd.memory.files.operation import Written as Wrote
from memd.memory.files.settle import (
    Ident,
    Snapshot,
    encode,
    ident_now,
    ident_of,
    read_settled,
    read_snapshot,
)

if TYPE_CHECKING:
    from memd.history import History

log = logging.getLogger(__name__)
T = TypeVar("T")

ATTEMPTS = 25
# The detail of a change putting back memd's recent items an editor's older copy wrote over.
REAPPLIED = "applied again after an older copy was saved"
# The longest memd waits for another program holding a file open for writing (an editor in a
# slow save), and (EDIT_MAX_S) all attempts of one write together: a file that keeps changing is
# given up with nothing written rather than hold back every other write (one at a time).
WRITERS_MAX_S, EDIT_MAX_S = 10.0, 15.0
RootsGiven = Sequence[Path] | Callable[[], Sequence[Path]]
# How long the index says a file is (None: not indexed), for files memd has not written.
IndexedSize = Callable[[str], int | None]


class FileBusy(EditConflict):
    """A file kept changing while memd tried to edit it; nothing was written."""


@dataclass(frozen=True, slots=True)
class Written(Generic[T]):
    """The outcome of `MemoryFiles.edit`: what the edit returned and what was written."""

    path: Path
    result: T
    before: str | None  # the text the edit was based on (None: no file)
    after: str | None  # the text written (None: nothing written)
    how: str  # "append" | "swap" | "replace" | "create" | "" (nothing written)
    ident: Ident | None = None  # of the file as memd left it

    @property
    def changed(self) -> bool:
        return bool(self.how)


Cause_ = Operation | Cause  # what a write belongs to: an open operation, or a cause of its own


class MemoryFiles:
    """The memory files of one memd process: the door for every write (module docstring)."""

    def __init__(
        self,
        roots: RootsGiven,
        history: History | None = None,
        *,
        indexed_size: IndexedSize | None = None,
        guard_state: Path | None = None,
    ) -> None:
        # Roots given as a list are resolved once, here: a root swapped for a link later does not
        # move (the memory feature gives the indexer's, which resolves its roots as it adds them).
        self._roots = roots if callable(roots) else [Path(real(r)) for r in roots]
        self.history = history
        self.indexed_size = indexed_size
        # What memd knows of each file (by absolute path): the lock serialising its own edits of
        # it, and the identity its last write left it with (so that write is never taken for
        # someone else's save).
        self._locks: dict[str, threading.RLock] = {}
        self._mine: dict[str, Ident] = {}
        self._known_lock = threading.Lock()
        self.guard = WriteGuard(state=guard_state)  # kept across a restart in `guard_state`
        self.renamer = Renamer()
        # One operation at a time; re-entrant, so an operation may call others' writers.
        self.lock = threading.RLock()

    def _lock(self, path: Path) -> threading.RLock:
        with self._known_lock:
            return self._locks.setdefault(os.path.abspath(path), threading.RLock())

    def _left(self, path: Path, ident: Ident | None) -> None:
        """memd's write left `path` with `ident` (None: memd moved or deleted it)."""
        with self._known_lock:
            if ident is None:
                self._mine.pop(os.path.abspath(path), None)
            else:
                self._mine[os.path.abspath(path)] = ident

    def _expected(self, path: Path, mine: Ident | None, indexed: int | None) -> int | None:
        """How long memd last knew the file: its own last write of it, else the index."""
        if mine is not None:
            return mine[2]
        if indexed is None and self.indexed_size is not None:
            with contextlib.suppress(Exception):
                indexed = self.indexed_size(os.path.abspath(path))
        return indexed

    def roots(self) -> list[Path]:
        """The memory roots: every read and write of a memory file stays inside them."""
        r = self._roots() if callable(self._roots) else self._roots
        return list(r)

    # -- operations ------------------------------------------------------------------------
    @contextlib.contextmanager
    def operation(
        self,
        cause: Cause | str,
        detail: str = "",
        *,
        trailers: dict[str, str] | None = None,
        coalesce: bool = False,
    ) -> Iterator[Operation]:
        """One operation: the writes handed `op` are one change of the history (`coalesce`:
        recorded per file and minute, as journal entries are), recorded when the block ends —
        also when it ends with an error: those writes happened."""
        with self.lock:
            op = Operation(Cause(cause), detail, dict(trailers or {}), coalesce)
            try:
                yield op
            finally:
                self._record(op)

    def _record(self, op: Operation) -> None:
        """The operation's change, exactly as written (what each file held before its first
        write and after its last), not the files as they are now; it lets go of the holds."""
        if self.history is None or op.coalesce or not (op.files or op.held):
            return
        # First, keeping the holds: memd's items put back, with the cause of the changes that
        # made them (an undo's change takes back, never adds); the operation's change follows.
        for why in dict.fromkeys(why for why, _ in op.reapplied.values()):
            put_back = {k: w for k, (c, w) in op.reapplied.items() if c == why}
            self.history.record_written(texts(put_back), why, REAPPLIED, held=[])
        for key, part in op.split:
            self.history.record_written(
                texts({key: part}), op.cause, op.detail, trailers=op.trailers, held=[]
            )
        self.history.record_written(
            texts(op.files), op.cause, op.detail, trailers=op.trailers, held=sorted(op.held)
        )

    def _hold(self, op: Operation, *paths: Path) -> None:
        """Before memd writes these files: until the operation is recorded, no hand edit of
        them is captured (it would hold memd's lines before memd's own change does)."""
        if self.history is None or op.coalesce:
            return
        for p in paths:
            key = os.path.abspath(p)
            if key not in op.held:
                op.held.add(key)
                self.history.hold(key)

    def _wrote(
        self,
        op: Operation,
        path: Path,
        before: str | None,
        after: str | None,
        *,
        stands: bool = False,
        restored: tuple[str | None, Cause] | None = None,
    ) -> None:
        """`op` wrote `path` from `before` to `after`; `stands`: the operation had not written
        the file before this edit, whose earlier attempts (if any) were written over, so the
        operation's change of the file starts from this write's `before`, or from `restored`
        (`before` with memd's items the guard applied again, and the cause of the changes that
        made them: a change of their own)."""
        key = os.path.abspath(path)
        seen = op.files.get(key)
        if stands:
            op.reapplied.pop(key, None)
            if restored is not None and restored[0] != before:
                op.reapplied[key] = (restored[1], Wrote(before, restored[0]))
                before = restored[0]
        if seen is not None and not stands and before != seen.after:
            # Saved by someone between this operation's writes: what it wrote until then is a
            # change of its own, so this one starts from their save and never holds their lines.
            op.split.append((key, seen))
            seen = None
        if seen is None or stands:
            op.files[key] = Wrote(before, after)
        else:
            seen.after = after  # the first write's `before` is the state before the operation
        if op.coalesce and self.history is not None:
            self.history.note_coalesced(path, op.cause)

    @contextlib.contextmanager
    def _in(self, cause: Cause_) -> Iterator[Operation]:
        if isinstance(cause, Operation):
            yield cause
        else:
            with self.operation(cause) as op:
                yield op

    # -- reading ---------------------------------------------------------------------------
    def read(
        self,
        path: Path,
        *,
        indexed: int | None = None,
        inside: Sequence[Path | str] | None = None,
        first: Snapshot | None = None,
        recent: bool = True,
    ) -> Snapshot:
        """The file once it has stopped changing (`settle.read_settled`), inside `inside` (real
        paths, as the indexer's roots are; the memory roots when not given); `indexed`, its size in the index; `first`, the file as the
        caller just read it; `recent` False: no wait for a file just changed that looks whole."""
        roots = list(inside) if inside is not None else self.roots()
        mine = self._mine.get(os.path.abspath(path))
        expected = self._expected(path, mine, indexed)
        snap = read_settled(
            path, expected=expected, mine=mine, inside=roots, first=first, recent=recent
        )
        if snap.data is None and mine is not None:
            self._left(path, None)  # gone: deleted (or moved) by someone else
        return snap

    def text(self, path: Path) -> str | None:
        """The text of a memory file once settled (None: no file), resolved inside the roots."""
        roots = self.roots()
        return self.read(disk.placed(path, roots), inside=roots).text

    def _read_for_write(
        self, path: Path, roots: Sequence[Path], until: float | None = None
    ) -> Snapshot:
        """The file as an edit may be based on: never in the middle of someone else's save.

        Where the system says which programs hold a file open for writing (`core.writers`),
        memd waits while any does (an editor between its truncate and its last write) and then
        takes the file as it is: whole. A file missing although memd knew it (a save by rename
        in progress) is waited for as `read` does. Elsewhere `read`'s waits are all there is.
        A file as memd last left it is taken at once: nobody wrote it since. A file written
        between the read and that check is read again (what was read may be the first part of
        a save that ended meanwhile). `FileBusy` after WRITERS_MAX_S of writers (or at
        `until`, the write's own deadline, if sooner).
        """
        deadline = min(time.monotonic() + WRITERS_MAX_S, until or float("inf"))
        while True:
            snap = read_snapshot(path, roots)
            mine = self._mine.get(os.path.abspath(path))
            if snap.data is None:  # missing: a save by rename in progress, if memd knew it
                return snap if mine is None else self.read(path, inside=roots, first=snap)
            if snap.ident is not None and snap.ident == mine:
                return snap
            who = writers(path)
            if who is None:
                return self.read(path, inside=roots, first=snap)
            if not who and snap.ident is not None:
                # Nobody holds it open for writing: whole, unless it looks cut (`read`) or was
                # written since it was read (a save ended in between: read it again).
                if ident_now(path) == snap.ident:
                    return self.read(path, inside=roots, first=snap, recent=False)
                if time.monotonic() <= deadline:
                    continue
            if time.monotonic() > deadline:
                raise FileBusy(
                    f"{path} is being saved by {', '.join(who) or 'another program'};"
                    " nothing was written",
                    hint="try again once the file is saved and closed",
                )
            time.sleep(0.02)

    def _opened_since(self, path: Path, snap: Snapshot) -> bool:
        """Whether another program holds a file memd did not write last open for writing now,
        right before memd replaces it (the edit's computing took a moment)."""
        mine = self._mine.get(os.path.abspath(path))
        if snap.data is None or (snap.ident is not None and snap.ident == mine):
            return False
        return bool(writers(path))

    # -- writing ---------------------------------------------------------------------------
    def edit(self, path: Path, change: TextEdit[T], cause: Cause_) -> Written[T]:
        """Apply `change` to the file's current text and write the result safely (module
        docstring), as part of `cause` (an open operation, or a cause for a change of its own).

        A new text of None, or equal to the current text, writes nothing. Raises `PathError`
        for a path leading out of the roots, `FileBusy` when the file kept changing.
        """
        with self._in(cause) as op:
            return self._edit(path, change, op)

    def _edit(self, path: Path, change: TextEdit[T], op: Operation) -> Written[T]:
        roots = self.roots()
        path = disk.placed(path, roots)
        self._hold(op, path)
        # Whether this operation wrote the file before this edit: if not, its change starts
        # from the text the write that stands was based on.
        earlier = os.path.abspath(path) in op.files
        with self._lock(path):
            delay = 0.002
            until = time.monotonic() + EDIT_MAX_S
            for _ in range(ATTEMPTS):
                if time.monotonic() > until:
                    break
                disk.still_inside(path, roots)
                snap = self._read_for_write(path, roots, until)
                base, new, result, why = self._compute(path, snap, change)
                if new == snap.text or new is None:
                    if snap.ident is not None:
                        self._left(path, snap.ident)
                    return Written(path, result, snap.text, None, "", snap.ident)
                data = encode(new)
                if self._opened_since(path, snap):
                    continue  # a save began while the edit was computed: wait for it, read again
                try:
                    how, ident = disk.replace(
                        path, snap, data, change.new_mode, roots, self.renamer
                    )
                except disk.Changed as exc:
                    if exc.written:  # it happened: part of the operation whatever comes next
                        self._wrote(op, path, snap.text, new)
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
                    continue
                self._left(path, ident)
                if change.guarded is not None:
                    self.guard.written(path, data, change.guarded(result), str(op.cause))
                # An attempt whose bytes went in but were written over (an editor's save at
                # that moment) left no state of its own: this write, on the editor's version,
                # is memd's change; the editor's lines are the person's.
                self._wrote(op, path, snap.text, new, stands=not earlier, restored=(base, why))
                return Written(path, result, snap.text, new, how, ident)
        raise FileBusy(
            f"{path} kept changing while memd tried to edit it; nothing was written",
            hint="try again once the file is saved",
        )

    def _compute(
        self, path: Path, snap: Snapshot, change: TextEdit[T]
    ) -> tuple[str | None, str | None, T, Cause]:
        """(the text the edit's change starts from: the file with memd's items an older copy
        wrote over applied again; the new text; the edit's result; the cause of those items)."""
        missing = self.guard.missing(path, snap.data, snap.text, disk.changed_at(path))
        todo = missing.ops
        base = reapply(snap.text, todo) if todo else snap.text
        if change.guarded is not None:
            new, result = change.apply(base)
        else:
            # Decided on the version it reads (an undo, a pulled file, a journal line): memd's
            # items an older copy wrote over are applied again on top of its result, as for
            # any other write (letting the guard go of them would lose them).
            new, result = change.apply(snap.text)
            if todo and new is not None:
                new = reapply(new, todo)
        return base, base if new is None else new, result, cause_of(missing.cause)

    def delete(self, path: Path, expected: str | None, cause: Cause_) -> bool:
        """Delete `path` only if it holds `expected` (its text when memd decided to delete it;
        None: whatever it holds). Renamed aside first and checked there, so a save landing
        meanwhile is put back. Returns whether it was deleted (False: already gone)."""
        roots = self.roots()
        path = disk.placed(path, roots)
        with self._in(cause) as op, self._lock(path):
            self._hold(op, path)
            disk.still_inside(path, roots)
            snap = self._read_for_write(path, roots)
            if snap.data is None:
                return False
            if expected is not None and snap.text != expected:
                raise _changed_since(path)
            if not disk.delete(path, snap, self.renamer):
                raise _changed_since(path)
            self._left(path, None)
            self.guard.forget_file(path)
            self._wrote(op, path, snap.text, None)
            return True

    def replace_when(
        self, path: Path, ok: Callable[[str | None], bool], new: str | None, cause: Cause_
    ) -> bool:
        """Write `new` to `path` (None deletes it) only while `ok(its text)` holds (text None:
        no file). For whole-file writes decided on a known version (an undo, a pulled file):
        raises `FileBusy` and writes nothing when it does not hold. Returns whether anything
        changed; memd's earlier item changes the new text took back are no longer guarded (the
        others still are: an editor's older copy saved next must not lose them)."""
        roots = self.roots()
        path = disk.placed(path, roots)
        with self._in(cause) as op:
            if new is None:
                with self._lock(path):
                    current = self.read(path, inside=roots).text
                    if not ok(current):
                        raise _changed_since(path)
                    done = current is not None and self.delete(path, current, op)
            else:

                def replace(current: str | None) -> tuple[str | None, None]:
                    if not ok(current):
                        raise _changed_since(path)
                    return new, None

                done = self._edit(path, TextEdit(replace), op).changed
        if new is None:
            self.guard.forget_file(path)
        elif done:
            self.guard.rewritten(path, encode(new), new)
        return done

    def write_if(self, path: Path, expected: str | None, new: str | None, cause: Cause_) -> None:
        """Write `new` to `path` (None deletes it) only while it holds `expected` (None:
        missing); `FileBusy` otherwise."""
        self.replace_when(path, lambda current: current == expected, new, cause)

    def create_new(self, path: Path, text: str, cause: Cause_) -> bool:
        """Create `path` holding `text` unless it exists (never replaces a file); True if
        created. A link at `path` counts as existing (one leading out is refused)."""
        roots = self.roots()
        resolve_inside(roots, path)  # a link there leading out is refused, one inside exists
        with self._in(cause) as op, self._lock(path):
            self._hold(op, path)
            if os.path.lexists(path):
                return False
            try:
                ident = disk.create(path, encode(text), NEW_FILE_MODE, roots, self.renamer)
            except disk.Changed:
                return False
            self._left(path, ident)
            self._wrote(op, path, None, text)
            return True

    def move(self, src: Path, dest: Path, cause: Cause_) -> None:
        """Move a file to `dest` (a new name there in one step); if a file is already there, the
        text is appended to it and the original deleted only if it still holds what was
        copied (a save meanwhile keeps both). A link or special file at `src` is left alone."""
        roots = self.roots()
        disk.still_inside(dest.parent, roots)  # before a missing folder is made, through any link
        make_private_dir(dest.parent)
        if not is_regular(src):
            return  # a link or special file put in its place since it was listed: left alone
        try:
            text = self.text(src)
        except (OSError, SourceError):
            return
        if text is None:
            return
        with self._in(cause) as op:
            self._hold(op, src, dest)
            disk.still_inside(dest.parent, roots)
            try:
                self.renamer.create(src, dest)  # one step when nothing is there yet
            except FileExistsError:
                pass
            else:
                self._wrote(op, src, text, None)
                self._wrote(op, dest, None, text)
                self._left(src, None)
                return

            def add(current: str | None) -> tuple[str | None, None]:
                return ((current or "").rstrip("\n") + "\n\n" + text if current else text), None

            self._edit(dest, TextEdit(add), op)
            try:
                self.delete(src, text, op)
            except SourceError as exc:  # saved meanwhile: both stay, nothing is lost
                log.warning("archived a copy of %s but kept the file: %s", src, exc)

    def take_back(self, written: Written[T], op: Operation) -> bool:
        """Remove a write of `op` again if the file is exactly as memd left it and the write
        only appended (cutting the file back needs no disk space). True when taken back: the
        guard lets go of that write's items, not of memd's other recent ones in the file."""
        if written.how != "append" or written.before is None or written.after is None:
            return False
        with self._lock(written.path):
            try:
                fd = os.open(written.path, os.O_RDWR | disk.NOFOLLOW | disk.CLOEXEC)
            except OSError:
                return False
            try:
                st = os.fstat(fd)
                if ident_of(st) != written.ident or os.pread(fd, st.st_size + 1, 0) != encode(
                    written.after
                ):
                    return False
                os.ftruncate(fd, len(encode(written.before)))
                os.fsync(fd)
                self._left(written.path, ident_of(os.fstat(fd)))
            finally:
                os.close(fd)
            self.guard.rewritten(written.path, encode(written.before), written.before)
        self._wrote(op, written.path, written.before, written.before)
        return True

    # -- what the watcher saw --------------------------------------------------------------
    def watching(self, on: bool) -> None:
        """The daemon watches the tree (`on`): the guard re-applies what an editor's older
        copy wrote over. Off, the guard keeps nothing. Once the watcher is armed, `resume`."""
        self.guard.active = on

    def resume(self) -> None:
        """memd's changes the guard kept from before this start are applied again to a file an
        editor wrote an older copy of, within their window, while memd was down (called once
        the watcher is armed: a save after this is the watcher's)."""
        roots = self.roots()
        for key in self.guard.kept():
            path = Path(key)
            if not inside_any(path, roots):  # a state file that names a path memd never writes
                self.guard.forget_file(path)
                continue
            try:
                changed_at = os.stat(path, follow_symlinks=False).st_ctime  # a rename's time too
                data = read_snapshot(path, roots).data
            except (OSError, MemdError):
                changed_at, data = 0.0, None
            self.guard.resume(path, data, changed_at)
            self.saved_by_someone(path)

    def saved_by_someone(self, path: Path) -> bool:
        """The watcher saw `path` change: if an editor wrote an older copy over memd's recent
        changes, they are applied again (one change with the cause of the changes). True when
        something was written; never raises (the next write retries). A file as memd's own
        last write left it is nobody else's save."""
        mine = ident_now(path) == self._mine.get(os.path.abspath(path))
        cause = None if mine else self.guard.watched(path, disk.changed_at(path))
        if cause is None:
            return False
        try:
            with self.operation(cause_of(cause), REAPPLIED) as op:
                w = self._edit(path, TextEdit(_unchanged, _no_items), op)
        except Exception as exc:  # the watcher must go on; the next write retries
            log.warning("could not apply memd's changes to %s again: %s", path, exc)
            return False
        return w.changed

    def peek(self, path: Path) -> Snapshot:
        """The file as it is this instant (no waiting), never through a link: for checks only."""
        return read_snapshot(path)


def _unchanged(current: str | None) -> tuple[str | None, None]:
    return None, None


def _no_items(_result: None) -> list[Op]:
    return []


def _changed_since(path: Path) -> FileBusy:
    return FileBusy(f"{path} changed since memd read it; it was not deleted",
                    hint="look at the file and try again")  # fmt: skip
