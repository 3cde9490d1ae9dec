"""One replacement of a memory file on disk, checked against the version memd read.

- an edit that only adds bytes at the end is appended (`O_APPEND`), after checking the open
  file is the one read and still that long, and verified by reading back; the file is not
  rewritten;
- otherwise the new content is written to a hidden temp file in the same folder and swapped
  in with `renameat2(RENAME_EXCHANGE)` (Linux) or `renamex_np(RENAME_SWAP)` (macOS): the
  previous file is left at the temp name, so memd can check it is exactly what the edit was
  based on. If an editor's save landed in between, the swap is reversed (the editor's version
  is put back, never lost) and the caller applies the edit again on top of it;
- where neither exists, the check is followed by a plain rename: a save landing in the
  microseconds between the check and the rename can be overwritten.

On Linux the swap runs under write leases (`core.lease`) on the file read and on memd's new
version (`leased_swap`), taken before the check: while memd holds them, anyone's open of either
file waits, and shows. So:

- an in-place save cannot land between the check and the swap: its open waits; memd sees it
  after the exchange and swaps back before that open goes on (the save then lands at the path);
  a program that only opened the old file to read gets it as it stood;
- a save by rename in that moment is not seen by a lease (a rename does not open the file); it
  is found after the exchange (another file at the temp name) and swapped back. memd's version
  stood at the path for that moment: a program that opened it then waits, and gets, in memd's
  file, the bytes of the version put back (memd writes them in before it lets go); one that
  opened it to write writes its save there, and memd, once it is closed, moves that save to the
  path and keeps the version it displaced beside it (never deletes what it has not read);
- what is left: an open whose path lookup happened just before the exchange and whose lease
  check just after it (both inside one `open` call) is not seen; memd's own threads wait
  for the lease like anyone (for microseconds).

Leases need the file's owner (or CAP_LEASE) and are refused by some file systems (NFS, some
overlays): there, and when only readers hold the file, the swap is the one above without
them, with memd's version visible at the path between the exchange and a put-back. When
someone holds the file open for writing, `Changed`: the door waits for the save and reads again.

Any of these raises `Changed` when the file is not the version read: the caller (the door)
reads it again. Where the file really is is checked against the memory roots again right
before it is replaced and on the temp file the new version is in, so a folder moved away and
replaced by a link while the edit ran is caught. Part of `memd.memory.files`: stateless, the
`Renamer` is the door's.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import tempfile
import time
from pathlib import Path

from memd.core import lease
from memd.core.errors import PathError
from memd.core.fsio import TEMP_SUFFIX, inside_any, make_private_dir, resolve_inside
from memd.core.rename import Renamer
from memd.memory.files.settle import Ident, Roots, Snapshot, ident_of, peek

log = logging.getLogger(__name__)

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Changed(Exception):
    """The file changed between reading it and replacing it: read it again. `written`: memd's
    bytes did go in (an append that someone else's write overlapped): that write happened."""

    def __init__(self, written: bool = False) -> None:
        super().__init__("the file changed")
        self.written = written


def placed(path: Path | str, roots: Roots) -> Path:
    """Where memd writes `path`: the path itself, or, given the roots, its real place when that
    is inside them (`PathError` otherwise)."""
    return Path(path) if roots is None else resolve_inside(roots, path)


def still_inside(path: Path, roots: Roots) -> None:
    """`PathError` when `path` no longer leads inside the roots (a folder on its way was
    replaced by a link since it was resolved)."""
    if roots is not None and not inside_any(path, roots):
        resolve_inside(roots, path)  # raises, naming where it leads
        raise PathError(f"{path} is outside memd's memory folders")


def replace(
    path: Path, snap: Snapshot, new: bytes, new_mode: int, roots: Roots, renamer: Renamer
) -> tuple[str, Ident]:
    """Put `new` at `path`, which must still be `snap`; (how, the identity left) or `Changed`."""
    if snap.ident is None and snap.data is not None:
        raise Changed  # it was read mid-write
    if snap.data is None:
        return "create", create(path, new, new_mode, roots, renamer)
    # A folder on the way may have been moved and replaced by a link while the edit ran: the
    # file still looks the same through it (same inode), so where it is is checked again.
    still_inside(path, roots)
    if len(new) > len(snap.data) and new.startswith(snap.data):
        return "append", append(path, snap, new[len(snap.data) :], roots)
    return swap(path, snap, new, roots, renamer)


def append(path: Path, snap: Snapshot, tail: bytes, roots: Roots = None) -> Ident:
    assert snap.data is not None
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | NOFOLLOW | CLOEXEC)
    except OSError as exc:  # gone, or a link put in its place: read it again
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.EMLINK):
            raise Changed from None
        raise
    try:
        still_inside(path, roots)
        st = os.fstat(fd)
        if ident_of(st) != snap.ident or os.pread(fd, st.st_size + 1, 0) != snap.data:
            raise Changed
        try:
            n = os.write(fd, tail)
        except OSError:
            cut_back(fd, len(snap.data))
            raise
        if n != len(tail):  # a short write: the disk is full
            cut_back(fd, len(snap.data))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        os.fsync(fd)
        after = os.fstat(fd)
        if os.pread(fd, after.st_size + 1, 0) != snap.data + tail:
            # Someone wrote at the same moment: the edit is applied again on what is there.
            raise Changed(written=True)
        return ident_of(after)
    finally:
        os.close(fd)


