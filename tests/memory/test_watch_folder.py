"""An edit re-reads the file edited, not the folder it sits in.

Every change inside a folder also raises a "folder modified" event for the folder itself. If the
memory watcher let that event through, each edit in `topics/` would rescan every file there
(seconds in a folder of 10,000 notes; `bench/index_bench.py --case big-folder` measures it).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from memd.core.watcher import Watcher
from memd.db.connection import connect
from memd.memory import repo as docs
from memd.memory.api import _accept_markdown
from tests.utils import DaemonProcess, wait_for


def _notes(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        p = folder / f"note-{i:03d}.md"
        p.write_text(f"# Note {i}\n\n## Body\n- plain line {i}\n", encoding="utf-8")
        out.append(p)
    return out


def _indexed_mtime(daemon: DaemonProcess, path: Path) -> int:
    conn = connect(daemon.home / "data" / "index.db", readonly=True)
    try:
        return docs.manifest_of(conn, [str(path)])[str(path)][0]
    finally:
        conn.close()


def test_an_edit_in_a_big_folder_does_not_reread_its_neighbours(home: Path) -> None:
    notes = _notes(home / "memory" / "topics", 60)
    d = DaemonProcess(home).start()
    try:
        edited, neighbour = notes[0], notes[1]
        before = _indexed_mtime(d, neighbour)
        # A new mtime without an event memd reacts to (attribute changes are ignored): only a
        # rescan of the folder would bring it into the index.
        later = neighbour.stat().st_mtime_ns + 5_000_000_000
        os.utime(neighbour, ns=(later, later))
        with open(edited, "a", encoding="utf-8") as fh:
            fh.write("- quillwort grows in cold lakes\n")
        wait_for(lambda: str(edited) in d.search_paths("quillwort"), 10)
        tmp = edited.with_name(edited.name + ".tmp")  # an editor's save: temp file + rename
        tmp.write_text(edited.read_text() + "- bladderwort floats\n", encoding="utf-8")
        os.replace(tmp, edited)
        wait_for(lambda: str(edited) in d.search_paths("bladderwort"), 10)
        assert _indexed_mtime(d, neighbour) == before
    finally:
        d.stop()


def test_the_memory_watcher_hands_over_only_memory_files(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    notes = _notes(root / "topics", 3)
    batches: list[list[str]] = []
    w = Watcher(batches.append, accept=_accept_markdown, debounce_s=0.05, name="t")
    w.watch(root)
    w.start()
    try:
        time.sleep(0.2)
        with open(notes[0], "a", encoding="utf-8") as fh:
            fh.write("- in place\n")
        tmp = notes[1].with_name(notes[1].name + ".tmp")
        tmp.write_text("# Note\n\n- replaced\n", encoding="utf-8")
        os.replace(tmp, notes[1])
        wait_for(lambda: {str(notes[0]), str(notes[1])} <= {p for b in batches for p in b})
        (root / "topics" / "kitchen").mkdir()  # a new folder is still looked into
        wait_for(lambda: any(str(root / "topics" / "kitchen") in b for b in batches))
    finally:
        w.stop()
    seen = {p for b in batches for p in b}
    assert str(root / "topics") not in seen
    assert str(tmp) not in seen
