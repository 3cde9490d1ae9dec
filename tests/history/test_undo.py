"""Undo: the reverse of a change's own hunks applied to the files as they are now."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core.errors import HistoryError, UndoConflict
from memd.history import Cause, History
from tests.history.conftest import git, write

NOTES = "# Notes\n\n## Notes\n\n- always use pnpm <!-- memd id=m_1 -->\n- prefer small commits\n"
KEY = "sk-ant-api03-" + "k9Z" * 31 + "AA"
OLD_KEY = "sk-ant-api03-" + "p4W" * 31 + "AA"


def _record(h: History, tree: Path, rel: str, text: str | None, cause: Cause, detail: str) -> str:
    path = tree / rel
    if text is None:
        path.unlink()
    else:
        write(tree, rel, text)
    h.record([path], cause, detail)
    return h.log()[0].id


def _undo(h: History, change: str) -> None:
    h.apply_undo(h.undo(change))


@pytest.fixture
def notes(hist: History, tree: Path) -> Path:
    _record(hist, tree, "_core/notes.md", NOTES, Cause.IMPORT, "notes")
    return tree / "_core/notes.md"


def test_undo_an_added_item_keeps_later_edits(hist: History, tree: Path, notes: Path) -> None:
    added = _record(
        hist, tree, "_core/notes.md", NOTES + "- deploy on fridays <!-- memd id=m_2 -->\n",
        Cause.REMEMBER, "id=m_2",
    )  # fmt: skip
    # Later: a hand edit above it and an item appended after it.
    later = notes.read_text().replace("prefer small", "prefer tiny") + "- review daily\n"
    write(tree, "_core/notes.md", later)
    hist.note_hand_edit(notes)
    hist.flush(force=True)
    _undo(hist, added)
    assert notes.read_text() == later.replace("- deploy on fridays <!-- memd id=m_2 -->\n", "")
    undo = hist.log()[0]
    assert (undo.cause, undo.undoes) == ("undo", added)
    assert [f.path for f in undo.files] == ["_core/notes.md"]


def test_undo_a_removed_item_puts_it_back_in_place(hist: History, tree: Path, notes: Path) -> None:
    forgot = _record(
        hist, tree, "_core/notes.md", NOTES.replace("- always use pnpm <!-- memd id=m_1 -->\n", ""),
        Cause.FORGET, "id=m_1",
    )  # fmt: skip
    write(tree, "_core/notes.md", notes.read_text() + "- later item\n")
    _undo(hist, forgot)
    assert notes.read_text() == NOTES + "- later item\n"


def test_undo_an_edited_text(hist: History, tree: Path, notes: Path) -> None:
    edited = _record(
        hist, tree, "_core/notes.md", NOTES.replace("always use pnpm", "always use bun"),
        Cause.EDIT, "m_1 text",
    )  # fmt: skip
    _undo(hist, edited)
    assert notes.read_text() == NOTES


def test_undo_a_created_file_deletes_it(hist: History, tree: Path) -> None:
    created = _record(hist, tree, "topics/go.md", "# Go\n\n- gofmt\n", Cause.REMEMBER, "m_3")
    _undo(hist, created)
    assert not (tree / "topics/go.md").exists()
    assert [(f.path, f.status) for f in hist.log()[0].files] == [("topics/go.md", "D")]


def test_undo_a_created_file_keeps_what_was_added_later(hist: History, tree: Path) -> None:
    created = _record(hist, tree, "topics/go.md", "# Go\n\n- gofmt\n", Cause.REMEMBER, "m_3")
    write(tree, "topics/go.md", "# Go\n\n- gofmt\n- my own line\n")
    _undo(hist, created)
    assert (tree / "topics/go.md").read_text() == "- my own line\n"


def test_undo_a_deleted_file_recreates_it(hist: History, tree: Path) -> None:
    original = (tree / "topics/vue.md").read_text()
    deleted = _record(hist, tree, "topics/vue.md", None, Cause.ARCHIVE, "moved out")
    _undo(hist, deleted)
    assert (tree / "topics/vue.md").read_text() == original


def test_undo_an_extraction_run_removes_exactly_what_it_wrote(hist: History, tree: Path) -> None:
    profile0 = (tree / "_core/profile.md").read_text()
    vue0 = (tree / "topics/vue.md").read_text()
    write(tree, "_core/profile.md", profile0 + "- works at Acme <!-- memd id=m_7 src=run:r_1 -->\n")
    write(
        tree,
        "topics/vue.md",
        vue0.replace("- use vitest\n", "- use vitest\n- pinia for state <!-- memd id=m_8 -->\n"),
    )
    write(tree, "topics/rust.md", "# Rust\n\n- cargo nextest <!-- memd id=m_9 -->\n")
    paths = [tree / p for p in ("_core/profile.md", "topics/vue.md", "topics/rust.md")]
    hist.record(paths, Cause.EXTRACT, "run r_1: 3 added")
    run = hist.log()[0].id
    # Someone keeps working on two of those files afterwards.
    write(
        tree,
        "_core/profile.md",
        "# User Profile\n\n## Basic Info\n\n- lives in Lyon\n- works at Acme <!-- memd id=m_7 src=run:r_1 -->\n- has a cat\n",
    )
    write(tree, "topics/vue.md", (tree / "topics/vue.md").read_text().replace("# Vue", "# Vue.js"))
    hist.record(paths[:2], Cause.EDIT, "later")
    plan = hist.undo(run)
    assert sorted(f.rel for f in plan.files) == [
        "_core/profile.md",
        "topics/rust.md",
        "topics/vue.md",
    ]
    hist.apply_undo(plan)
    assert (tree / "_core/profile.md").read_text() == profile0 + "- has a cat\n"
    assert (tree / "topics/vue.md").read_text() == vue0.replace("# Vue", "# Vue.js")
    assert not (tree / "topics/rust.md").exists()
    assert len(hist.log()[0].files) == 3


def test_undo_is_refused_when_a_later_change_touched_the_same_lines(
    hist: History, tree: Path, notes: Path
) -> None:
    added = _record(
        hist, tree, "_core/notes.md", NOTES + "- deploy on fridays\n", Cause.REMEMBER, "m_2"
    )
    later = _record(
        hist, tree, "_core/notes.md", NOTES + "- deploy on fridays, never on mondays\n",
        Cause.EDIT, "page edit",
    )  # fmt: skip
    before = notes.read_text()
    with pytest.raises(UndoConflict) as err:
        hist.undo(added)
    message = str(err.value)
    assert "_core/notes.md" in message and "line 7" in message and "edited since" in message
    assert f"by {later} (edit," in message  # the change that edited the lines, by id
    assert err.value.hint == f"undo {later} first, or edit the file by hand"
    assert notes.read_text() == before
    assert hist.log()[0].id == later  # nothing recorded


def test_undo_of_a_file_deleted_since_is_refused(hist: History, tree: Path, notes: Path) -> None:
    edited = _record(hist, tree, "_core/notes.md", NOTES + "- x\n", Cause.EDIT, "x")
    notes.unlink()
    with pytest.raises(UndoConflict, match="_core/notes.md was deleted after this change"):
        hist.undo(edited)


def test_apply_refuses_a_file_changed_after_planning(
    hist: History, tree: Path, notes: Path
) -> None:
    added = _record(hist, tree, "_core/notes.md", NOTES + "- y\n", Cause.REMEMBER, "y")
    plan = hist.undo(added)
    write(tree, "_core/notes.md", NOTES + "- y\n- typed meanwhile\n")
    with pytest.raises(UndoConflict, match="changed after the undo was planned"):
        hist.apply_undo(plan)
    assert notes.read_text() == NOTES + "- y\n- typed meanwhile\n"


def test_undo_of_an_undo_redoes(hist: History, tree: Path, notes: Path) -> None:
    added = _record(hist, tree, "_core/notes.md", NOTES + "- z\n", Cause.REMEMBER, "z")
    _undo(hist, added)
    _undo(hist, hist.log()[0].id)
    assert notes.read_text() == NOTES + "- z\n"


def test_the_baseline_cannot_be_undone(hist: History) -> None:
    with pytest.raises(HistoryError, match="where the history starts"):
        hist.undo(hist.log()[-1].id)


def test_undo_never_writes_a_placeholder_over_a_real_secret(hist: History, tree: Path) -> None:
    text = f"# Keys\n\n- deploy key {KEY}\n- rotate monthly\n"
    _record(hist, tree, "topics/keys.md", text, Cause.IMPORT, "keys")
    edited = _record(
        hist,
        tree,
        "topics/keys.md",
        text.replace("rotate monthly", "rotate weekly"),
        Cause.EDIT,
        "e",
    )
    # A hand edit on the line holding the secret, and its undo: the secret comes back real.
    hand_text = text.replace("rotate monthly", "rotate weekly").replace(
        "deploy key", "prod deploy key"
    )
    write(tree, "topics/keys.md", hand_text)
    hist.note_hand_edit(tree / "topics/keys.md")
    hist.flush(force=True)
    hand = hist.log()[0].id
    _undo(hist, hand)
    assert (tree / "topics/keys.md").read_text() == text.replace("rotate monthly", "rotate weekly")
    _undo(hist, edited)
    assert (tree / "topics/keys.md").read_text() == text
    assert KEY not in git(hist, "cat-file", "--batch-all-objects", "--batch")


def test_undo_refuses_to_put_a_placeholder_where_another_secret_is(
    hist: History, tree: Path
) -> None:
    _record(hist, tree, "topics/keys.md", f"- key {OLD_KEY}\n", Cause.IMPORT, "old key")
    rotated = _record(hist, tree, "topics/keys.md", f"- key {KEY}\n", Cause.EDIT, "rotated")
    with pytest.raises(UndoConflict, match="placeholder where a secret is now"):
        hist.undo(rotated)
    assert (tree / "topics/keys.md").read_text() == f"- key {KEY}\n"


def test_a_removed_secret_comes_back_as_its_placeholder_with_a_warning(
    hist: History, tree: Path
) -> None:
    _record(hist, tree, "topics/keys.md", f"# Keys\n\n- key {KEY}\n", Cause.IMPORT, "keys")
    removed = _record(hist, tree, "topics/keys.md", "# Keys\n\n", Cause.FORGET, "the key")
    plan = hist.undo(removed)
    assert plan.warnings and "keeps only redacted" in plan.warnings[0]
    hist.apply_undo(plan)
    assert (
        (tree / "topics/keys.md").read_text().startswith("# Keys\n\n- key [REDACTED:anthropic-key:")
    )


def test_undo_a_run_recorded_in_several_changes(hist: History, tree: Path) -> None:
    vue0 = (tree / "topics/vue.md").read_text()
    run = {"Memd-Run": "extract-20261122-0930"}
    # First batch of the run: one new item in vue.md, one new file.
    write(tree, "topics/vue.md", vue0 + "- pinia for state <!-- memd id=m_1 -->\n")
    write(tree, "topics/go.md", "# Go\n\n- gofmt <!-- memd id=m_2 -->\n")
    hist.record(
        [tree / "topics/vue.md", tree / "topics/go.md"], Cause.EXTRACT, "run 1/2", trailers=run
    )
    # Between the batches (the run waits on the model) someone edits vue.md by hand.
    by_hand = (tree / "topics/vue.md").read_text().replace("# Vue", "# Vue 3")
    write(tree, "topics/vue.md", by_hand)
    # Second batch: the run marks the first item superseded and adds another.
    second = by_hand.replace(
        "<!-- memd id=m_1 -->", "<!-- memd id=m_1 superseded=2026-11-22 by=m_3 -->"
    )
    second += "- pinia setup stores <!-- memd id=m_3 -->\n"
    write(tree, "topics/vue.md", second)
    hist.record(
        [tree / "topics/vue.md"],
        Cause.EXTRACT,
        "run 2/2",
        before={tree / "topics/vue.md": by_hand},
        trailers=run,
    )
    changes = hist.run_changes("extract-20261122-0930")
    assert [c.detail for c in changes] == ["run 2/2", "run 1/2"]
    assert all(c.run == "extract-20261122-0930" for c in changes)
    plan = hist.undo([c.id for c in changes])
    assert [c.id for c in plan.changes] == [c.id for c in changes]
    hist.apply_undo(plan)
    assert (tree / "topics/vue.md").read_text() == vue0.replace("# Vue", "# Vue 3")
    assert not (tree / "topics/go.md").exists()
    undo = hist.log()[0]
    assert undo.undoes == ",".join(c.id for c in changes)


def test_changes_are_marked_undone_by_the_undos_after_them(
    hist: History, tree: Path, notes: Path
) -> None:
    # `show` and `log` read only the undos recorded after the change (or the oldest listed):
    # the marks are those of the whole history, through an undo of an undo.
    a = _record(hist, tree, "_core/notes.md", NOTES + "- a\n", Cause.REMEMBER, "a")
    b = _record(hist, tree, "_core/notes.md", NOTES + "- a\n- b\n", Cause.REMEMBER, "b")
    _undo(hist, a)
    u1 = hist.log()[0].id
    _undo(hist, u1)  # a is back
    u2 = hist.log()[0].id
    _undo(hist, b)
    u3 = hist.log()[0].id
    marks = {a: "", b: u3, u1: u2, u2: "", u3: ""}
    assert {c.id: c.undone_by for c in hist.log(limit=0) if c.id in marks} == marks
    for change, by in marks.items():
        assert hist.show(change).change.undone_by == by
        assert hist.get(change).id == change
    for n in range(1, 6):  # the oldest listed is each change in turn
        assert {c.id: c.undone_by for c in hist.log(limit=n)} == {
            c: marks[c] for c in [u3, u2, u1, b, a][:n]
        }
    assert hist.show(hist.show(b).change.commit[:10]).change.undone_by == u3  # by commit id
