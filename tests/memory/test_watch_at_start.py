"""A file written while the daemon starts is searchable seconds later, not at the next full
reconcile (minutes): the watcher is armed before the first scan, and what it saw during the
scan is read after it.

Each start runs with files already in the tree (so the first scan takes a moment) while a
writer creates a new file every few tens of milliseconds, from before the socket answers until
after the daemon is ready: some land before the scan walks their folder, some behind it, some
after the scan. The reconcile interval is the default (5 minutes): only the watcher can find
the ones written behind the scan.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memd.core.errors import DaemonNotRunning
from tests import forkserver
from tests.utils import DaemonProcess, call, memd_env, wait_for

STARTS = 6
FILLER = 600  # files already there: the first scan of each start reads or stats them all
EVERY_S = 0.03
SEARCHABLE_WITHIN_S = 8.0


class Writer:
    """Creates topics/start{run}-{k}.md every `EVERY_S` until told to stop."""

    def __init__(self, memory: Path, run: int) -> None:
        self.folder = memory / "topics"
        self.run = run
        self.written: list[Path] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> Writer:
        self._thread.start()
        return self

    def _loop(self) -> None:
        k = 0
        while not self._stop.is_set():
            p = self.folder / f"start{self.run}-{k:03d}.md"
            p.write_text(f"# S{k}\n\n## Note\n- zqstart{self.run} file{k:03d}x\n")
            self.written.append(p)
            k += 1
            time.sleep(EVERY_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def _filler(memory: Path) -> None:
    folder = memory / "topics"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(FILLER):
        (folder / f"filler-{i:04d}.md").write_text(f"# F{i}\n\n## Body\n- filler {i}\n")


def _found(d: DaemonProcess, run: int) -> set[str]:
    # As many hits as the method gives: a slow start lets the writer write more than 100 files.
    hits = d.call("search", {"query": f"zqstart{run}", "limit": 1000})["hits"]
    return {h["path"] for h in hits}


def _one_start(d: DaemonProcess, run: int) -> list[str]:
    """Start the daemon with a writer busy throughout; the files not searchable in time."""
    writer = Writer(d.memory, run)
    # Not DaemonProcess.start, which waits for the start to end; forked as it would (the
    # start is what is tested, not the interpreter's: ~0.5 CPU-s less a start than exec'd).
    d.proc = forkserver.popen(
        [sys.executable, "-m", "memd", "serve"], env=memd_env(d.home),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    writer.start()
    try:
        wait_for(lambda: _ready(d), 60)
        time.sleep(0.6)  # the writer goes on for a while after the daemon is ready
        writer.stop()
        want = {str(p) for p in writer.written}
        assert 10 < len(want) < 1000
        try:
            wait_for(lambda: _found(d, run) >= want, SEARCHABLE_WITHIN_S, 0.1)
        except AssertionError:
            return sorted(Path(p).name for p in want - _found(d, run))
        return []
    finally:
        writer.stop()
        assert d.stop() == 0


def _ready(d: DaemonProcess) -> bool:
    try:
        return not call(d.sock, "status", timeout=2)["daemon"].get("starting")
    except DaemonNotRunning:
        return False


@pytest.mark.serial  # a wall-clock bound on six starts (scripts/test runs it alone)
def test_files_written_throughout_start_up_are_all_searchable(home: Path) -> None:
    d = DaemonProcess(home)
    _filler(d.memory)
    missed: dict[int, list[str]] = {}
    for run in range(STARTS):
        if run % 2:
            # Every other start has new filler to read, so its first scan takes longer.
            for i in range(FILLER // 3):
                (d.memory / "topics" / f"filler-{i:04d}.md").write_text(f"# F{i} r{run}\n")
        late = _one_start(d, run)
        if late:
            missed[run] = late
    assert missed == {}, f"not searchable {SEARCHABLE_WITHIN_S} s after the start: {missed}"