def cut_back(fd: int, size: int) -> None:
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)


def temp_for(path: Path, data: bytes, mode: int) -> Path:
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


def create(path: Path, data: bytes, mode: int, roots: Roots, renamer: Renamer) -> Ident:
    still_inside(path.parent, roots)  # before a missing folder is made, through any link
    make_private_dir(path.parent)
    tmp = temp_for(path, data, mode)
    try:
        still_inside(tmp, roots)  # where the new file really is, the instant before it counts
        renamer.create(tmp, path)
    except FileExistsError:
        raise Changed from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return ident_of(os.stat(path))


def swap(
    path: Path, snap: Snapshot, new: bytes, roots: Roots, renamer: Renamer
) -> tuple[str, Ident]:
    st = os.lstat(path)
    tmp = temp_for(path, new, st.st_mode & 0o7777)
    try:
        still_inside(tmp, roots)  # where the new version really is, before it takes the name
        ours = ident_of(os.stat(tmp))
        if renamer.exchange_ok:
            done = leased_swap(path, tmp, snap, ours, renamer)
            if done is not None:
                return done
        now = peek(path)
        if now is None or now.ident != snap.ident or now.data != snap.data:
            raise Changed
        try:
            swapped = renamer.exchange(tmp, path)
        except FileNotFoundError:
            raise Changed from None
        if not swapped:
            os.replace(tmp, path)  # the documented window: no atomic swap on this system
            return "replace", ours
        old = peek(tmp)  # what was at `path` the instant before the swap
        if old is not None and old.ident == snap.ident and old.data == snap.data:
            return "swap", ours
        put_back(path, tmp, ours, new, renamer)
        raise Changed
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def leased_swap(
    path: Path, tmp: Path, snap: Snapshot, ours: Ident, renamer: Renamer
) -> tuple[str, Ident] | None:
    """`swap` under write leases on both files (`core.lease`); None when leases are not to be
    had here, or only readers have the file open: the caller swaps without them."""
    fd_new = os.open(tmp, os.O_RDWR | NOFOLLOW | CLOEXEC)
    try:
        try:
            # O_NONBLOCK: a lease another memd process holds on it is not waited for.
            fd_old = os.open(path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW | CLOEXEC)
        except OSError as exc:  # gone, a link put in its place, or mid-swap by another memd
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.EWOULDBLOCK):
                raise Changed from None
            raise
        try:
            return _under_leases(path, tmp, snap, ours, (fd_old, fd_new), renamer)
        finally:
            os.close(fd_old)
    except _Opened as opened:
        left = opened.left
    finally:
        os.close(fd_new)  # before waiting for a writer: memd's own descriptor counts as one
    _after_a_writer(path, tmp, left, renamer)
    raise Changed


