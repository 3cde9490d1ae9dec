"""The memory page against hostile files and links, spoken to in raw HTTP: the sign-in answer
never echoes the path it was sent, the activity page reads `archive/CHANGES.md` like every
other memory file, and a stop ends `memd ui` whatever its workers are doing."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import planted
from tests.ui.uihelp import UiProcess
from tests.utils import DaemonProcess, wait_for


@pytest.fixture(scope="module")
def module_ui(module_daemon: DaemonProcess) -> Iterator[UiProcess]:
    """One page for the sign-in cases: each only signs in (a daemon and a page start cost about
    a second of CPU together)."""
    u = UiProcess(module_daemon.home).start()
    yield u
    u.stop()


@pytest.mark.parametrize(
    ("path", "lands_on"),
    [
        ("/%22%3E%3Ciframe%20src=x%3E", "/"),  # markup in the path
        ("/%5Cevil.com", "/"),  # `/\evil.com`: browsers read it as //evil.com
        ("//evil.com", "/"),
        ("/%2F%2Fevil.com", "/"),
        ("/history", "/history"),  # the page's own pages are kept
        ("/memory/file", "/memory/file"),
    ],
)
def test_the_sign_in_leads_only_to_the_pages_own_paths(
    module_ui: UiProcess, path: str, lands_on: str
) -> None:
    ui = module_ui
    status, headers, body = ui.request("GET", f"{path}?token={ui.token}")
    assert status == 200 and "set-cookie" in headers
    assert f'<meta http-equiv="refresh" content="0; url={lands_on}">' in body, body
    assert "<iframe" not in body and "evil" not in body and "\\" not in body


@pytest.fixture
def signed_in(daemon: DaemonProcess, ui: UiProcess) -> str:
    return ui.sign_in()


def _activity(ui: UiProcess, cookie: str) -> str:
    status, _, body = ui.request("GET", "/activity", headers={"Cookie": cookie})
    assert status == 200
    return body


def test_a_link_out_of_the_tree_in_place_of_the_archive_log_is_not_shown(
    daemon: DaemonProcess, ui: UiProcess, signed_in: str, tmp_path: Path
) -> None:
    outside = tmp_path / "secrets.txt"
    outside.write_text(f"OUTSIDE-THE-TREE {planted.ANTHROPIC}\n")
    log = daemon.memory / "archive" / "CHANGES.md"
    log.parent.mkdir(exist_ok=True)
    log.write_text("- 2026-01-01 archived topics/old.md\n")
    assert "archived topics/old.md" in _activity(ui, signed_in)  # the real log is shown
    log.unlink()
    log.symlink_to(outside)
    body = _activity(ui, signed_in)
    assert "OUTSIDE-THE-TREE" not in body and planted.leaked(body) == []


def test_a_fifo_in_place_of_the_archive_log_hangs_nothing(
    daemon: DaemonProcess, ui: UiProcess, signed_in: str
) -> None:
    log = daemon.memory / "archive" / "CHANGES.md"
    log.parent.mkdir(exist_ok=True)
    os.mkfifo(log)
    # More requests than the page has worker threads (40): each would hold one forever.
    answered: list[float] = []

    def ask() -> None:
        t = time.monotonic()
        _activity(ui, signed_in)
        answered.append(time.monotonic() - t)

    threads = [threading.Thread(target=ask) for _ in range(48)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(answered) == len(threads)
    status, _, body = ui.request("GET", "/memory", headers={"Cookie": signed_in})
    assert status == 200 and "<h1>Memory</h1>" in body


@pytest.fixture
def mute_daemon(home: Path) -> Iterator[list[socket.socket]]:
    """A socket where the daemon's would be that accepts connections and never answers."""
    path = home / "run" / "memd.sock"
    path.parent.mkdir(parents=True, mode=0o700)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(128)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield held
    stop.set()
    t.join(5)
    for c in held:
        c.close()
    srv.close()


def test_sigterm_stops_the_page_while_its_workers_are_stuck(
    home: Path, mute_daemon: list[socket.socket]
) -> None:
    ui = UiProcess(home)
    ui.args = (*ui.args, "--timeout", "300")  # each page waits on the mute socket for minutes
    ui.start()
    assert ui.proc is not None
    cookie = ui.sign_in()
    asked = len(mute_daemon)
    stuck = [
        threading.Thread(
            target=lambda: _ignore(ui.request, "GET", "/memory", headers={"Cookie": cookie}),
            daemon=True,
        )
        for _ in range(6)
    ]
    for t in stuck:
        t.start()
    # Every request reached the page and waits on the socket.
    wait_for(lambda: len(mute_daemon) >= asked + len(stuck), 30)
    t0 = time.monotonic()
    ui.proc.send_signal(signal.SIGTERM)
    try:
        ui.proc.wait(15)
    finally:
        if ui.proc.poll() is None:
            ui.proc.kill()
    took = time.monotonic() - t0
    assert took < 8, f"memd ui took {took:.1f} s to stop"


def _ignore(fn: object, *args: object, **kw: object) -> None:
    try:
        fn(*args, **kw)  # type: ignore[operator]
    except OSError:
        pass  # the page went away: that is the test
