"""The instance lock: one daemon per MEMD_HOME, and no change written beside it.

An `flock` on a file of the data folder. The daemon holds it while it runs; so does a change
made while no daemon runs (the CLI's and the memory page's, `memd.app.writing_engine`), for
the second or so it takes. The holder writes its pid in the file, and a daemon the socket it
serves, so a daemon starting while the lock is held can tell the two apart (`take`): a daemon
that answers on its socket is refused at once; anything else — a change made without a
daemon, a daemon still opening its index — is waited for, up to `WAIT_S`.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from memd.core.errors import DaemonAlreadyRunning
from memd.core.fsio import make_private_dir

log = logging.getLogger("memd")
# The longest a starting daemon waits for a lock held by something that is not a daemon
# answering on its socket: a change written without a daemon takes about a second; a service
# manager restarts a daemon that gave up.
WAIT_S = 30.0
POLL_S = 0.1


class InstanceLock:
    """An flock on the data folder: one daemon per MEMD_HOME, whatever socket it uses."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self, serves: Path | None = None) -> None:
        """Take the lock at once, writing this pid (and `serves`, the socket a daemon answers
        on); `DaemonAlreadyRunning` naming the holder when it is held."""
        make_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            pid, _ = _holder(os.read(fd, 4096))
            os.close(fd)
            raise DaemonAlreadyRunning(
                f"memd is already running (pid {pid}) for {self.path.parent}",
                hint="stop it first, or point MEMD_HOME elsewhere",
            ) from exc
        os.ftruncate(fd, 0)
        os.write(fd, (f"{os.getpid()}\n{serves}" if serves else str(os.getpid())).encode())
        self.fd = fd

    def holder(self) -> tuple[str, Path | None]:
        """(pid, the socket it serves or None) of whoever holds the lock now, as it wrote them."""
        try:
            return _holder(self.path.read_bytes())
        except OSError:
            return "?", None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    async def take(
        self, serves: Path, stopping: Callable[[], bool], wait_s: float = WAIT_S
    ) -> bool:
        """Acquire the lock for a daemon serving `serves`. Held by a daemon that answers on its
        socket (or on `serves`): `DaemonAlreadyRunning` at once. Held by anything else: wait
        (up to `wait_s`, then `DaemonAlreadyRunning`). False when `stopping()` came first."""
        deadline = time.monotonic() + wait_s
        told = False
        while True:
            try:
                self.acquire(serves)
                return True
            except DaemonAlreadyRunning as exc:
                pid, theirs = self.holder()
                if answers(serves) or (theirs is not None and answers(theirs)):
                    raise
                if time.monotonic() >= deadline:
                    raise DaemonAlreadyRunning(
                        f"{exc} and did not answer on a socket for {wait_s:.0f} s",
                        hint="a change made without the daemon may still be running; if it is"
                        " done, start memd again",
                    ) from None
                if not told:
                    told = True
                    log.info("waiting for pid %s to release the instance lock (not a daemon"
                             " answering on a socket: a change made without the daemon?)", pid)  # fmt: skip
            await asyncio.sleep(POLL_S)
            if stopping():
                return False


def _holder(data: bytes) -> tuple[str, Path | None]:
    pid, _, rest = data.decode(errors="replace").partition("\n")
    return pid.strip() or "?", Path(rest.strip()) if rest.strip() else None


def answers(path: Path) -> bool:
    """Whether a server accepts connections on the Unix socket at `path`."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
