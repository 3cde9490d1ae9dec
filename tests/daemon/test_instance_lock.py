"""The instance lock between a starting daemon and what holds it: a change the CLI or the memory
page writes while no daemon runs holds it for a moment, and a daemon started meanwhile waits for
it (before, it exited "already running" and the service manager had to start it again); a
daemon that answers on its socket is refused at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memd.core import settings
from memd.core.errors import DaemonAlreadyRunning
from memd.daemon import lock
from memd.daemon.lock import InstanceLock
from tests.utils import DaemonProcess, memd_env, wait_for

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX only"),
    pytest.mark.exec_memd,  # processes racing for the instance lock from their start
]


def test_a_daemon_started_during_a_change_made_without_one_waits_for_it(home: Path) -> None:
    s = settings.load(env=memd_env(home))
    held = InstanceLock(s.lock_path)
    held.acquire()  # what `memd remember` does while no daemon runs, for the change's moment
    d = DaemonProcess(home)
    released = threading.Event()

    def finish_the_change() -> None:
        try:
            wait_for(lambda: d.log.exists() and "waiting for pid" in d.log.read_text(), 60)
        finally:
            held.release()
            released.set()

    t = threading.Thread(target=finish_the_change)
    t.start()
    try:
        d.start(timeout=90)  # fails if the daemon exits "already running"
        t.join()
        assert released.is_set()
        assert d.call("status")["daemon"]["pid"] == d.pid
        assert f"waiting for pid {os.getpid()} to release the instance lock" in d.log.read_text()
    finally:
        t.join()
        if d.proc is not None:
            assert d.stop() == 0


@pytest.mark.parametrize("elsewhere", [False, True])
def test_a_second_daemon_is_refused_at_once_when_the_first_answers(
    home: Path, tmp_path: Path, elsewhere: bool
) -> None:
    """On the same socket, or on another one (the first wrote its socket in the lock file)."""
    d = DaemonProcess(home).start()
    try:
        env = (
            memd_env(home, MEMD_SOCKET=str(tmp_path / "other.sock"))
            if elsewhere
            else memd_env(home)
        )
        began = time.monotonic()
        second = subprocess.run(
            [sys.executable, "-m", "memd", "serve"], env=env, capture_output=True, text=True,
            timeout=lock.WAIT_S * 3,
        )  # fmt: skip
        took = time.monotonic() - began
        assert second.returncode == 1, second.stderr
        assert f"memd is already running (pid {d.pid})" in second.stderr
        assert "did not answer" not in second.stderr and "waiting for pid" not in second.stderr
        assert took < lock.WAIT_S, f"it waited {took:.0f} s for a daemon that answers"
        assert d.call("status")["daemon"]["pid"] == d.pid
    finally:
        assert d.stop() == 0


def test_a_holder_that_never_answers_is_waited_for_a_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "data" / "memd.lock"
    held = InstanceLock(path)
    held.acquire()
    try:
        mine = InstanceLock(path)
        with pytest.raises(DaemonAlreadyRunning, match="did not answer on a socket for 1 s"):
            asyncio.run(mine.take(tmp_path / "memd.sock", lambda: False, wait_s=1.0))
        # A stop while waiting ends the wait (the daemon then shuts down in order).
        assert asyncio.run(mine.take(tmp_path / "memd.sock", lambda: True)) is False
        # Released while waited for: taken, with the socket the new holder serves.
        threading.Timer(0.3, held.release).start()
        assert asyncio.run(mine.take(tmp_path / "memd.sock", lambda: False)) is True
        assert mine.holder() == (str(os.getpid()), tmp_path / "memd.sock")
        mine.release()
    finally:
        held.release()
