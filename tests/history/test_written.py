"""memd's own changes recorded exactly as memd wrote them, held against hand edits until they
are queued, and kept on disk until committed (a killed memd commits them at its next start)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.core import writers
from memd.history import Cause, History, capture
from memd.history.commits import Captured
from tests.history.conftest import Clock, write

NOTES = "# Notes\n\n## Notes\n\n- by hand\n"
ITEM = "- the staging host is kestrel <!-- memd id=m_1 -->\n"


def _diff(h: History, change: str) -> tuple[list[str], list[str]]:
    added, removed = [], []
    for d in h.show(change).diffs:
        for line in d.diff.split("\n"):
            if line.startswith("+") and not line.startswith("+++"):
                added.append(line[1:])
            elif line.startswith("-") and not line.startswith("---"):
                removed.append(line[1:])
    return added, removed


def test_the_change_holds_what_memd_wrote_not_the_file_as_it_is_later(
    hist: History, tree: Path
) -> None:
    notes = write(tree, "_core/notes.md", NOTES)
    hist.catch_up()
    write(tree, "_core/notes.md", NOTES + ITEM + "- typed a moment later\n")  # after memd's write
    hist.record_written({notes: (NOTES, NOTES + ITEM)}, Cause.REMEMBER, "id=m_1")
    (change,) = [c for c in hist.log() if c.cause == "remember"]
    assert _diff(hist, change.id) == ([ITEM.rstrip("\n")], [])
    plan = hist.undo(change.id)
    hist.apply_undo(plan)
    assert notes.read_text() == NOTES + "- typed a moment later\n"


def test_a_held_file_is_not_captured_as_a_hand_edit_before_memds_change(
    hist: History, tree: Path, clock: Clock
) -> None:
    notes = write(tree, "_core/notes.md", NOTES)
    hist.catch_up()
    hist.hold(notes)  # memd writes the file in an operation not recorded yet
    write(tree, "_core/notes.md", NOTES + ITEM)
    hist.note_hand_edit(notes)  # the watcher sees memd's write
    clock.advance(3600)
    assert hist.flush(force=True) == 0  # held: nothing captured yet
    hist.record_written({notes: (NOTES, NOTES + ITEM)}, Cause.REMEMBER, "id=m_1")
    clock.advance(3600)
    hist.flush(force=True)
    assert [c.cause for c in hist.log()] == ["remember", "hand", "baseline"]
    assert _diff(hist, hist.log()[0].id) == ([ITEM.rstrip("\n")], [])


def _killed_with_a_remember_spooled(tree: Path, git_dir: Path) -> History:
    """A memd killed after its remember was recorded and before the commit thread committed
    it: the thread cannot run (it needs `_work`), and what was in memory is gone."""
    notes = tree / "_core" / "notes.md"
    h = History(tree, git_dir)
    h.start()
    assert h.wait(30)
    h.catch_up()
    with h._work:
        write(tree, "_core/notes.md", NOTES + ITEM)
        h.record_written({notes: (NOTES, NOTES + ITEM)}, Cause.REMEMBER, "id=m_1 kestrel")
        assert (git_dir / "memd-spool.jsonl").stat().st_size > 0
        with h._cond:
            h._queue.clear()
            h._stop = True
            h._cond.notify_all()
    return h


def test_a_change_spooled_before_a_crash_is_committed_at_the_next_start(
    tree: Path, tmp_path: Path
) -> None:
    git_dir = tmp_path / "history.git"
    write(tree, "_core/notes.md", NOTES)
    _killed_with_a_remember_spooled(tree, git_dir)
    write(tree, "_core/notes.md", NOTES + ITEM + "- typed while memd was down\n")
    h2 = History(tree, git_dir)  # the next start
    h2.flush()
    log = h2.log()
    assert [c.cause for c in log] == ["hand", "remember", "baseline"], log
    assert _diff(h2, log[1].id) == ([ITEM.rstrip("\n")], [])
    assert _diff(h2, log[0].id) == (["- typed while memd was down"], [])
    assert (git_dir / "memd-spool.jsonl").read_bytes() == b""
    h3 = History(tree, git_dir)  # a start after a clean one replays nothing
    h3.flush()
    assert len(h3.log()) == 3


def test_a_batch_committed_before_a_crash_marked_it_done_is_not_committed_again(
    tree: Path, tmp_path: Path
) -> None:
    """memd killed after a batch's commit and before the spool heard of it: the next start
    replays the batch. A change of it that a later change of the same batch wrote over is
    committed already too: it must not be committed a second time, nor the file's state before
    it recorded as a hand edit (which would add a line memd had taken out: undoing that "hand"
    edit would delete it again, or seem to be a person's line)."""
    git_dir = tmp_path / "history.git"
    old = "- the old host is wren <!-- memd id=m_0 -->\n"
    notes = write(tree, "_core/notes.md", NOTES + old)
    h1 = History(tree, git_dir)
    h1.start()
    assert h1.wait(30)
    h1.catch_up()
    h1._spool.done = lambda items: None  # type: ignore[method-assign]  # the kill comes first
    with h1._work:  # both changes in one batch, as when they come within a commit's time
        write(tree, "_core/notes.md", NOTES + old + ITEM)
        h1.record_written({notes: (NOTES + old, NOTES + old + ITEM)}, Cause.REMEMBER, "id=m_1")
        write(tree, "_core/notes.md", NOTES + ITEM)
        h1.record_written({notes: (NOTES + old + ITEM, NOTES + ITEM)}, Cause.UNDO, "m_0")
    assert h1.wait(30)
    committed = [c.cause for c in h1.log(limit=0)]
    assert committed == ["undo", "remember", "baseline"], committed
    with h1._cond:  # killed: the thread ends, nothing else is written
        h1._stop = True
        h1._cond.notify_all()
    assert h1._thread is not None
    h1._thread.join(30)
    h2 = History(tree, git_dir)  # the next start replays the spool
    h2.flush()
    log = h2.log(limit=0)
    assert [c.cause for c in log] == committed, [(c.cause, c.detail) for c in log]
    assert (git_dir / "memd-spool.jsonl").read_bytes() == b""


def test_a_start_killed_while_it_replays_the_spool_leaves_it_for_the_next(
    tree: Path, tmp_path: Path
) -> None:
    """The spool is read at a start and its changes committed; a memd killed in between (a
    crash loop) must find them again at the following start, not lose them to a hand edit."""
    git_dir = tmp_path / "history.git"
    write(tree, "_core/notes.md", NOTES)
    _killed_with_a_remember_spooled(tree, git_dir)
    assert len(History(tree, git_dir)._spool.pending()) == 1  # a start reads it, then dies
    h3 = History(tree, git_dir)
    h3.flush()
    log = h3.log(limit=0)
    assert [(c.cause, c.detail) for c in log] == [
        ("remember", "id=m_1 kestrel"),
        ("baseline", "the memory tree when history started"),
    ], [(c.cause, c.detail) for c in log]
    assert _diff(h3, log[0].id) == ([ITEM.rstrip("\n")], [])
    assert (git_dir / "memd-spool.jsonl").read_bytes() == b""


def test_a_change_recorded_while_the_spool_is_replayed_keeps_its_own_place_in_it(
    tree: Path, tmp_path: Path
) -> None:
    """Numbers in the spool go on after those a previous run left: a change spooled during
    the replay is neither taken for a replayed one nor marked done with it."""
    git_dir = tmp_path / "history.git"
    write(tree, "_core/notes.md", NOTES)
    _killed_with_a_remember_spooled(tree, git_dir)
    spool = History(tree, git_dir)._spool  # the next start's
    (old,) = spool.pending()
    later = Captured(Cause.REMEMBER, "id=m_2", {"_core/notes.md": b"x"}, 0.0, "memd")
    spool.add(later)  # a writer's change, spooled while the replay runs
    assert later.spool != old.spool
    spool.done([old])
    (left,) = History(tree, git_dir)._spool.pending()
    assert left.detail == "id=m_2"


@pytest.mark.parametrize("found_by", ["watcher", "catch-up"])
def test_a_file_read_mid_save_is_not_recorded_though_the_editor_closed_it_before_the_check(
    hist: History, tree: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, found_by: str
) -> None:
    """An editor saving in place truncates the file, then writes it. A hand edit read in
    between is the file emptied; when the editor has written and closed the file by the time the
    history asks who holds it open, that read must still not be recorded: memd's next change
    would then seem to have a person add every line memd wrote."""
    notes = write(tree, "_core/notes.md", NOTES)
    hist.catch_up()
    write(tree, "_core/notes.md", NOTES + ITEM)
    hist.record_written({notes: (NOTES, NOTES + ITEM)}, Cause.REMEMBER, "id=m_1")
    editor = open(notes, "r+b")  # noqa: SIM115 (closed by the check below)
    data = editor.read()
    editor.seek(0)
    editor.truncate(0)  # mid-save: the file is empty until the editor writes
    real = writers.held_open

    def late_check(paths: list[Path]) -> dict[Path, list[str]] | None:
        if not editor.closed:  # the scan of the processes reaches the editor after its close
            editor.write(data + b"- saved by hand\n")
            editor.close()
        return real(paths)

    monkeypatch.setattr(capture, "held_open", late_check)
    if found_by == "watcher":
        hist.note_hand_edit(notes)
        clock.advance(3600)
        hist.flush(force=True)
    else:
        hist.catch_up()
    assert editor.closed
    saved = NOTES + ITEM + "- saved by hand\n"
    later = "- the build uses bazel <!-- memd id=m_2 -->\n"
    write(tree, "_core/notes.md", saved + later)
    hist.record_written({notes: (saved, saved + later)}, Cause.REMEMBER, "id=m_2")
    clock.advance(3600)
    hist.flush(force=True)
    hand = [_diff(hist, c.id) for c in hist.log() if c.cause == "hand"]
    assert (["- saved by hand"], []) in hand
    assert all(not any("memd id=" in a for a in added) for added, _ in hand), hand
    assert all(not removed for _, removed in hand), hand


def test_a_write_retried_after_an_editor_saved_over_it_holds_only_memds_line(
    hist: History, tree: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """memd appends its item at the moment an editor saving in place truncates the file and
    writes it back with a line of its own: the append lands in the emptied file, the editor's
    write covers it, and memd writes its item again on the editor's version. memd's change holds
    its item only (an undo of it must not take the person's line); the editor's line is a hand
    change."""
    from memd.memory.edit import add_item
    from memd.memory.files import MemoryFiles

    # Longer than memd's line: the editor's write covers all of memd's bytes.
    notes = write(tree, "_core/notes.md", NOTES + "- a line long enough to cover memd's item\n")
    hist.catch_up()
    files = MemoryFiles([tree], hist)
    real_write = os.write
    raced: list[bool] = []

    def racing_write(fd: int, data: bytes) -> int:
        if raced or b"memd id=m_1" not in bytes(data):
            return real_write(fd, data)
        raced.append(True)
        with open(notes, "r+b") as editor:  # it read the file before memd's append
            old = editor.read()
            editor.seek(0)
            editor.truncate(0)
            n = real_write(fd, data)  # memd's append, into the emptied file
            editor.write(old + b"- saved by hand\n")
        return n

    monkeypatch.setattr(os, "write", racing_write)
    with files.operation(Cause.REMEMBER, "id=m_1") as op:
        files.edit(
            notes, add_item(notes, "Notes", "the staging host is kestrel", {"id": "m_1"}), op
        )
    monkeypatch.undo()
    assert raced
    assert notes.read_text().count("memd id=m_1") == 1 and "- saved by hand\n" in notes.read_text()
    clock.advance(3600)
    hist.flush(force=True)
    log = hist.log()
    (mine,) = [c for c in log if c.cause == "remember"]
    added, removed = _diff(hist, mine.id)
    assert removed == [] and len(added) == 1 and "memd id=m_1" in added[0], (added, removed)
    hand = [_diff(hist, c.id) for c in log if c.cause == "hand"]
    assert (["- saved by hand"], []) in hand, hand


def test_items_the_guard_applies_again_inside_a_remember_are_a_change_of_their_own(
    hist: History, tree: Path, clock: Clock
) -> None:
    """An editor writes back its older copy over memd's item; memd's next remember in the file
    puts the item back (the write guard) and adds its own. The history holds: the editor's save
    (a hand change removing the item and adding the editor's line), memd putting the item back,
    then the remember adding its own item only — no change mixes them."""
    from memd.memory.edit import add_item
    from memd.memory.files import MemoryFiles

    notes = write(tree, "_core/notes.md", NOTES)
    hist.catch_up()
    files = MemoryFiles([tree], hist)
    files.watching(True)
    for n, text in ((1, "the staging host is kestrel"), (2, "the build uses bazel")):
        if n == 2:  # the editor's buffer, loaded before memd's first item
            write(tree, "_core/notes.md", NOTES + "- saved by hand\n")
        with files.operation(Cause.REMEMBER, f"id=m_{n}") as op:
            files.edit(notes, add_item(notes, "Notes", text, {"id": f"m_{n}"}), op)
    assert "memd id=m_1" in notes.read_text() and "memd id=m_2" in notes.read_text()
    clock.advance(3600)
    hist.flush(force=True)
    log = list(reversed(hist.log()))
    diffs = [(c.cause, c.detail, *_diff(hist, c.id)) for c in log[2:]]  # after baseline, NOTES
    m1 = "- the staging host is kestrel <!-- memd id=m_1 -->"
    m2 = "- the build uses bazel <!-- memd id=m_2 -->"
    assert [(cause, added, removed) for cause, _, added, removed in diffs] == [
        ("remember", [m1], []),
        ("hand", ["- saved by hand"], [m1]),
        ("remember", [m1], []),
        ("remember", [m2], []),
    ], diffs
    assert [detail for _, detail, _, _ in diffs] == [
        "id=m_1",
        "edits not yet recorded before this remember",
        "applied again after an older copy was saved",
        "id=m_2",
    ]


def test_an_undo_planned_on_an_older_copy_takes_back_its_line_and_keeps_memds_newer_item(
    hist: History, tree: Path, clock: Clock
) -> None:
    """An editor writes back its older copy over memd's newest item, and an undo of an earlier
    item is planned on the file as it is, before the watcher looked at the save. The undo
    removes its own line only; the newer item is put back as a change of its own (before, the
    undo's write let the write guard go of it, and it was lost), recorded with the cause of
    the change that made it: a change the history names an undo takes back, never adds (it was
    recorded as an undo adding the item, which an undo of that "undo" would have taken away)."""
    from memd.memory.edit import add_item
    from memd.memory.files import MemoryFiles

    notes = write(tree, "_core/notes.md", NOTES)
    hist.catch_up()
    files = MemoryFiles([tree], hist)
    files.watching(True)
    for n, text in ((1, "the staging host is kestrel"), (2, "the build uses bazel")):
        if n == 2:  # the editor's buffer, loaded before memd's second item
            buffer = notes.read_text()
        with files.operation(Cause.REMEMBER, f"id=m_{n}") as op:
            files.edit(notes, add_item(notes, "Notes", text, {"id": f"m_{n}"}), op)
    write(tree, "_core/notes.md", buffer + "- saved by hand\n")  # the editor's save
    hist.note_hand_edit(notes)
    clock.advance(3600)
    hist.flush(force=True)
    first = next(c.id for c in hist.log() if c.detail == "id=m_1")
    plan = hist.undo(first)
    with files.operation(Cause.UNDO, plan.detail, trailers=plan.trailers) as op:
        for f in plan.files:
            files.write_if(f.path, f.expected, f.new, op)
    m1 = "- the staging host is kestrel <!-- memd id=m_1 -->"
    m2 = "- the build uses bazel <!-- memd id=m_2 -->"
    text = notes.read_text()
    assert m2 in text and m1 not in text and "- saved by hand" in text
    clock.advance(3600)
    hist.flush(force=True)
    log = list(reversed(hist.log()))
    diffs = [(c.cause, c.detail, *_diff(hist, c.id)) for c in log[2:]]  # after baseline, NOTES
    assert [(cause, added, removed) for cause, _, added, removed in diffs[-2:]] == [
        ("remember", [m2], []),
        ("undo", [], [m1]),
    ], diffs
    assert diffs[-2][1] == "applied again after an older copy was saved", diffs


def test_a_save_between_two_writes_of_one_operation_is_the_persons_not_memds(
    hist: History, tree: Path, clock: Clock
) -> None:
    """One operation (an extraction adding two items) writes a file twice; a person saves it
    in between. memd's change holds its two items only and an undo of it keeps the person's
    line; the save is a hand change between the operation's writes."""
    from memd.memory.edit import add_item
    from memd.memory.files import MemoryFiles

    notes = write(tree, "_core/notes.md", NOTES)
    hist.catch_up()
    files = MemoryFiles([tree], hist)
    with files.operation(Cause.EXTRACT, "run 1") as op:
        files.edit(
            notes, add_item(notes, "Notes", "the staging host is kestrel", {"id": "m_1"}), op
        )
        write(tree, "_core/notes.md", notes.read_text() + "- saved by hand\n")
        files.edit(notes, add_item(notes, "Notes", "the build uses bazel", {"id": "m_2"}), op)
    assert "- saved by hand\n" in notes.read_text()
    clock.advance(3600)
    hist.flush(force=True)
    mine = [c for c in hist.log() if c.cause == "extract"]
    added = [a for c in mine for a in _diff(hist, c.id)[0]]
    assert "- saved by hand" not in added and len(added) == 2, added
    hand = [_diff(hist, c.id) for c in hist.log() if c.cause == "hand"]
    assert (["- saved by hand"], []) in hand, hand
    for c in mine:
        hist.apply_undo(hist.undo(c.id))
    assert notes.read_text() == NOTES + "- saved by hand\n"


def test_a_link_in_place_of_the_spool_is_never_written_read_or_emptied_through(
    tmp_path: Path,
) -> None:
    """The spool is appended to and emptied in place: a link put there (to a person's file)
    would have got memd's changes appended, or been emptied — the file it points to. It is
    removed at start, and a link put there later makes the spool's writes fail (a warning;
    the change is still committed from memory), never reach the file."""
    from memd.history.commits import Captured
    from memd.history.spool import NAME, Spool

    git_dir, theirs = tmp_path / "history.git", tmp_path / "theirs.txt"
    git_dir.mkdir()
    theirs.write_text("a person's file\n")
    (git_dir / NAME).symlink_to(theirs)
    spool = Spool(git_dir)
    assert spool.pending() == [] and not (git_dir / NAME).exists()
    c = Captured(Cause.REMEMBER, "id=m_1", {"_core/notes.md": b"- kestrel\n"}, 1.0, "memd", {})
    spool.add(c)
    assert (git_dir / NAME).stat().st_size > 0
    (git_dir / NAME).unlink()
    (git_dir / NAME).symlink_to(theirs)
    with pytest.raises(OSError):
        spool.add(Captured(Cause.REMEMBER, "id=m_2", {"a.md": b"x\n"}, 2.0, "memd", {}))
    spool.done([c])
    assert theirs.read_text() == "a person's file\n"
