"""Linux file leases (`fcntl(F_SETLEASE)`): who else has a file open, told by the kernel.

A *write* lease on a file is granted only while no other open file description has it open (of
any process, this one included); while it is held, another `open()` of the file blocks (up to
/proc/sys/fs/lease-break-time) and the lease shows a pending break (`state`: `F_UNLCK` for an
open for writing or a truncate, `F_RDLCK` for an open for reading), until the holder releases
it. A *read* lease is refused exactly when some open file description has the file open for
writing: one system call says "nobody is writing this file" (`nobody_writing`).

What a lease does not see: a rename or an unlink (a save by rename replaces the name, not the
file: the lease stays on the file it was taken on); a write through a descriptor opened before
the lease (a write lease cannot be had then, a read lease is refused). Leases need the file's
owner (or CAP_LEASE) and are refused by some file systems (NFS, some overlays) and on other
systems: every function here then says so (`None`, `Lease.taken` False) and the caller keeps
its way without leases.

A lease break signals the holder (SIGIO by default, whose default action ends the process).
`take` asks for SIGURG instead (ignored unless a program installs a handler for it) before it
takes the lease and then removes the file's signal owner, so a break signals nobody: holders
here poll `state` instead. Nothing is decided process-wide: a daemon, a CLI or a library call
from any thread may take leases. memd's own `open()` of a file it holds a lease on would wait
for its own lease: while holding one, memd reads and writes that file through the lease's
descriptor only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import stat
import sys
from dataclasses import dataclass

_LINUX = sys.platform.startswith("linux")
F_SETLEASE = 1024  # linux/fcntl.h: F_LINUX_SPECIFIC_BASE + 0
F_GETLEASE = 1025
F_SETSIG = 10
F_SETOWN = 8
F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2
_QUIET = int(getattr(signal, "SIGURG", 0))
# Refused because of another open of the file: the file is in use, the system does leases.
_BUSY = (errno.EAGAIN, errno.EBUSY)


@dataclass(slots=True)
class Lease:
    """A lease on `fd` (`kind`: F_RDLCK or F_WRLCK) or, `taken` False, none: `busy` True when
    refused because another open of the file conflicts, False when leases are not to be had
    here (the system, the file system or the file's owner)."""

    fd: int
    kind: int
    taken: bool
    busy: bool = False

    def state(self) -> int:
        """The lease as the kernel has it now: `kind` while nobody conflicting opened the file,
        else what a pending break downgrades it to (F_RDLCK: an open for reading; F_UNLCK: an
        open for writing, a truncate, or the lease revoked after the break time)."""
        if not self.taken:
            return F_UNLCK
        try:
            return int(fcntl.fcntl(self.fd, F_GETLEASE))
        except OSError:
            return F_UNLCK

    def intact(self) -> bool:
        """Nobody opened the file since the lease was taken (no break pending)."""
        return self.taken and self.state() == self.kind

    def release(self) -> None:
        """Let go of the lease (an open waiting for it goes on); the descriptor stays open."""
        if self.taken:
            self.taken = False
            with contextlib.suppress(OSError):
                fcntl.fcntl(self.fd, F_SETLEASE, F_UNLCK)


def take(fd: int, kind: int) -> Lease:
    """A lease of `kind` on the open file `fd` (for F_RDLCK, `fd` must be read-only)."""
    if not _LINUX or not _QUIET:
        return Lease(fd, kind, False)
    try:
        fcntl.fcntl(fd, F_SETSIG, _QUIET)
        fcntl.fcntl(fd, F_SETLEASE, kind)
    except OSError as exc:
        return Lease(fd, kind, False, busy=exc.errno in _BUSY)
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, F_SETOWN, 0)  # a break now signals nobody (see the module docstring)
    return Lease(fd, kind, True)


def nobody_writing(path: str | os.PathLike[str]) -> bool | None:
    """True: no open file description has `path` open for writing right now (a read lease was
    granted, and let go at once); False: one has; None: leases do not say here."""
    if not _LINUX:
        return None
    try:
        # O_NONBLOCK: a write lease someone holds on it is not waited for (EWOULDBLOCK), nor a
        # FIFO's writer; O_NOFOLLOW: what a link points at is not opened (a device, a file
        # outside the memory roots).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        lease = take(fd, F_RDLCK)
        granted = lease.taken
        lease.release()
    finally:
        os.close(fd)
    if granted:
        return True
    return False if lease.busy else None
