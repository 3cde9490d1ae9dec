"""Recording changes: one change per memd write with its cause, hand edits coalesced, only the
memory tree, secrets redacted, a repository plain git can read, failures that never break a
write."""

from __future__ import annotations

import gc
import logging
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memd.history import Cause, History
from tests.history.conftest import Clock, git, write
from tests.utils import ROOT, wait_for

SECRET = "sk-ant-api03-" + "Q7x" * 31 + "AA"
PASSWORD = "hunter2-correct-horse"
PRIVATE = "my diary entry nobody reads"


def _causes(h: History) -> list[str]:
    return [c.cause for c in h.log()]


def test_baseline_is_readable_with_plain_git(hist: History, tree: Path) -> None:
    changes = hist.log()
    assert [c.cause for c in changes] == ["baseline"]
    assert {f.path for f in changes[0].files} == {
        "_core/profile.md",
        "_core/preferences.md",
        "topics/vue.md",
    }
    # The repository is an ordinary one: git alone (no memd, no --work-tree) reads it.
    assert (
        git(hist, "log", "--format=%s").strip() == "baseline: the memory tree when history started"
    )
    assert git(hist, "status", "--porcelain") == ""
    assert (
        git(hist, f"--work-tree={tree}", "show", "HEAD:topics/vue.md")
        == (tree / "topics/vue.md").read_text()
    )
    trailers = git(hist, "log", "-1", "--format=%(trailers:key=Memd-Cause,valueonly)").strip()
    assert trailers == "baseline"


@pytest.mark.parametrize(
    ("cause", "detail"),
    [
        (Cause.REMEMBER, "id=m_1a2b always use pnpm"),
        (Cause.FORGET, "id=m_1a2b always use pnpm"),
        (Cause.EXTRACT, "run r_20261122_0930: 2 added, 1 merged"),
        (Cause.SUPERSEDE, "m_0001 superseded by m_0002 (employer)"),
        (Cause.ARCHIVE, "run 2026-11-22: 3 items archived"),
        (Cause.IMPORT, "memd-export v1 from laptop.json"),
        (Cause.EDIT, "page edit of m_0003: importance 7 -> 9"),
    ],
)
def test_each_memd_write_is_one_change_with_its_cause(
    hist: History, tree: Path, cause: Cause, detail: str
) -> None:
    path = write(tree, "_core/notes.md", "# Notes\n\n## Notes\n\n- always use pnpm\n")
    hist.record([path], cause, detail)
    # The watcher sees memd's own write too: it must not become a second change.
    hist.note_hand_edit(path)
    hist.flush(force=True)
    changes = hist.log()
    assert [c.cause for c in changes] == [cause.value, "baseline"]
    c = changes[0]
    assert c.detail == detail
    assert [(f.path, f.status) for f in c.files] == [("_core/notes.md", "A")]
    assert c.author == "memd"
    # The same cause, as trailers git itself reads.
    assert git(hist, "log", "-1", "--format=%(trailers:key=Memd-Cause,valueonly)").strip() == cause
    assert (
        git(hist, "log", "-1", "--format=%(trailers:key=Memd-Detail,valueonly)").strip() == detail
    )


def test_a_write_that_changed_nothing_records_nothing(hist: History, tree: Path) -> None:
    hist.record([tree / "topics/vue.md"], Cause.EDIT, "same text")
    assert _causes(hist) == ["baseline"]


def test_one_change_holds_every_file_of_an_extraction_run(hist: History, tree: Path) -> None:
    a = write(tree, "_core/profile.md", TEMPLATE_PROFILE + "- works at Acme\n")
    b = write(tree, "topics/rust.md", "# Rust\n\n## Tooling\n\n- cargo nextest\n")
    c = write(tree, "projects/api/context.md", "# Project api\n\n## Context\n\n- RFC 7807 errors\n")
    hist.record([a, b, c], Cause.EXTRACT, "run r_42: 3 added")
    [run, _] = hist.log()
    assert run.cause == "extract"
    assert sorted((f.path, f.status) for f in run.files) == [
        ("_core/profile.md", "M"),
        ("projects/api/context.md", "A"),
        ("topics/rust.md", "A"),
    ]


TEMPLATE_PROFILE = "# User Profile\n\n## Basic Info\n\n- lives in Lyon\n"


