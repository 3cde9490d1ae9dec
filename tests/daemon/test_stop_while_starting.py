"""A stop (SIGTERM) while the daemon builds its first index takes the ordered shutdown: the
index ends at its next batch, the process exits 0 within seconds, the socket file is removed,
the lock is free, the index is sound, and a `remember` made meanwhile is kept.

Before the stop handlers were installed ahead of the first index, SIGTERM here killed the
process outright (exit -15, socket file left behind)."""

from __future__ import annotations

import contextlib
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memd.core.errors import DaemonNotRunning
from tests.utils import DaemonProcess, call, memd_env, wait_for

pytestmark = pytest.mark.exec_memd  # the process's own stop path

FILES = 8000


def _tree(memory: Path) -> None:
    folder = memory / "topics"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(FILES):
        (folder / f"note-{i:05d}.md").write_text(
            f"# Note {i}\n\n## Body\n- a line about item {i}\n", encoding="utf-8"
        )


def _status(sock: Path) -> dict[str, Any] | None:
    try:
        st = call(sock, "status", timeout=5)
    except DaemonNotRunning:
        return None
    return st if isinstance(st, dict) else None


def _indexing(st: dict[str, Any] | None) -> bool:
    """Starting, with the first index planned and well short of done."""
    if st is None or not st["daemon"].get("starting"):
        return False
    work = st["daemon"].get("progress") or []
    return bool(work and work[0]["total"] and work[0]["done"] < work[0]["total"] // 2)


def test_sigterm_during_the_first_index_ends_in_order(ram_home: Path) -> None:
    home = ram_home  # 8,000 files: made in memory (conftest)
    _tree(home / "memory")
    d = DaemonProcess(home)
    log = open(d.log, "ab")  # noqa: SIM115 - handed to the child
    d.proc = subprocess.Popen([sys.executable, "-m", "memd", "serve"], env=memd_env(home),
                              stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    log.close()
    writer: subprocess.Popen[str] | None = None
    try:
        wait_for(lambda: _indexing(_status(d.sock)), 60)
        # A write while the daemon starts waits for it; when it stops instead, the CLI writes.
        writer = subprocess.Popen(
            [sys.executable, "-m", "memd", "remember", "kept through the stop zqkept"],
            env=memd_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert writer.stderr is not None
        ready, _, _ = select.select([writer.stderr], [], [], 30)
        assert ready and "starting; waiting" in writer.stderr.readline()
        assert _indexing(_status(d.sock)), "the first index ended before the stop: nothing tested"
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        code = d.proc.wait(30)
        took = time.monotonic() - t0
        out, err = writer.communicate(timeout=60)
    finally:
        if d.proc.poll() is None:
            d.proc.kill()
        if writer is not None and writer.poll() is None:
            writer.kill()
    text = d.log.read_text()
    assert code == 0, text
    assert took < 10, f"took {took:.1f} s:\n{text}"
    assert "stopping" in text and "stopped cleanly" in text, text
    assert "Traceback" not in text and "did not finish" not in text, text
    assert not d.sock.exists(), "the socket file was left behind"
    assert writer.returncode == 0, err
    with contextlib.closing(sqlite3.connect(home / "data" / "index.db")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        indexed = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    assert indexed < FILES, "the first index ran to its end instead of stopping"
    # The lock is free, and the next start finishes the index and has the remembered item.
    d.start(timeout=120)
    try:
        assert d.call("status")["index"]["files"] >= FILES
        assert d.search_paths("zqkept") == {str(d.memory / "_core" / "notes.md")}
    finally:
        assert d.stop() == 0


def test_sighup_during_the_first_index_is_applied_once_serving(ram_home: Path) -> None:
    """A reload asked for while the daemon starts (a service manager's `reload` at login) does
    not end it (SIGHUP's default action) and is applied when the start is done."""
    home = ram_home
    _tree(home / "memory")
    d = DaemonProcess(home)
    log = open(d.log, "ab")  # noqa: SIM115 - handed to the child
    d.proc = subprocess.Popen([sys.executable, "-m", "memd", "serve"], env=memd_env(home),
                              stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    log.close()
    try:
        wait_for(lambda: _indexing(_status(d.sock)), 60)
        (home / "config.toml").write_text("[index]\ndebounce_ms = 77\n")
        d.proc.send_signal(signal.SIGHUP)
        assert _indexing(_status(d.sock)), "the first index ended before the reload: nothing tested"
        wait_for(
            lambda: (s := _status(d.sock)) is not None and not s["daemon"].get("starting"), 120
        )
        wait_for(lambda: "changed: index.debounce_ms" in d.log.read_text(), 10)
        assert d.proc.poll() is None
    finally:
        assert d.stop() == 0
