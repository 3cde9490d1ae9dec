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
from memd.memory.files.guard import LATE_S, WINDOW_S, reapply
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


def test_an_editor_saving_its_older_copy_again_after_the_window_while_memd_is_down(
    home: Path,
) -> None:
    """memd killed right after a remember; an editor saves its older copy within the window,
    and again (the same copy with a line more) after it, before memd is back — as the
    everything-at-once stress test did at load ~5 with a restart slower than the window. The
    file keeps only the last save's time, so the item was taken as deleted by a person."""
    d, notes = _start(home)
    try:
        old = notes.read_bytes()
        item = d.call("remember", {"text": "the deploy key lives in the vault"})["id"]
        d.stop(signal.SIGKILL)
        _save_by_rename(notes, old + b"- typed first\n")
        time.sleep(WINDOW_S + 0.5)
        _save_by_rename(notes, notes.read_bytes() + b"- typed again\n")
        d.start()
        wait_for(lambda: item in notes.read_text(), 15)
        text = notes.read_text()
        assert "- typed first" in text and "- typed again" in text and HAND in text
    finally:
        if d.proc and d.proc.poll() is None:
            d.stop()


def _age_kept_changes(home: Path, seconds: float) -> None:
    """The guard's kept changes made `seconds` earlier (their wall times in its state file)."""
    import re

    (state,) = (home / "data").glob("*-write-guard.json")
    text = re.sub(r'"wall": ([0-9.]+)',
                  lambda m: f'"wall": {float(m.group(1)) - seconds}', state.read_text())  # fmt: skip
    state.write_text(text)


def test_an_older_copy_saved_after_the_window_stays_as_written(home: Path) -> None:
    d, notes = _start(home)
    try:
        old = notes.read_bytes()
        item = d.call("remember", {"text": "the deploy key lives in the vault"})["id"]
        d.stop(signal.SIGKILL)
        # Saved more than a minute after the window (even with an old modification time, as a
        # rename of a temp file written earlier has): a person who removed the item. The
        # minute is made by dating memd's change earlier, not by waiting.
        _age_kept_changes(home, WINDOW_S + LATE_S + 1)
        _save_by_rename(notes, old, mtime=time.time() - 600)
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
    assert "- first <!-- memd id=m_1 -->" in reapply(old, second.missing(p, old.encode(), old).ops)
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


def _kept(g: object) -> dict[str, tuple[str, list[tuple[float, str, list[object]]]]]:
    """A guard's kept changes, comparable between guards (times on the wall clock)."""
    from memd.memory.files.guard import WriteGuard

    assert isinstance(g, WriteGuard)
    return {
        k: (st.last.hex() if st.last else "", [(e.wall, e.cause, list(e.ops)) for e in st.entries])
        for k, st in g._files.items()
    }


def test_a_write_appends_its_change_to_the_state_file_instead_of_rewriting_it(
    tmp_path: Path,
) -> None:
    """Each of memd's item changes costs the guard one line, however many it keeps: a burst of
    remembers rewrote the whole file on each of them (a remember's largest cost after its
    file write), growing with every change kept. The next start reads the same changes."""
    from memd.memory.files.guard import AddOp, WriteGuard

    state, p = tmp_path / "memd-write-guard.json", tmp_path / "notes.md"
    g = WriteGuard(state=state)
    g.active = True
    text = "# Notes\n\n## Notes\n\n- by hand\n"
    before = b""
    for i in range(40):
        body = f"fact {i} <!-- memd id=m_{i} -->"
        text += f"- {body}\n"
        g.written(p, text.encode(), [AddOp("Notes", body, f"m_{i}", "Notes")], "remember")
        now = state.read_bytes()
        assert now.startswith(before) and now.count(b"\n") == before.count(b"\n") + 1, i
        before = now
    again = WriteGuard(state=state)
    assert _kept(again) == _kept(g) and len(_kept(g)[str(p)][1]) == 40
    # The next start rewrote it as one line per file: what holds, read the same way.
    assert state.read_bytes().count(b"\n") == 1 and _kept(WriteGuard(state=state)) == _kept(g)