def test_background_recording_keeps_the_order_of_writes(tree: Path, tmp_path: Path) -> None:
    h = History(tree, tmp_path / "h.git")
    h.start()
    assert h.wait(30)  # the baseline is committed
    try:
        path = tree / "_core/notes.md"
        for n in range(5):
            write(
                tree,
                "_core/notes.md",
                "# Notes\n\n" + "".join(f"- item {i}\n" for i in range(n + 1)),
            )
            h.record([path], Cause.REMEMBER, f"item {n}")
        assert h.wait(30)
        changes = h.log()
        assert [c.detail for c in changes[:5]] == [f"item {n}" for n in range(4, -1, -1)]
        assert changes[-1].cause == "baseline"
        head = git(h, "show", "HEAD:_core/notes.md")
        assert head == path.read_text()
    finally:
        h.close()
    assert not h.status().pending


def test_hand_edits_are_recorded_when_the_editor_goes_quiet_at_most_a_minute_apart(
    hist: History, tree: Path, clock: Clock
) -> None:
    vue = tree / "topics/vue.md"
    for n in range(4):  # saves a second apart: one change
        write(tree, "topics/vue.md", TEMPLATE_VUE + f"- hand note {n}\n")
        hist.note_hand_edit(vue)
        clock.advance(1)
    write(tree, "_core/preferences.md", "# User Preferences\n\n- spaces after all\n")
    hist.note_hand_edit(tree / "_core/preferences.md")
    assert hist.flush() == 0  # the editor saved a moment ago: not quiet yet
    assert hist.status().pending == 2
    clock.advance(2.5)
    assert hist.flush() == 1  # vue.md quiet for 3.5 s; preferences.md for 2.5 s only
    [vue_change, _] = hist.log()
    assert vue_change.cause == "hand"
    assert vue_change.detail == "topics/vue.md"
    assert git(hist, "show", "HEAD:topics/vue.md").endswith("- hand note 3\n")
    clock.advance(1)
    assert hist.flush() == 1
    assert [c.detail for c in hist.log()] == [
        "_core/preferences.md",
        "topics/vue.md",
        "the memory tree when history started",
    ]
    assert hist.log()[0].author != "memd"
    # A file saved again and again, never quiet for long: recorded a minute after its first save.
    for n in range(35):
        write(tree, "topics/vue.md", TEMPLATE_VUE + f"- busy note {n}\n")
        hist.note_hand_edit(vue)
        clock.advance(2)
        hist.flush()
    assert [c.detail for c in hist.log()][:2] == ["topics/vue.md", "_core/preferences.md"]
    assert git(hist, "show", "HEAD:topics/vue.md").endswith("- busy note 29\n")


TEMPLATE_VUE = "# Vue\n\n## Testing\n\n- use vitest\n- mount with @vue/test-utils\n"


