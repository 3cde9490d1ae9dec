"""sd_notify against real datagram sockets, including the abstract form, and the no-op cases."""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.daemon import sdnotify

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def short_dir() -> Iterator[Path]:
    # AF_UNIX paths are limited to ~104 bytes; pytest's tmp_path can be longer.
    with tempfile.TemporaryDirectory(prefix="memd-") as d:
        yield Path(d)


@pytest.fixture
def receiver(short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    path = short_dir / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(5)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def recv(sock: socket.socket) -> str:
    return sock.recv(4096).decode()


def test_every_helper_is_a_noop_outside_systemd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sdnotify.notify("READY=1") is False
    assert sdnotify.ready("x") is False
    assert sdnotify.status("x") is False
    assert sdnotify.reloading() is False
    assert sdnotify.stopping() is False
    assert sdnotify.watchdog_ping() is False


def test_ready_with_status(receiver: socket.socket) -> None:
    assert sdnotify.ready("index open, 12 files") is True
    assert recv(receiver) == "READY=1\nSTATUS=index open, 12 files"
    assert sdnotify.ready() is True
    assert recv(receiver) == "READY=1"


def test_status_is_kept_on_one_line(receiver: socket.socket) -> None:
    assert sdnotify.status("indexing\nREADY=1") is True
    assert recv(receiver) == "STATUS=indexing READY=1"


def test_stopping_watchdog_and_reloading(receiver: socket.socket) -> None:
    assert sdnotify.stopping()
    assert recv(receiver) == "STOPPING=1"
    assert sdnotify.watchdog_ping()
    assert recv(receiver) == "WATCHDOG=1"
    assert sdnotify.reloading()
    assert re.fullmatch(r"RELOADING=1\nMONOTONIC_USEC=\d+", recv(receiver))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract sockets are Linux-only")
def test_abstract_socket_address(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"memd-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert sdnotify.notify("READY=1") is True
        assert recv(sock) == "READY=1"


def test_unreachable_socket_is_logged_not_raised(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(short_dir / "nobody-listens.sock"))
    with caplog.at_level(logging.DEBUG, logger="memd.daemon.sdnotify"):
        assert sdnotify.ready() is False
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]
    assert "READY=1" in caplog.records[0].getMessage()


def test_unsupported_address_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:1234")
    assert sdnotify.notify("READY=1") is False


def test_child_process_notifies_through_inherited_environment(
    receiver: socket.socket,
) -> None:
    code = "from memd.daemon import sdnotify; raise SystemExit(0 if sdnotify.ready('up') else 1)"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, timeout=30)
    assert proc.returncode == 0
    assert recv(receiver) == "READY=1\nSTATUS=up"


@pytest.mark.parametrize(
    ("usec", "pid", "expected"),
    [
        ("60000000", "self", 30.0),
        ("60000000", "", 30.0),
        ("60000000", "other", None),
        ("", "", None),
        ("0", "self", None),
        ("soon", "self", None),
        ("60000000", "nope", None),
    ],
)
def test_watchdog_interval(
    monkeypatch: pytest.MonkeyPatch, usec: str, pid: str, expected: float | None
) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", usec)
    pids = {"self": str(os.getpid()), "other": str(os.getpid() + 1)}
    monkeypatch.setenv("WATCHDOG_PID", pids.get(pid, pid))
    assert sdnotify.watchdog_interval() == expected


def test_watchdog_interval_without_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert sdnotify.watchdog_interval() is None
