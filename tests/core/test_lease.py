"""File leases (`memd.core.lease`) and who holds a file open for writing (`memd.core.writers`),
on real files with real other processes."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core import lease, writers
from tests.utils import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux leases")

HOLD = """import os, sys
fd = os.open(sys.argv[1], int(sys.argv[2]))
print('open', flush=True)
sys.stdin.read()
"""


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    p = tmp_path / "notes.md"
    p.write_text("# Notes\n- one\n")
    return p


@contextlib.contextmanager
def holding(path: Path, flags: int) -> Iterator[subprocess.Popen[str]]:
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(flags)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert p.stdout is not None and p.stdout.readline().strip() == "open"
    try:
        yield p
    finally:
        assert p.stdin is not None
        p.stdin.close()
        p.wait(10)


def test_nobody_writing_is_told_without_scanning_proc(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanned: list[str] = []
    real = writers._fds_on

    def spy(pid: str, keys: dict[writers.Key, Path]) -> list[tuple[writers.Key, str]]:
        scanned.append(pid)
        return real(pid, keys)

    monkeypatch.setattr(writers, "_fds_on", spy)
    with holding(notes, os.O_RDONLY):  # a reader does not count
        assert writers.writers(notes) == []
        assert writers.held_open([notes]) == {}
    assert scanned == []  # the kernel said it: no descriptor of any process was looked at


def test_a_writer_is_named_by_the_scan(notes: Path) -> None:
    assert lease.nobody_writing(notes) is True
    with holding(notes, os.O_WRONLY) as p:
        assert lease.nobody_writing(notes) is False
        who = writers.writers(notes)
        assert who is not None and any(f"(pid {p.pid})" in w for w in who)
        assert list(writers.held_open([notes]) or {}) == [notes]
    assert writers.writers(notes) == []


def test_a_writer_the_scan_does_not_list_yet_is_someone(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An open() with O_TRUNC has emptied the file before its descriptor is listed in /proc:
    the kernel says someone writes it, and that is the answer (it was "nobody")."""
    real = writers._fds_on
    with holding(notes, os.O_WRONLY | os.O_TRUNC) as p:
        hidden = str(p.pid)
        monkeypatch.setattr(
            writers, "_fds_on", lambda pid, keys: [] if pid == hidden else real(pid, keys)
        )
        assert writers.writers(notes) == [writers.UNLISTED]
        assert writers.held_open([notes]) == {notes: [writers.UNLISTED]}
    assert writers.writers(notes) == []


def test_this_process_writing_is_not_someone_else(notes: Path) -> None:
    fd = os.open(notes, os.O_WRONLY)
    try:
        assert lease.nobody_writing(notes) is False  # the kernel counts this process too
        assert writers.writers(notes) == []
    finally:
        os.close(fd)


def test_without_leases_the_scan_answers(notes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lease, "_LINUX", False)  # a system without leases
    assert lease.nobody_writing(notes) is None
    assert writers.writers(notes) == []
    with holding(notes, os.O_RDWR) as p:
        who = writers.writers(notes)
        assert who is not None and any(f"(pid {p.pid})" in w for w in who)


def test_a_write_lease_shows_an_open_waiting_and_signals_nobody(notes: Path) -> None:
    fd = os.open(notes, os.O_RDONLY)
    try:
        with holding(notes, os.O_RDONLY):  # someone has it open: no write lease
            refused = lease.take(fd, lease.F_WRLCK)
            assert not refused.taken and refused.busy
        held = lease.take(fd, lease.F_WRLCK)
        assert held.taken and held.intact()
        # Another process opens it for writing: its open waits, the lease shows the break, and
        # this process is not ended by a signal (SIGIO's default action).
        code = f"import os; os.open({str(notes)!r}, os.O_WRONLY); print('in')"
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        wait_for(lambda: held.state() == lease.F_UNLCK, 10)
        assert child.poll() is None  # still waiting for the lease
        held.release()
        out, _ = child.communicate(timeout=10)
        assert out.strip() == "in"
    finally:
        os.close(fd)


def test_a_link_or_a_fifo_is_not_opened_to_ask(tmp_path: Path) -> None:
    # Asking must not open what a link in a memory folder points at (a device, a file outside
    # the roots) nor wait on a FIFO: leases do not say there, and the caller scans instead.
    target = tmp_path / "outside.md"
    target.write_text("# Outside\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    assert lease.nobody_writing(link) is None
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert lease.nobody_writing(fifo) is None