def test_the_first_recording_never_holds_the_whole_tree_in_memory(
    tree: Path, tmp_path: Path
) -> None:
    line = "- a line of notes that someone kept in this file over the years\n"
    for n in range(200):
        write(tree, f"topics/big{n:03d}.md", f"# Big {n}\n\n" + line * 600)  # ~40 KB each
    size = sum(p.stat().st_size for p in tree.rglob("*.md"))
    # Measured in a process of its own: tracemalloc counts the allocations of every thread of
    # the process, and a test process may have others (pytest-xdist's, any a test before left).
    # In the test process this peak is ~0.25 MB; under load a run once counted 4.1 MB.
    measure = (
        "import sys, tracemalloc\n"
        "from pathlib import Path\n"
        "from memd.history import History\n"
        "h = History(Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "tracemalloc.start()\n"
        "try:\n"
        "    h.flush()  # opens the repository: the baseline holds every file\n"
        "    _, peak = tracemalloc.get_traced_memory()\n"
        "finally:\n"
        "    tracemalloc.stop()\n"
        "    h.close()\n"
        "print(peak)\n"
    )
    done = subprocess.run([sys.executable, "-c", measure, str(tree), str(tmp_path / "h.git")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)  # fmt: skip
    peak = int(done.stdout)
    h = History(tree, tmp_path / "h.git")
    try:
        assert len(h.log()[0].files) == 203
        assert git(h, "show", "HEAD:topics/big042.md") == (tree / "topics/big042.md").read_text()
    finally:
        h.close()
    # Read as git takes each file: a few files' worth at a time, not the tree (8 MB) once or
    # three times over (the margin is for tables that happen to grow meanwhile).
    assert peak < size / 2


# Its baseline of 3,003 files under tracemalloc takes ~6 s of CPU, against git fast-import's
# 60 s limit: under a loaded machine's parallel steps it ran out of time.
@pytest.mark.serial
def test_the_first_recording_keeps_nothing_per_file(tree: Path, tmp_path: Path) -> None:
    # The blob id of every file was kept after the baseline (1.6 MB for 10,000 files) though a
    # restart never has them: a later change asks git about the paths it touches.
    for n in range(3000):
        write(tree, f"topics/t{n:04d}.md", f"# T{n}\n\n- note {n}\n")
    h = History(tree, tmp_path / "h.git")
    gc.collect()
    # The baseline runs in a thread of its own: tracemalloc keeps up to 30 frames of each
    # allocation's stack, and under pytest's ~70 it took 30 for each (the test 16 CPU-s, now 8);
    # the thread's whole stack is shorter (checked below), so no frame of memd/history is cut.
    with ThreadPoolExecutor(1) as pool:
        tracemalloc.start(30)
        try:
            pool.submit(h.flush).result()  # the baseline: 3,003 files
            gc.collect()
            snap = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
    # What the history's code allocated and still holds (other threads' work left out),
    # counted in objects: one table that grows (interned names) is not per-file state.
    mine = snap.filter_traces([tracemalloc.Filter(True, "*/memd/history/*", all_frames=True)])
    try:
        assert all(len(t.traceback) < 30 for t in mine.traces)  # each stack whole
        assert len(mine.traces) < 300  # not one (or two) per file of the 3,003
        write(tree, "topics/t0042.md", "# T42\n\n- changed by hand\n")
        h.note_hand_edit(tree / "topics/t0042.md")
        assert h.flush(force=True) == 1
        assert h.log()[0].files[0].path == "topics/t0042.md"
        h.note_hand_edit(tree / "topics/t0043.md")  # seen by the watcher, but unchanged
        assert h.flush(force=True) == 0
    finally:
        h.close()


def test_status_runs_no_git(tree: Path, tmp_path: Path) -> None:
    # Clients poll `status` (the daemon's includes the history's): a git process per call made
    # it six times as costly.
    runs = tmp_path / "git-runs.log"
    shim = _counting_git(tmp_path, runs)
    h = History(tree, tmp_path / "h.git", git=str(shim))
    h.flush()
    write(tree, "_core/notes.md", "# Notes\n\n- one\n")
    h.record([tree / "_core/notes.md"], Cause.REMEMBER, "one")
    before = runs.read_text().count("\n")
    heads = {h.status().head for _ in range(5)}
    assert runs.read_text().count("\n") == before
    assert heads == {git(h, "rev-parse", "refs/heads/main").strip()}
    h.close()


def _counting_git(tmp_path: Path, log: Path) -> Path:
    """A real git behind a script that notes each run in `log`."""
    shim = tmp_path / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    shim.chmod(0o755)
    return shim


def test_hand_edits_due_about_together_are_committed_in_few_git_runs(
    tree: Path, tmp_path: Path
) -> None:
    # A real git that notes each run: the commit thread's batches are counted.
    runs = tmp_path / "git-runs.log"
    shim = _counting_git(tmp_path, runs)
    h = History(tree, tmp_path / "h.git", git=str(shim), coalesce_s=1.0)
    h.start()
    try:
        assert h.wait(30)  # the baseline
        first = time.monotonic()
        for n in range(12):
            write(tree, f"topics/t{n}.md", f"# T{n}\n\n- saved by hand\n")
            h.note_hand_edit(tree / f"topics/t{n}.md")
            time.sleep(0.03)  # saves a few tens of ms apart, each due a second later
        span = time.monotonic() - first
        wait_for(lambda: h.status().pending == 0, timeout=60)
        assert h.wait(30)
    finally:
        h.close()
    assert {f"topics/t{n}.md" for n in range(12)} <= {f.path for c in h.log() for f in c.files}
    batches = runs.read_text().count("fast-import") - 1  # less the baseline's
    # Taken at most every quarter of `coalesce_s`: saves spread over `span` seconds fall due
    # within as long, so they need at most this many batches, not one each.
    assert 1 <= batches <= 2 + int(span / 0.25)


def test_a_deleted_folder_records_its_files_as_deleted(
    hist: History, tree: Path, clock: Clock
) -> None:
    write(tree, "agents/bot/relationship.md", "# Bot\n\n- friendly\n")
    write(tree, "agents/bot/topics/jokes.md", "# Jokes\n\n- puns\n")
    hist.record([tree / "agents/bot"], Cause.IMPORT, "agent bot")
    shutil.rmtree(tree / "agents/bot")
    hist.note_hand_edit(tree / "agents/bot")
    hist.flush(force=True)
    gone = hist.log()[0]
    assert sorted((f.path, f.status) for f in gone.files) == [
        ("agents/bot/relationship.md", "D"),
        ("agents/bot/topics/jokes.md", "D"),
    ]


def test_before_separates_an_unseen_hand_edit_from_memds_write(hist: History, tree: Path) -> None:
    vue = tree / "topics/vue.md"
    by_hand = TEMPLATE_VUE + "- typed by hand, not yet seen\n"
    write(tree, "topics/vue.md", by_hand)
    write(tree, "topics/vue.md", by_hand + "- use happy-dom <!-- memd id=m_9 -->\n")
    hist.record([vue], Cause.REMEMBER, "id=m_9", before={vue: by_hand})
    remember, hand, _ = hist.log()
    assert (remember.cause, hand.cause) == ("remember", "hand")
    diff = hist.show(remember.id).diffs[0].diff
    assert "+- use happy-dom" in diff and "typed by hand" not in diff.replace(" - typed", "")
    assert "+- typed by hand" in hist.show(hand.id).diffs[0].diff


def test_only_markdown_inside_the_tree_is_recorded(
    hist: History, tree: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# not memory\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.md").write_text("# elsewhere\n")
    os.symlink(outside, tree / "topics/linked.md")
    os.symlink(tmp_path / "elsewhere", tree / "linked-folder")
    write(tree, "topics/.vue.md.swp", "swap")
    write(tree, "topics/notes.md~", "backup")
    write(tree, "topics/diagram.png", "not markdown")
    index = tmp_path / "data" / "index.db"
    index.write_bytes(b"SQLite format 3\x00")
    hist.record(
        [
            outside,
            index,
            tree / "topics/linked.md",
            tree / "linked-folder/x.md",
            tree / "linked-folder",
            tree / "topics/.vue.md.swp",
            tree / "topics/notes.md~",
            tree / "topics/diagram.png",
            tree / ".." / "outside.md",
        ],
        Cause.IMPORT,
        "everything that is not memory",
    )
    hist.catch_up()
    assert _causes(hist) == ["baseline"]
    files = git(hist, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert sorted(files) == ["_core/preferences.md", "_core/profile.md", "topics/vue.md"]


def test_secrets_never_reach_any_object(hist: History, tree: Path, clock: Clock) -> None:
    text = (
        "# Keys\n\n## Work\n\n"
        f"- the deploy key is {SECRET}\n"
        f"- db: postgres://app:{PASSWORD}@db.internal/app\n"
        f"- <private>{PRIVATE}</private> and nothing else\n"
    )
    path = write(tree, "topics/keys.md", text)
    hist.record([path], Cause.REMEMBER, f"key {SECRET}")
    write(tree, "topics/keys.md", text + f"- token={SECRET[:-2]}ZZAA\n")
    hist.note_hand_edit(path)
    hist.flush(force=True)
    blobs = git(hist, "cat-file", "--batch-all-objects", "--batch")
    assert "topics/keys.md" in git(hist, "ls-tree", "-r", "--name-only", "HEAD")
    for secret in (SECRET, SECRET[:-2] + "ZZAA", PASSWORD, PRIVATE):
        assert secret not in blobs
    assert "[REDACTED:anthropic-key:" in blobs
    # As documented: the history holds the redacted text, so git sees the real file as modified.
    assert git(hist, "status", "--porcelain").strip() == "M topics/keys.md"


def test_catch_up_records_edits_made_while_memd_was_stopped(
    tree: Path, tmp_path: Path, clock: Clock
) -> None:
    h = History(tree, tmp_path / "h.git", clock=clock)
    h.flush()
    h.close()
    write(tree, "topics/vue.md", TEMPLATE_VUE + "- added while stopped\n")
    (tree / "_core/preferences.md").unlink()
    write(tree, "topics/new.md", "# New\n")
    h2 = History(tree, tmp_path / "h.git", clock=clock)
    h2.flush()
    [seen, _] = h2.log()
    assert seen.cause == "hand"
    assert sorted((f.path, f.status) for f in seen.files) == [
        ("_core/preferences.md", "D"),
        ("topics/new.md", "A"),
        ("topics/vue.md", "M"),
    ]
    assert h2.catch_up() == 0  # nothing new: the same state is not recorded twice


def test_without_git_a_write_goes_on_with_one_warning(
    tree: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    h = History(tree, tmp_path / "h.git", git=None)
    with caplog.at_level(logging.WARNING, logger="memd.history"):
        for n in range(3):
            write(tree, "_core/notes.md", f"- {n}\n")
            h.record([tree / "_core/notes.md"], Cause.REMEMBER, str(n))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    st = h.status()
    assert not st.ok and not st.enabled
    assert "git is not installed" in st.reason
    assert st.skipped == 3
    assert not (tmp_path / "h.git").exists()


def test_a_damaged_repository_is_set_aside_and_started_afresh(
    tree: Path, tmp_path: Path, clock: Clock
) -> None:
    gd = tmp_path / "h.git"
    h = History(tree, gd, clock=clock)
    h.flush()
    h.close()
    for obj in (gd / "objects").rglob("*"):
        if obj.is_file() and obj.parent.name != "info":
            obj.chmod(0o644)
            obj.write_bytes(b"garbage")
    h2 = History(tree, gd, clock=clock)
    write(tree, "_core/notes.md", "- after the damage\n")
    h2.record([tree / "_core/notes.md"], Cause.REMEMBER, "m_1")
    st = h2.status()
    assert st.ok, st.reason
    assert len(st.moved_aside) == 1 and Path(st.moved_aside[0]).is_dir()
    assert Path(st.moved_aside[0]).name.startswith("h.git.damaged-")
    # A fresh history starts from the tree as it is now (the write that found the damage is in
    # it), and records on from there.
    assert [c.cause for c in h2.log()] == ["baseline"]
    assert git(h2, "show", "HEAD:_core/notes.md") == "- after the damage\n"
    write(tree, "_core/notes.md", "- after the damage\n- and after\n")
    h2.record([tree / "_core/notes.md"], Cause.REMEMBER, "m_2")
    assert [c.cause for c in h2.log()] == ["remember", "baseline"]


def test_damage_found_while_recording_starts_a_new_history(hist: History, tree: Path) -> None:
    shutil.rmtree(hist.git_dir / "objects")
    write(tree, "_core/notes.md", "- noted\n")
    hist.record([tree / "_core/notes.md"], Cause.REMEMBER, "m_2")  # must not raise
    st = hist.status()
    assert st.moved_aside and st.ok
    assert [c.cause for c in hist.log()] == ["baseline"]
    assert "_core/notes.md" in git(hist, "ls-tree", "-r", "--name-only", "HEAD")
    write(tree, "_core/notes.md", "- noted\n- again\n")
    hist.record([tree / "_core/notes.md"], Cause.REMEMBER, "m_3")
    assert [c.cause for c in hist.log()] == ["remember", "baseline"]


def test_log_by_path_since_and_limit(hist: History, tree: Path, clock: Clock) -> None:
    t0 = clock.now
    for n in range(3):
        clock.advance(3600)
        write(tree, "topics/vue.md", TEMPLATE_VUE + f"- v{n}\n")
        hist.record([tree / "topics/vue.md"], Cause.EDIT, f"vue {n}")
        write(tree, "_core/profile.md", TEMPLATE_PROFILE + f"- p{n}\n")
        hist.record([tree / "_core/profile.md"], Cause.EDIT, f"profile {n}")
    assert [c.detail for c in hist.log("topics/vue.md")][:3] == ["vue 2", "vue 1", "vue 0"]
    assert [c.detail for c in hist.log(tree / "topics")][:1] == ["vue 2"]
    assert [c.detail for c in hist.log(limit=2)] == ["profile 2", "vue 2"]
    assert [c.detail for c in hist.log(since=t0 + 2 * 3600)] == [
        "profile 2",
        "vue 2",
        "profile 1",
        "vue 1",
    ]
    with pytest.raises(Exception, match="not inside the memory tree"):
        hist.log("/etc/passwd")


def test_show_gives_a_unified_diff_per_file(hist: History, tree: Path) -> None:
    write(tree, "topics/vue.md", TEMPLATE_VUE.replace("use vitest", "use vitest 3"))
    (tree / "_core/preferences.md").unlink()
    hist.record([tree / "topics/vue.md", tree / "_core/preferences.md"], Cause.EDIT, "two files")
    detail = hist.show(hist.log()[0].id)
    by_path = {d.path: d for d in detail.diffs}
    assert by_path["topics/vue.md"].status == "M"
    assert "-- use vitest\n+- use vitest 3\n" in by_path["topics/vue.md"].diff
    assert by_path["_core/preferences.md"].status == "D"
    assert by_path["_core/preferences.md"].diff.startswith(
        "--- a/_core/preferences.md\n+++ /dev/null\n"
    )
    assert detail.change.detail == "two files"


def test_an_unusable_data_folder_costs_one_warning_not_a_write(
    tree: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "data").write_text("a file where the data folder should be")
    h = History(tree, tmp_path / "data" / "history.git")
    with caplog.at_level(logging.WARNING, logger="memd.history"):
        for n in range(3):
            write(tree, "_core/notes.md", f"- {n}\n")
            h.record([tree / "_core/notes.md"], Cause.REMEMBER, str(n))
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    st = h.status()
    assert st.enabled and not st.ok and "cannot be used" in st.reason
    assert st.skipped == 3


def test_an_operation_of_the_door_records_its_writes_as_one_change(
    hist: History, tree: Path
) -> None:
    from memd.memory.files import MemoryFiles, TextEdit

    files = MemoryFiles([tree], hist)

    def put(text: str) -> TextEdit[None]:
        return TextEdit(lambda _current: (text, None))

    by_hand = TEMPLATE_VUE + "- typed by hand, not yet seen\n"
    write(tree, "topics/vue.md", by_hand)
    with files.operation(Cause.EXTRACT, trailers={"Memd-Run": "r_7"}) as op:
        files.edit(tree / "topics/vue.md", put(by_hand + "- pinia <!-- memd id=m_1 -->\n"), op)
        files.edit(
            tree / "topics/vue.md", put(by_hand + "- pinia <!-- memd id=m_1 hits=2 -->\n"), op
        )
        files.edit(tree / "topics/go.md", put("# Go\n"), op)
        files.delete(tree / "_core/preferences.md", None, op)
        op.detail = "run r_7: 2 added"
    run, hand, _ = hist.log()
    assert (run.cause, run.detail, run.run) == ("extract", "run r_7: 2 added", "r_7")
    assert sorted((f.path, f.status) for f in run.files) == [
        ("_core/preferences.md", "D"),
        ("topics/go.md", "A"),
        ("topics/vue.md", "M"),
    ]
    # The hand edit the first write found is its own change, so undoing the run keeps it.
    assert hand.cause == "hand"
    hist.apply_undo(hist.undo(run.id))
    assert (tree / "topics/vue.md").read_text() == by_hand
    assert not (tree / "topics/go.md").exists()
    assert (tree / "_core/preferences.md").exists()


def test_journal_writes_are_coalesced_with_their_own_cause(
    hist: History, tree: Path, clock: Clock
) -> None:
    day = tree / "journal/2026-11-22.md"
    for n in range(3):
        write(
            tree,
            "journal/2026-11-22.md",
            "# 2026-11-22\n\n" + "".join(f"- turn {i}\n" for i in range(n + 1)),
        )
        hist.note_coalesced(day, Cause.JOURNAL)
        hist.note_hand_edit(day)  # the watcher sees memd's journal write as well
        clock.advance(5)
    clock.advance(60)
    assert hist.flush() == 1
    entry = hist.log()[0]
    assert (entry.cause, entry.detail, entry.author) == ("journal", "journal/2026-11-22.md", "memd")
    assert git(hist, "show", "HEAD:journal/2026-11-22.md").endswith("- turn 2\n")
