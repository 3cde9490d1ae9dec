"""A forget against an editor writing in place the copy it read a moment before: the forgotten
item never comes back. The editor is a process of its own (memd sees which programs hold a file
open for writing), its save stopped half-way and finished at the exact moment, through the
door's own check for programs writing the file (`door.writers`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core import writers as writers_module
from memd.history import Cause
from memd.memory.files import MemoryFiles, TextEdit
from memd.memory.files import door as door_module
from tests.doors import append_item, door, remove_items

# Writes its first argument's bytes in place in two parts: up to the offset given, then (once a
# line comes on stdin) the rest, and closes the file.
EDITOR = """
import os, sys
path, data, cut = sys.argv[1], open(sys.argv[2], "rb").read(), int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
os.write(fd, data[:cut])
print("half", flush=True)
sys.stdin.readline()
os.write(fd, data[cut:])
os.close(fd)
"""


class Editor:
    """An editor process saving `data` in place, stopped after its first `cut` bytes."""

    def __init__(self, path: Path, data: bytes, cut: int) -> None:
        buf = path.with_name(".editor-buffer")
        buf.write_bytes(data)
        self.p = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(buf), str(cut)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.p.stdout is not None and self.p.stdout.readline().strip() == "half"
        self.buf = buf

    def finish(self) -> None:
        if self.p.poll() is None:
            assert self.p.stdin is not None
            self.p.stdin.write("go\n")
            self.p.stdin.flush()
            assert self.p.wait(10) == 0
        self.buf.unlink(missing_ok=True)


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[tuple[MemoryFiles, Path]]:
    root = tmp_path / "tree"
    root.mkdir()
    p = root / "notes.md"
    p.write_text("# Notes\n\n## Notes\n\n" + "".join(f"- hand line {i}\n" for i in range(20)))
    yield door(root), p


def nothing(files: MemoryFiles, path: Path) -> None:
    """What the watcher does after a save: memd's guarded changes are checked again."""
    files.edit(path, TextEdit(lambda _cur: (None, None), lambda _r: []), Cause.EDIT)


def test_a_forget_holds_when_the_save_finishes_between_the_read_and_the_writers_check(
    notes: tuple[MemoryFiles, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    files, p = notes
    append_item(p, "Notes", "first item", {"id": "m_00000001"}, files=files)
    append_item(p, "Notes", "second item", {"id": "m_00000002"}, files=files)
    stale = p.read_bytes()  # the editor's copy: both items
    remove_items(p, lambda _t, m: m.get("id") == "m_00000001", files=files)
    remove_items(p, lambda _t, m: m.get("id") == "m_00000002", files=files)
    assert b"m_0000000" not in p.read_bytes()
    # The editor writes its copy back in place; memd reads the file while only the part up to
    # the last item is written (the first item there, the second not yet) ...
    editor = Editor(p, stale, stale.index(b"- second item"))
    real = writers_module.writers

    def writers(path: Path) -> list[str] | None:
        editor.finish()  # ... and the save is done and closed before memd asks who writes it
        return real(path)

    monkeypatch.setattr(door_module, "writers", writers)
    try:
        nothing(files, p)  # the watcher's check after the save
    finally:
        editor.finish()
    monkeypatch.setattr(door_module, "writers", real)
    nothing(files, p)  # and after the save as it ended
    text = p.read_text()
    assert "m_00000001" not in text and "m_00000002" not in text, text
    assert "- hand line 19\n" in text


def test_a_save_paused_longer_than_memd_waits_for_a_cut_file_is_still_waited_for(
    notes: tuple[MemoryFiles, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a loaded machine an editor's pause between its writes can outlast the time after which
    # memd believes a file cut short is simply short: the index then read the cut, and every
    # item after it was gone from the index for a moment (a forget by id of one: "no memory").
    from memd.memory.files import settle

    files, p = notes
    append_item(p, "Notes", "first item", {"id": "m_00000001"}, files=files)
    full = p.read_bytes()
    editor = Editor(p, full, full.index(b"- hand line 10"))
    past = os.stat(p).st_mtime - 1.0  # cut, and still for longer than memd waits
    os.utime(p, (past, past))
    real = writers_module.writers

    def writers(path: Path) -> list[str] | None:
        who = real(path)  # the editor holds it: memd keeps waiting ...
        editor.finish()  # ... and the save ends
        return who

    monkeypatch.setattr(settle, "writers", writers, raising=False)
    try:
        snap = files.read(p, indexed=len(full))  # as the indexer reads a file
    finally:
        editor.finish()
    assert snap.data == full
