"""Must-show: with `memd serve` running, hand edits are searchable within 2 s, no command run."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from tests.utils import DaemonProcess, wait_for

LIMIT = 2.0


def test_create_edit_rename_move_delete_are_seen(daemon: DaemonProcess) -> None:
    topics = daemon.memory / "topics"
    note = topics / "garden.md"
    note.write_text("# Garden\n\n## Plants\n- tomatoes need sun\n")
    wait_for(lambda: str(note) in daemon.search_paths("tomatoes"), LIMIT)

    with open(note, "a", encoding="utf-8") as fh:  # edit in place
        fh.write("- basil likes warmth\n")
    wait_for(lambda: str(note) in daemon.search_paths("basil"), LIMIT)

    tmp = topics / ".garden.md.tmp"  # editor-style save: temp file, then rename over
    tmp.write_text("# Garden\n\n## Plants\n- courgettes everywhere\n")
    os.replace(tmp, note)
    wait_for(lambda: str(note) in daemon.search_paths("courgettes"), LIMIT)
    wait_for(lambda: not daemon.search_paths("basil"), LIMIT)

    vim_backup = topics / "garden.md~"  # vim: rename original away, write new file, delete backup
    os.rename(note, vim_backup)
    note.write_text("# Garden\n\n## Plants\n- peppers from vim\n")
    vim_backup.unlink()
    wait_for(lambda: str(note) in daemon.search_paths("peppers"), LIMIT)

    moved = topics / "outdoor.md"  # move a file
    os.rename(note, moved)
    wait_for(lambda: daemon.search_paths("peppers") == {str(moved)}, LIMIT)

    sub = topics / "kitchen"  # move a whole folder
    sub.mkdir()
    (sub / "herbs.md").write_text("# Herbs\n\n## Use\n- rosemary with potatoes\n")
    wait_for(lambda: daemon.search_paths("rosemary"), LIMIT)
    shutil.move(str(sub), str(daemon.memory / "archive" / "kitchen"))
    wait_for(
        lambda: (
            daemon.search_paths("rosemary") == {str(daemon.memory / "archive/kitchen/herbs.md")}
        ),
        LIMIT,
    )

    moved.unlink()  # delete
    wait_for(lambda: not daemon.search_paths("peppers"), LIMIT)
    shutil.rmtree(daemon.memory / "archive" / "kitchen")
    wait_for(lambda: not daemon.search_paths("rosemary"), LIMIT)

    swap = topics / ".outdoor.md.swp"  # swap files are never indexed
    swap.write_text("swapfile-secret-token")
    time.sleep(0.5)
    assert not daemon.search_paths("swapfile")


def test_a_file_saved_unchanged_leaves_no_lag(daemon: DaemonProcess) -> None:
    """`status`'s lag is a change the watcher saw and the index has not applied: a save that
    changed nothing (an editor's save, memd's own write seen late) is applied by indexing
    nothing, and must not show as a lag for ever (`doctor` warns after a minute of it)."""
    note = daemon.memory / "topics" / "garden.md"
    text = "# Garden\n\n## Plants\n- tomatoes need sun\n"
    note.write_text(text)
    wait_for(lambda: str(note) in daemon.search_paths("tomatoes"), LIMIT)
    before = daemon.call("status")["index"]
    note.write_text(text)  # the same bytes again

    def seen_and_caught_up() -> bool:
        ix = daemon.call("status")["index"]
        return bool(ix["last_change_at"] > before["last_change_at"] and ix["lag_s"] == 0.0)

    wait_for(seen_and_caught_up, LIMIT)
    assert daemon.call("status")["index"]["last_indexed_at"] == before["last_indexed_at"]


def test_changes_while_stopped_are_found_on_start(daemon: DaemonProcess) -> None:
    topics = daemon.memory / "topics"
    a, b, c = (topics / f"{n}.md" for n in ("alpha", "beta", "gamma"))
    for p in (a, b, c):
        p.write_text(f"# {p.stem}\n\n## S\n- original {p.stem}\n")
    wait_for(lambda: len(daemon.search_paths("original")) == 3, LIMIT)
    assert daemon.stop() == 0
    a.write_text("# alpha\n\n## S\n- edited-while-down\n")  # changed
    b.unlink()  # deleted
    (topics / "delta.md").write_text("# delta\n\n## S\n- created-while-down\n")  # created
    os.utime(c, ns=(1, 1))  # touched, same content
    daemon.start()
    assert daemon.search_paths("edited-while-down") == {str(a)}
    assert daemon.search_paths("created-while-down") == {str(topics / "delta.md")}
    assert daemon.search_paths("original") == {str(c)}


def test_new_subfolders_are_watched(daemon: DaemonProcess) -> None:
    deep = daemon.memory / "projects" / "app" / "notes"
    deep.mkdir(parents=True)
    f = deep / "db.md"
    f.write_text("# DB\n\n## Choice\n- sqlite-with-wal\n")
    wait_for(lambda: daemon.search_paths("sqlite-with-wal") == {str(f)}, LIMIT)


def test_status_lists_problem_files(daemon: DaemonProcess, home: Path) -> None:
    bad = daemon.memory / "topics"
    (bad / "bad-utf8.md").write_bytes(b"# x\n\xff\xfe broken\n")
    (bad / "fm.md").write_text("---\n: : :\n---\n# FM\n")
    wait_for(lambda: len(daemon.call("status")["problems"]) == 2, LIMIT)
    out = daemon.cli("status").stdout
    assert "bad-utf8.md: invalid UTF-8 at byte 4" in out and "fm.md: broken front matter" in out
