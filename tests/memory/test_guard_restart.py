"""The write guard across a restart: an editor's older copy saved while memd is down, in the
guard's window after memd's change, gets memd's acknowledged items back when memd starts.

A real daemon killed (or stopped) right after answering a `remember`; an editor then saves the
copy it read before that remember. Without the guard's state on disk the item was gone for good
although memd had answered "remembered". Saved after the window, the older copy is a person's
edit and stays as written.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from memd.history import History
from memd.memory.files.guard import WINDOW_S
from tests.utils import DaemonProcess, wait_for

HAND = "- a line written by hand"


def _start(home: Path) -> tuple[DaemonProcess, Path]:
    d = DaemonProcess(home).start()
    notes = d.memory / "_core" / "notes.md"
    notes.write_text(f"# Notes\n\n## Notes\n\n{HAND}\n")
    wait_for(lambda: d.search_paths('"line written"'), 10)
    return d, notes


def _save_by_rename(path: Path, data: bytes, mtime: float | None = None) -> None:
    tmp = path.with_name(f"{path.name}.1.tmp")
    tmp.write_bytes(data)
    if mtime is not None:
        os.utime(tmp, (mtime, mtime))
    os.replace(tmp, path)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_an_older_copy_saved_while_memd_is_down_gets_the_item_back(home: Path, sig: int) -> None:
    d, notes = _start(home)
    try:
        old = notes.read_bytes()  # the editor's buffer, read before the remember
        item = d.call("remember", {"text": "the deploy key lives in the vault"})["id"]
        d.stop(sig)
        _save_by_rename(notes, old + b"- my own line, saved over memd's\n")
        assert item not in notes.read_text()
        d.start()
        wait_for(lambda: item in notes.read_text(), 15)
        text = notes.read_text()
        assert HAND in text and "- my own line, saved over memd's" in text
        assert text.count(f"id={item} ") == 1
        d.stop()
        h = History(d.memory, home / "data" / "history.git")
        causes = [(c.cause, c.detail) for c in h.log(limit=0)]
        # The item's own change, and its putting back after the older copy: memd's, not a hand's.
        assert sum(1 for c, det in causes if c == "remember" and det.startswith(f"id={item}")) == 1
        back = [
            c for c in h.log(limit=0) if c.cause == "remember" and not c.detail.startswith("id=")
        ]
        assert back, causes
        added = [ln for fd in h.show(back[0].id).diffs for ln in fd.diff.split("\n")
                 if ln.startswith("+") and not ln.startswith("+++")]  # fmt: skip
        assert len(added) == 1 and f"id={item} " in added[0], added
    finally:
        if d.proc and d.proc.poll() is None:
            d.stop()


def test_an_older_copy_saved_after_the_window_stays_as_written(home: Path) -> None:
    d, notes = _start(home)
    try:
        old = notes.read_bytes()
        item = d.call("remember", {"text": "the deploy key lives in the vault"})["id"]
        d.stop(signal.SIGKILL)
        # Saved after the guard's window (even with an old modification time, as a rename of a
        # temp file written earlier has): a person who removed the item.
        time.sleep(WINDOW_S + 0.5)
        _save_by_rename(notes, old, mtime=time.time() - 60)
        d.start()
        d.call("remember", {"text": "a later fact, written after the start"})
        text = notes.read_text()
        assert "a later fact" in text and item not in text
    finally:
        if d.proc and d.proc.poll() is None:
            d.stop()


def test_the_kept_changes_come_back_in_a_new_guard_and_a_bad_file_is_ignored(
    tmp_path: Path,
) -> None:
    from memd.memory.files.guard import AddOp, WriteGuard

    state, p = tmp_path / "memd-write-guard.json", tmp_path / "notes.md"
    old = "# Notes\n\n## Notes\n\n- by hand\n"
    new = old + "- first <!-- memd id=m_1 -->\n"
    first = WriteGuard(state=state)
    first.active = True
    first.written(p, new.encode(), [AddOp("Notes", "first <!-- memd id=m_1 -->", "m_1", "Notes")])
    assert state.stat().st_mode & 0o777 == 0o600
    second = WriteGuard(state=state)  # the next start
    second.active = True
    assert second.kept() == [str(p)]
    second.resume(p, old.encode(), time.time())  # an older copy saved meanwhile
    assert "- first <!-- memd id=m_1 -->" in (second.restore(p, old.encode(), old) or "")
    for bad in ("{not json", '{"files": {"x": {"last": "zz", "entries": 3}}}', "\x00\xff"):
        state.write_text(bad, errors="surrogateescape")
        g = WriteGuard(state=state)  # a warning, nothing kept, never an error
        assert g.kept() == []


def test_a_kept_change_of_a_path_outside_the_memory_roots_is_dropped_unread(
    tmp_path: Path,
) -> None:
    import json

    from memd.memory.files import MemoryFiles

    root, outside = tmp_path / "memory", tmp_path / "elsewhere.md"
    root.mkdir()
    outside.write_text("# Not memd's\n")
    state = tmp_path / "memd-write-guard.json"
    entry = {"wall": time.time(), "cause": "remember", "ops": [
        {"kind": "add", "section": "Notes", "body": "injected <!-- memd id=m_1 -->",
         "item_id": "m_1", "title": "Notes"}]}  # fmt: skip
    state.write_text(json.dumps({"files": {str(outside): {"last": "00" * 16, "entries": [entry]}}}))
    files = MemoryFiles([root], guard_state=state)
    files.watching(True)
    files.resume()
    assert outside.read_text() == "# Not memd's\n" and files.guard.kept() == []
