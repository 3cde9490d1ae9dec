"""The daemon as a service manager sees it: a real `memd serve` process and real signals.

- Socket activation and readiness: the listening socket arrives as fd 3 with ``LISTEN_FDS=1``
  and ``LISTEN_PID`` set by ``sh -c 'LISTEN_PID=$$ exec …'`` (the pid of the exec'd daemon),
  and the test reads the sd_notify datagrams on its own ``NOTIFY_SOCKET``.
- SIGTERM and SIGKILL in the middle of a burst of concurrent `remember` calls.
- SIGHUP reloads, a second daemon on the same MEMD_HOME, a stale lock after a crash.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core.errors import DaemonNotRunning, MemdError
from tests.utils import DaemonProcess, call, memd_env, wait_for

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX only"),
    pytest.mark.exec_memd,  # the daemon's process as a service manager sees it
]

ID_IN_MARKDOWN = re.compile(r"<!-- memd id=(m_[0-9a-f]+)\b")


# -- helpers -------------------------------------------------------------------------------
class Notifications:
    """The receiving end of NOTIFY_SOCKET: every datagram the daemon sends, in order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.seen: list[str] = []

    def next(self, timeout: float = 20.0) -> str:
        self.sock.settimeout(timeout)
        msg = self.sock.recv(4096).decode()
        self.seen.append(msg)
        return msg

    def wait_for(self, prefix: str, timeout: float = 20.0) -> str:
        """The first datagram starting with `prefix`; earlier ones are kept in `seen`."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {prefix!r} within {timeout}s; got {self.seen}")
            try:
                msg = self.next(left)
            except TimeoutError:
                continue
            if msg.startswith(prefix):
                return msg

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def notifications(home: Path) -> Iterator[Notifications]:
    n = Notifications(home / "notify.sock")
    yield n
    n.close()


def spawn_socket_activated(
    home: Path, listener: socket.socket, **env: str
) -> subprocess.Popen[bytes]:
    """`memd serve` started the way systemd starts a socket-activated service.

    POSIX sh only redirects single-digit fds, so the listener rides in on stdin and the shell
    moves it to fd 3 on the final exec; ``$$`` is then the daemon's own pid.
    """
    full = memd_env(home, LISTEN_FDS="1", LISTEN_FDNAMES="memd", **env)
    script = 'LISTEN_PID=$$ WATCHDOG_PID=$$ exec "$0" -m memd serve 3<&0 0</dev/null'
    log = open(home / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen(
            ["sh", "-c", script, sys.executable],
            stdin=listener.fileno(),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full,
        )
    finally:
        log.close()


def memory_ids(memory: Path) -> set[str]:
    """Every memd item id written in the Markdown tree."""
    ids: set[str] = set()
    for path in memory.rglob("*.md"):
        ids.update(ID_IN_MARKDOWN.findall(path.read_text(encoding="utf-8")))
    return ids


def indexed_ids(d: DaemonProcess) -> set[str]:
    return {it["id"] for it in d.call("memories", {"all": True})["items"]}


class Burst:
    """Many threads calling `remember` at once; records which calls were acknowledged."""

    def __init__(self, sock: Path, threads: int = 8, per_thread: int = 60) -> None:
        self.sock = sock
        self.acked: dict[str, str] = {}  # id -> text
        self.cut_off = 0  # calls that found the daemon gone (expected once it is signalled)
        self.errors: list[str] = []  # anything else is a bug
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, args=(t, per_thread), daemon=True)
            for t in range(threads)
        ]

    def start(self) -> Burst:
        for t in self._threads:
            t.start()
        return self

    def _run(self, t: int, n: int) -> None:
        for i in range(n):
            text = f"burst fact t{t} n{i} zq{t:02d}x{i:03d}"
            try:
                res = call(self.sock, "remember", {"text": text}, timeout=20)
            except DaemonNotRunning:
                with self._lock:
                    self.cut_off += 1
                return  # the daemon is going away: this thread's later calls cannot succeed
            except MemdError as exc:
                with self._lock:
                    self.errors.append(f"{text}: {type(exc).__name__}: {exc}")
                continue
            with self._lock:
                self.acked[res["id"]] = text

    def count(self) -> int:
        with self._lock:
            return len(self.acked)

    def join(self) -> None:
        for t in self._threads:
            t.join(30)
            assert not t.is_alive(), "a client thread hung"


# -- socket activation and sd_notify -------------------------------------------------------
def test_socket_activated_daemon_serves_inherited_socket_and_notifies(
    home: Path, notifications: Notifications
) -> None:
    memory = home / "memory" / "topics"
    memory.mkdir(parents=True)
    (memory / "rust.md").write_text("# Rust\n\n## Borrowing\n- the quokkaborrow rule\n")
    path = home / "act.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    inode = path.stat().st_ino
    with listener:
        proc = spawn_socket_activated(
            home,
            listener,
            MEMD_SOCKET=str(path),
            NOTIFY_SOCKET=str(notifications.path),
            # 1 s watchdog: the daemon must ping every 0.5 s.
            WATCHDOG_USEC="1000000",
        )
    # The test's copy of the listener is closed: only the daemon can answer on it now.
    try:
        ready = notifications.wait_for("READY=1")
        # Readiness means the index is open and the startup scan done: a file written before
        # the start is found at once, with no waiting.
        hits = call(path, "search", {"query": "quokkaborrow"}, timeout=5)["hits"]
        assert [h["path"] for h in hits] == [str(memory / "rust.md")]
        assert not any(m.startswith("READY=1") for m in notifications.seen[:-1])
        st = call(path, "status", timeout=5)
        assert st["daemon"]["pid"] == proc.pid
        assert f"STATUS=serving; {st['index']['files']} files" in ready
        assert notifications.wait_for("WATCHDOG=1", timeout=3) == "WATCHDOG=1"
        # It never bound a socket of its own.
        assert not (home / "run" / "memd.sock").exists()
        assert path.stat().st_ino == inode

        proc.send_signal(signal.SIGTERM)
        assert notifications.wait_for("STOPPING=1", timeout=10) == "STOPPING=1"
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = (home / "daemon.log").read_text()
    assert "using the socket passed by the service manager" in log
    # The socket file belongs to the service manager: the daemon must not unlink it.
    assert path.exists() and path.stat().st_ino == inode


def test_sighup_reloads_settings_and_keeps_serving(
    home: Path, notifications: Notifications
) -> None:
    config = home / "config.toml"
    config.write_text("[index]\nreconcile_s = 300\n")
    d = DaemonProcess(home, NOTIFY_SOCKET=str(notifications.path)).start()
    try:
        notifications.wait_for("READY=1")
        config.write_text(
            f'[index]\nreconcile_s = 60\nmax_file_mb = 0.001\n[memory]\nroot = "{home / "elsewhere"}"\n'
        )
        d.send_signal(signal.SIGHUP)
        assert notifications.wait_for("RELOADING=1").startswith("RELOADING=1\nMONOTONIC_USEC=")
        assert notifications.wait_for("READY=1") == "READY=1\nSTATUS=settings reloaded"
        log = d.log.read_text()
        assert "changed: memory.root, index.reconcile_s, index.max_file_mb" in log
        assert "SIGHUP: restart required for: memory.root" in log
        assert d.call("status")["daemon"]["restart_required"] == ["memory.root"]
        # Still serving, from the memory root it started with ...
        d.call("remember", {"text": "after the reload"})
        assert d.call("status")["memory_root"] == str(home / "memory")
        # ... and the new size limit (1 KB) applies to the next file at once.
        big = d.memory / "topics" / "big.md"
        big.write_text("# Big\n\n" + "- a long line of notes\n" * 100)
        problems = wait_for(lambda: d.call("status")["problems"], 5)
        assert [p["path"] for p in problems] == [str(big)] and "too large" in problems[0]["reason"]

        config.write_text("[index]\nreconcile_s = 'often'\n")
        d.send_signal(signal.SIGHUP)
        assert (
            notifications.wait_for("READY=1")
            == "READY=1\nSTATUS=settings reload failed; still serving"
        )
        assert "settings not reloaded" in d.log.read_text()
        assert d.call("search", {"query": "reload"})["hits"]
    finally:
        assert d.stop() == 0


# -- single instance and crashes -------------------------------------------------------------
def test_second_daemon_on_the_same_home_refuses_and_a_stale_lock_is_cleaned(home: Path) -> None:
    d = DaemonProcess(home).start()
    first_pid = d.pid
    other_sock = home / "other.sock"
    second = subprocess.run(
        [sys.executable, "-m", "memd", "serve"],
        env=memd_env(home, MEMD_SOCKET=str(other_sock)),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 1
    assert f"memd is already running (pid {first_pid})" in second.stderr
    assert not other_sock.exists()
    assert d.call("status")["daemon"]["pid"] == first_pid

    d.stop(signal.SIGKILL)
    lock = home / "data" / "memd.lock"
    assert lock.read_text().split()[0] == str(first_pid)  # left behind by the crash
    assert d.sock.exists()
    d.start()
    try:
        new_pid = d.pid
        assert d.call("status")["daemon"]["pid"] == new_pid
        assert lock.read_text().split()[0] == str(new_pid)
    finally:
        assert d.stop() == 0
    assert not d.sock.exists()  # a daemon that bound its socket removes it


# -- signals during a write burst ------------------------------------------------------------
def burst_until_signal(d: DaemonProcess, sig: int) -> tuple[Burst, int, float]:
    """Signal the daemon once 40 writes were acknowledged; (burst, exit code, seconds to exit)."""
    burst = Burst(d.sock).start()
    wait_for(lambda: burst.count() >= 40, timeout=30)
    assert d.proc is not None
    t0 = time.monotonic()
    d.proc.send_signal(sig)
    code = d.proc.wait(20)
    took = time.monotonic() - t0
    burst.join()
    return burst, code, took


def test_sigterm_during_a_write_burst_keeps_every_acknowledged_write(home: Path) -> None:
    d = DaemonProcess(home).start()
    burst, code, took = burst_until_signal(d, signal.SIGTERM)
    assert code == 0, d.log.read_text()
    assert took < 5
    assert burst.cut_off, "the burst ended before the signal; nothing was tested"
    assert burst.errors == []
    log = d.log.read_text()
    assert "stopped cleanly" in log and "Traceback" not in log
    on_disk = memory_ids(d.memory)
    assert set(burst.acked) <= on_disk
    # Clean shutdown: the index already holds everything, before any restart scan.
    with contextlib.closing(sqlite3.connect(home / "data" / "index.db")) as conn:
        in_index = {r[0] for r in conn.execute("SELECT item_id FROM items")}
    assert on_disk <= in_index
    d.start()
    try:
        assert set(burst.acked) <= indexed_ids(d)
        for text in list(burst.acked.values())[:5]:
            assert d.call("search", {"query": text.split()[-1]})["hits"]
    finally:
        d.stop()


def test_sigkill_during_a_write_burst_leaves_an_index_that_reconciles(home: Path) -> None:
    d = DaemonProcess(home).start()
    burst, code, _ = burst_until_signal(d, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert burst.cut_off, "the burst ended before the signal; nothing was tested"
    assert burst.errors == []
    db = home / "data" / "index.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # FTS5's own check: the full-text index agrees with the rows it indexes.
        conn.execute("INSERT INTO sections_fts(sections_fts) VALUES('integrity-check')")
    on_disk = memory_ids(d.memory)
    # The files were written before each answer: a crash loses no acknowledged memory.
    assert set(burst.acked) <= on_disk
    d.start()
    try:
        # The startup reconcile runs before the socket listens, so this is its result.
        assert on_disk <= indexed_ids(d)
    finally:
        assert d.stop() == 0