class _Opened(Exception):
    """A program opened memd's version for writing while it stood at the path; memd put the
    version before it back, and its version now holds `left` (identity, bytes)."""

    def __init__(self, left: tuple[Ident, bytes]) -> None:
        super().__init__("opened for writing")
        self.left = left


def _under_leases(
    path: Path, tmp: Path, snap: Snapshot, ours: Ident, fds: tuple[int, int], renamer: Renamer
) -> tuple[str, Ident] | None:
    """The swap with the file read (`fds[0]`) and memd's new version (`fds[1]`) leased: an
    open of either by anyone waits until memd lets go, and shows (module docstring)."""
    fd_old, fd_new = fds
    mine = lease.take(fd_new, lease.F_WRLCK)
    if not mine.taken:
        return None
    theirs = lease.take(fd_old, lease.F_WRLCK)
    if not theirs.taken:
        mine.release()
        _refused(fd_old, theirs)
        return None
    opened: int | None = None  # how memd's version was opened while it stood at `path`
    stands = b""  # what it holds then
    try:
        st = os.fstat(fd_old)
        if ident_of(st) != snap.ident or os.pread(fd_old, st.st_size + 1, 0) != snap.data:
            raise Changed
        if not _names(path, st):
            raise Changed  # saved by rename since it was opened
        try:
            if not renamer.exchange(tmp, path):
                return None
        except FileNotFoundError:
            raise Changed from None
        # Nobody can have written the file read since the check (an open for writing waits,
        # and shows); a save by rename in between put another file where the old one went.
        if _names(tmp, st) and theirs.state() != lease.F_UNLCK:
            return "swap", ours  # readers waiting for either file read a version that stood
        opened, stands, ours = _put_back_leased(
            path, tmp, (st, snap), (fd_new, mine), ours, renamer
        )
    finally:
        theirs.release()
        mine.release()
    if opened == lease.F_UNLCK:  # opened for writing: what it writes there is kept
        raise _Opened((ours, stands))
    raise Changed


def swap_back(path: Path, tmp: Path, renamer: Renamer) -> None:
    """Put what is at `tmp` back at `path` (memd's version goes to `tmp`); if `path` was
    renamed away meanwhile, `tmp` takes the name, or, taken again, is kept beside it."""
    try:
        renamer.exchange(tmp, path)
    except FileNotFoundError:
        try:
            renamer.create(tmp, path)
        except FileExistsError:
            keep_beside(path, tmp, renamer)


def _put_back_leased(
    path: Path,
    tmp: Path,
    read: tuple[os.stat_result, Snapshot],
    new: tuple[int, lease.Lease],
    ours: Ident,
    renamer: Renamer,
) -> tuple[int | None, bytes, Ident]:
    """Put back what stood at `path` before memd's version (`read`: the file read, `new`:
    memd's version, leased). If someone opened memd's version meanwhile, it holds what stands
    at `path` then, never the version memd takes back: (how it was opened, those bytes, its
    identity now); else (None, b"", `ours`)."""
    st, snap = read
    fd_new, mine = new
    swap_back(path, tmp, renamer)  # whatever stood at `path` is there again
    if not _names(tmp, os.fstat(fd_new)):
        # Yet another save, by rename, took the path while memd's version stood there (it is
        # at `tmp` now): it is the newest, it goes back, the one before is kept beside it.
        swap_back(path, tmp, renamer)
        keep_beside(path, tmp, renamer)
    if mine.intact():
        return None, b"", ours
    stands = (snap.data if _names(path, st) else _bytes_at(path)) or b""
    os.pwrite(fd_new, stands, 0)
    os.ftruncate(fd_new, len(stands))
    return mine.state(), stands, ident_of(os.fstat(fd_new))