def test_every_kind_of_guard_change_reads_back_the_same_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item changes, a newer change of an item replacing the older, an older copy written
    back and checked, a whole-file write, a file forgotten, an older copy after the window:
    a guard started on the state file keeps exactly what the running one keeps — including
    across a rewrite of the file (`COMPACT_LINES`, lowered so that it happens often)."""
    import random

    from memd.memory.files import guard as gm

    monkeypatch.setattr(gm, "COMPACT_LINES", 16)

    clock = [1000.0]
    wall = [1.7e9]
    state = tmp_path / "memd-write-guard.json"
    g = gm.WriteGuard(state=state, clock=lambda: clock[0], wall=lambda: wall[0])
    g.active = True
    rnd = random.Random(7)
    paths = [tmp_path / f"f{i}.md" for i in range(4)]
    texts = {p: "# T\n\n## Notes\n\n- by hand\n" for p in paths}
    for step in range(300):
        p = rnd.choice(paths)
        n = rnd.randrange(12)
        kind = rnd.random()
        if kind < 0.55:
            body = f"item {n} v{step} <!-- memd id=m_{n} -->"
            old = [ln for ln in texts[p].split("\n") if f"id=m_{n} " in ln]
            if old:
                texts[p] = texts[p].replace(old[0], f"- {body}")
                op: gm.Op = gm.SetOp(f"m_{n}", body, old[0][2:])
            else:
                texts[p] += f"- {body}\n"
                op = gm.AddOp("Notes", body, f"m_{n}", "Notes")
            g.written(p, texts[p].encode(), [op], "remember")
        elif kind < 0.7:
            older = "# T\n\n## Notes\n\n- by hand\n- an editor's line\n"
            texts[p] = reapply(older, g.missing(p, older.encode(), older, wall[0]).ops)
        elif kind < 0.8:
            texts[p] = "# T\n\n## Notes\n\n- rewritten whole\n"
            g.rewritten(p, texts[p].encode(), texts[p])
        elif kind < 0.87:
            g.forget_file(p)
            texts[p] = "# T\n\n## Notes\n\n- by hand\n"
        else:
            g.written(p, texts[p].encode(), None)  # a whole-file write: not guarded
        step_s = rnd.choice([0.1, 0.5, 3.0, 20.0])
        clock[0] += step_s
        wall[0] += step_s
        copy = tmp_path / "next-start.json"  # the next start rewrites the file it reads
        copy.write_bytes(state.read_bytes() if state.exists() else b"")
        again = gm.WriteGuard(state=copy, clock=lambda: clock[0], wall=lambda: wall[0])
        assert _seen(again, wall[0]) == _seen(g, wall[0]), step


def _seen(g: object, now: float) -> dict[str, tuple[str, list[tuple[float, str, list[object]]]]]:
    """The kept changes a save may still be seen for at `now` (what a guard acts on)."""
    from memd.memory.files.guard import LATE_S, WINDOW_S

    kept = {k: (last, [e for e in es if now - e[0] < WINDOW_S + LATE_S])
            for k, (last, es) in _kept(g).items()}  # fmt: skip
    return {k: v for k, v in kept.items() if v[1]}


def test_a_change_the_state_file_could_not_take_is_in_it_after_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk for a moment: the line of that change is missing from the file, so the next
    write puts the whole state down again rather than one more line after the gap."""
    import errno

    from memd.memory.files import guard as gm

    state, p = tmp_path / "memd-write-guard.json", tmp_path / "notes.md"
    g = gm.WriteGuard(state=state)
    g.active = True
    text = "# Notes\n\n## Notes\n\n- by hand\n"
    real_write, full = os.write, [False]

    def write(fd: int, data: bytes) -> int:
        if full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    for i in range(3):
        body = f"fact {i} <!-- memd id=m_{i} -->"
        text += f"- {body}\n"
        full[0] = i == 1
        g.written(p, text.encode(), [gm.AddOp("Notes", body, f"m_{i}", "Notes")], "remember")
    monkeypatch.setattr(os, "write", real_write)
    assert _kept(gm.WriteGuard(state=state)) == _kept(g) and len(_kept(g)[str(p)][1]) == 3


def test_a_link_put_in_place_of_the_state_file_is_never_written_through(tmp_path: Path) -> None:
    """The guard appends to its state file: a link put there (to a person's file) must not
    get memd's lines; the link is replaced by the next whole write instead."""
    from memd.memory.files.guard import AddOp, WriteGuard

    state, p, theirs = tmp_path / "memd-write-guard.json", tmp_path / "notes.md", tmp_path / "rc"
    theirs.write_text("export PATH=~/bin:$PATH\n")
    g = WriteGuard(state=state)
    g.active = True
    text = "# Notes\n\n## Notes\n\n- by hand\n"
    for i in range(3):
        if i == 1:
            state.unlink()
            state.symlink_to(theirs)
        body = f"fact {i} <!-- memd id=m_{i} -->"
        text += f"- {body}\n"
        g.written(p, text.encode(), [AddOp("Notes", body, f"m_{i}", "Notes")], "remember")
    assert theirs.read_text() == "export PATH=~/bin:$PATH\n"
    assert not state.is_symlink() and _kept(WriteGuard(state=state)) == _kept(g)
