"""The moment memd's new version stands at a memory file's path before the door knows it may
stay: an editor's open in that moment, made to happen on purpose (the editor's actions run in
threads of their own at the exact moment, through the door's `Renamer`, and are waited for
until done or waiting for the door's lease: `tests.doors.editor_acts`)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memd.history import Cause
from memd.memory.files import MemoryFiles, TextEdit
from tests.doors import editor_acts, lease_waited_on
from tests.utils import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux leases")


def put_first(line: str) -> Callable[[str | None], tuple[str | None, None]]:
    def edit(current: str | None) -> tuple[str | None, None]:
        return line + "\n" + (current or ""), None

    return edit


def around_first_swap(
    monkeypatch: pytest.MonkeyPatch,
    files: MemoryFiles,
    before: Callable[[], None],
    after: Callable[[], None],
) -> None:
    """`before` runs just before the door's first atomic swap (its check done), `after` right
    after it (memd's version at the path, the door not yet told how the swap went)."""
    real = files.renamer.exchange
    calls: list[int] = []

    def exchange(a: Path, b: Path) -> bool:
        calls.append(1)
        if len(calls) > 1:
            return real(a, b)
        before()
        swapped = real(a, b)
        after()
        return swapped

    monkeypatch.setattr(files.renamer, "exchange", exchange)


def test_an_editor_reading_right_after_its_save_never_gets_memds_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editor saves in place right after memd's check, reads the file at once and saves what
    # it read again. memd's version was built on the read before the first save: had the editor
    # read it in the moment it stood at the path (before memd put the save back), its second
    # save would write its first away.
    p = tmp_path / "notes.md"
    p.write_text("# Notes\n- one\n")
    buffer = p.read_text()
    files = MemoryFiles([tmp_path])
    has_read = threading.Event()
    threads: list[threading.Thread] = []

    def first_save() -> None:
        with open(p, "w") as fh:  # in place: truncate and write
            fh.write(buffer + "- first save\n")

    def read_and_save_again() -> None:
        threads[0].join(10)  # the editor does one thing after the other
        text = p.read_text()
        has_read.set()
        with open(p, "w") as fh:
            fh.write(text + "- second save\n")

    def after() -> None:  # memd's version at the path: the editor reads now
        threads.append(threading.Thread(target=read_and_save_again, daemon=True))
        threads[-1].start()
        wait_for(lambda: has_read.is_set() or lease_waited_on(), 10, 0.001)

    around_first_swap(monkeypatch, files, lambda: threads.append(editor_acts(first_save)), after)
    files.edit(p, TextEdit(put_first("<!-- top -->")), Cause.EDIT)
    for t in threads:
        t.join(10)
    text = p.read_text()
    assert "- first save\n" in text and "- second save\n" in text, text


def test_a_reader_in_that_moment_gets_the_version_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editor saves by rename right after memd's check (a rename is not seen by a lease):
    # memd's swap takes the editor's file away and puts it back. A program that opens the file
    # in the moment memd's version stands there reads the editor's version, not memd's.
    p = tmp_path / "notes.md"
    p.write_text("# Notes\n- one\n")
    files = MemoryFiles([tmp_path])
    saved = "# Notes\n- one\n- typed by hand\n"
    got: list[str] = []

    def save_by_rename() -> None:
        tmp = p.with_name(".notes.md.editor")
        tmp.write_text(saved)
        os.replace(tmp, p)

    threads: list[threading.Thread] = []
    around_first_swap(monkeypatch, files, save_by_rename,
                      lambda: threads.append(editor_acts(lambda: got.append(p.read_text()))))  # fmt: skip
    files.edit(p, TextEdit(put_first("<!-- top -->")), Cause.EDIT)
    threads[0].join(10)
    assert got == [saved]
    assert p.read_text() == "<!-- top -->\n" + saved  # the edit, applied again on the save
    assert [q.name for q in tmp_path.iterdir() if q.name.startswith((".notes", "notes"))] == [
        "notes.md"
    ]


def test_a_save_by_rename_in_that_moment_stays_and_the_one_before_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two saves by rename: one right after memd's check (memd must put it back), the next in
    # the moment memd's version stands at the path. The newest stays at the path (memd's edit
    # applied on it), the one before is kept beside it: neither is deleted.
    folder = tmp_path / "tree"
    folder.mkdir()
    p = folder / "notes.md"
    p.write_text("# Notes\n- one\n")
    files = MemoryFiles([folder])

    def save_by_rename(text: str) -> Callable[[], None]:
        def save() -> None:
            tmp = p.with_name(".notes.md.editor")
            tmp.write_text(text)
            os.replace(tmp, p)

        return save

    first, second = "# Notes\n- one\n- first save\n", "# Notes\n- one\n- second save\n"
    around_first_swap(monkeypatch, files, save_by_rename(first), save_by_rename(second))
    files.edit(p, TextEdit(put_first("<!-- top -->")), Cause.EDIT)
    assert p.read_text() == "<!-- top -->\n" + second
    kept = [q.read_text() for q in folder.iterdir() if ".kept-" in q.name]
    assert kept == [first]