def _refused(fd_old: int, theirs: lease.Lease) -> None:
    """No write lease on the file read: `Changed` when someone has it open for writing (an
    editor mid-save: the door reads it again once saved); else (readers, or no leases here)
    the swap goes on without them."""
    if theirs.busy:
        reading = lease.take(fd_old, lease.F_RDLCK)
        reading.release()
        if reading.busy:
            raise Changed


def _names(path: Path, st: os.stat_result) -> bool:
    """Whether `path` is the file `st` was taken of (no open: memd holds leases on it)."""
    try:
        now = os.lstat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def _bytes_at(path: Path) -> bytes | None:
    """What stands at `path` (a file memd holds no lease on)."""
    now = peek(path)
    return None if now is None else now.data


# How long memd waits for a program that opened its version for writing, in the moment it
# stood at the path, to write and close it (it then holds that program's save).
WRITER_WAIT_S = 5.0


def _after_a_writer(path: Path, tmp: Path, left: tuple[Ident, bytes], renamer: Renamer) -> None:
    """A program opened memd's version for writing while it stood at `path`; memd put the
    version before it back. Once the program closed it: untouched, it goes (the caller removes
    it); written, that save is the newest and goes to `path`, the version it displaces is kept
    beside it; still open after WRITER_WAIT_S, it is kept beside `path`, never deleted."""
    deadline = time.monotonic() + WRITER_WAIT_S
    while lease.nobody_writing(tmp) is False and time.monotonic() < deadline:
        time.sleep(0.01)
    if lease.nobody_writing(tmp) is not False:
        back = peek(tmp)
        if back is None or (back.ident, back.data) == left:
            return  # untouched (or not there: it took the name back, `swap_back`)
        renamer.exchange(tmp, path)
    keep_beside(path, tmp, renamer)


def put_back(path: Path, tmp: Path, ours: Ident, new: bytes, renamer: Renamer) -> None:
    """An editor saved between memd's check and its swap: put the editor's version back."""
    renamer.exchange(tmp, path)
    back = peek(tmp)
    if back is not None and back.ident == ours and back.data == new:
        return  # `tmp` holds memd's version again, untouched; the caller removes it
    # Yet another save landed at `path` meanwhile — by rename, or written into memd's own
    # version while it was at `path` (the same file, other bytes): it is the newest, keep it
    # there, and keep the version it replaced beside it rather than delete a file memd has not
    # read.
    renamer.exchange(tmp, path)
    keep_beside(path, tmp, renamer)


def keep_beside(path: Path, tmp: Path, renamer: Renamer) -> None:
    """The file at `tmp` is a save memd has not read: kept beside `path`, never deleted."""
    kept = path.with_name(f"{path.stem}.kept-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")
    with contextlib.suppress(OSError):
        renamer.create(tmp, kept)
        log.warning("%s was saved twice while memd wrote it; the older save is kept as %s",
                    path, kept)  # fmt: skip


def delete(path: Path, snap: Snapshot, renamer: Renamer) -> bool:
    """Delete `path` if it is still `snap`: renamed aside first and checked there, so a save
    landing meanwhile is put back (False: it changed, nothing deleted)."""
    aside = path.with_name(f".{path.name}.{os.getpid()}.deleted{TEMP_SUFFIX}")
    os.rename(path, aside)
    gone = peek(aside)
    if gone is None or gone.ident != snap.ident or gone.data != snap.data:
        try:
            renamer.create(aside, path)
        except FileExistsError:
            renamer.exchange(aside, path)  # a newer save is at `path`: keep both apart
            renamer.create(aside, path.with_name(f"{path.stem}.kept-{int(time.time())}.md"))
        return False
    os.unlink(aside)
    return True


def changed_at(path: Path) -> float | None:
    """When `path` last changed (its ctime: a save by rename sets it too), as time.time();
    None when it is gone."""
    try:
        return os.stat(path, follow_symlinks=False).st_ctime
    except OSError:
        return None
