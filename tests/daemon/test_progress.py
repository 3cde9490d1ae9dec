"""Long work shows how far it got: `memd status` while the daemon builds its first index (the
socket answers `status` meanwhile), and a progress bar for `reindex --full` on a terminal only."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from memd.api import messages as m
from memd.cli import progress, render
from memd.core.errors import DaemonNotRunning, DaemonStarting
from tests import forkserver
from tests.utils import DaemonProcess, call, memd_env, wait_for

FILES = 8000


def _tree(memory: Path, n: int = FILES) -> None:
    folder = memory / "topics"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"note-{i:05d}.md").write_text(
            f"# Note {i}\n\n## Body\n- a line about item {i} and its neighbours\n", encoding="utf-8"
        )


def _status(sock: Path) -> dict[str, Any] | None:
    try:
        st = call(sock, "status", timeout=5)
    except DaemonNotRunning:
        return None
    return st if isinstance(st, dict) else None


def _planned(st: dict[str, Any]) -> bool:
    """Starting, and the first index knows how many files it has to read."""
    work = st["daemon"].get("progress") or []
    return bool(st["daemon"].get("starting") and work and work[0]["total"])


def test_status_answers_with_progress_during_the_first_index(ram_home: Path) -> None:
    home = ram_home  # 8,000 files: made in memory (conftest)
    _tree(home / "memory")
    d = DaemonProcess(home)
    env = memd_env(home)
    # Not DaemonProcess.start, which waits for the first index to end; forked as it would.
    d.proc = forkserver.popen([sys.executable, "-m", "memd", "serve"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        st = wait_for(lambda: (s := _status(d.sock)) and _planned(s) and s, 30)
        work = st["daemon"]["progress"]
        assert [t["what"] for t in work] == ["indexing memory files"]
        assert work[0]["unit"] == "files" and 0 <= work[0]["done"] <= work[0]["total"]
        assert work[0]["total"] >= FILES  # the tree's notes and the first-start templates
        text = render.status_text(msgspec.convert(st, m.StatusResult))
        assert (
            f"working: indexing memory files: {work[0]['done']:,} of {work[0]['total']:,} files"
            in text
        )
        # Other calls are told the daemon is starting (a write from the CLI waits for it).
        with pytest.raises(DaemonStarting, match=r"memd is starting \(indexing memory files"):
            call(d.sock, "search", {"query": "neighbours"}, timeout=5)
        remembered = d.cli("remember", "written while it started")
        assert remembered.returncode == 0, remembered.stderr
        done = wait_for(
            lambda: (s := _status(d.sock)) and not s["daemon"].get("starting") and s, 60
        )
        assert "progress" not in done["daemon"]
        assert done["index"]["files"] >= FILES
        assert d.search_paths("started") == {str(d.memory / "_core" / "notes.md")}
    finally:
        d.stop()


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (80x24); (exit code, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(argv, env={**env, "TERM": "xterm"}, stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL)  # fmt: skip
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read().decode() if proc.stdout else ""
    os.close(master)
    return proc.wait(30), out, seen.decode(errors="replace")


# The tree `reindex --full` rebuilds: enough files for each of the three rebuilds to outlast the
# bar's QUIET_S, which each checks from the seconds it reports (a rebuild shorter than that draws
# no bar anywhere, and its "no bar" would prove nothing). 3,000 files took 1.3-1.7 s a rebuild at
# load ~5 (6,000 did until 2026-11-28: 5 s a rebuild, ~18 CPU-s for the test).
REBUILT = 3000


def _seconds(out: str) -> float:
    """The seconds a rebuild took, from its line or its JSON."""
    if out.lstrip().startswith("{"):
        return float(json.loads(out)["seconds"])
    found = re.search(r" in ([0-9.]+)s$", out.strip())
    assert found, out
    return float(found[1])


def test_reindex_full_draws_a_bar_on_a_terminal_only(ram_home: Path) -> None:
    home = ram_home  # thousands of files: made in memory (conftest)
    _tree(home / "memory", REBUILT)
    d = DaemonProcess(home).start(timeout=120)
    try:
        argv = [sys.executable, "-m", "memd", "reindex", "--full"]
        code, out, terminal = _on_a_terminal(argv, memd_env(home))
        assert code == 0 and out.startswith("rebuilt:"), (out, terminal)
        assert "rebuilding the index" in terminal and "files" in terminal, terminal
        lead = str(REBUILT)[0]  # done/total: total is the tree's files and the templates
        drawn = (f"/{lead}", f"/ {lead}", f" {lead},")
        assert any(total in terminal for total in drawn), terminal

        piped = d.cli("reindex", "--full")
        assert piped.returncode == 0 and "rebuilding the index" not in piped.stderr
        assert _seconds(piped.stdout) > progress.QUIET_S, f"too quick to draw: {piped.stdout}"
        code, out, terminal = _on_a_terminal([*argv, "--json"], memd_env(home))
        assert code == 0 and out.lstrip().startswith("{") and "rebuilding" not in terminal
        assert _seconds(out) > progress.QUIET_S, f"too quick to draw: {out}"
    finally:
        d.stop()


def test_the_cli_imports_rich_only_to_draw(home: Path) -> None:
    code = ("import sys; from memd.cli import main; main(['status', '--json']);"
            " print('rich' in ' '.join(sys.modules))")  # fmt: skip
    started = time.monotonic()
    res = subprocess.run([sys.executable, "-c", code], env=memd_env(home), capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert res.stdout.strip().endswith("False"), (
        res.stdout,
        res.stderr,
        time.monotonic() - started,
    )
