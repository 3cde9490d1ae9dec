"""SIGTERM ends the daemon before the service manager's stop timeout, even with a thread stuck
on a FIFO. Liveness checks: the bound is the unit's own TimeoutStopSec, after which systemd
would kill the daemon; the daemon's deadline is well inside it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from memd.daemon.process import STOP_DEADLINE_S
from tests.utils import DaemonProcess, unit_stop_timeout

pytestmark = pytest.mark.exec_memd  # the process's own stop deadline


def test_the_stop_deadline_is_inside_the_units_stop_timeout() -> None:
    assert unit_stop_timeout() > STOP_DEADLINE_S


def test_sigterm_ends_the_daemon_with_a_fifo_among_the_logs_it_tails(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    (user / ".claude" / "projects" / "app").mkdir(parents=True)
    os.mkfifo(user / ".claude" / "projects" / "app" / "session.jsonl")
    monkeypatch.setenv("HOME", str(user))
    d = DaemonProcess(home).start()
    try:
        d.call("remember", {"text": "still serving"})
        assert d.stop(signal.SIGTERM, timeout=unit_stop_timeout()) is not None
    finally:
        if d.proc is not None and d.proc.poll() is None:
            d.proc.kill()
