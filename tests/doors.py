"""Test helpers: memd's item edits through a door to the memory files of a test folder."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from memd.history import Cause
from memd.memory import edit
from memd.memory.edit import Change, EditedItem, Match
from memd.memory.files import MemoryFiles
from tests.utils import wait_for


def door(*roots: Path) -> MemoryFiles:
    """A door to the memory files below `roots` (no history), its guard on as in the daemon."""
    files = MemoryFiles(list(roots))
    files.watching(True)
    return files


def append_item(
    path: Path,
    section: str,
    text: str,
    meta: dict[str, str],
    *,
    files: MemoryFiles | None = None,
    title: str = "",
    dedupe: bool = False,
) -> EditedItem:
    """`edit.add_item` written through `files` (a door to `path`'s folder when not given)."""
    files = files or MemoryFiles([path.parent])
    change = edit.add_item(path, section, text, meta, title=title, dedupe=dedupe)
    return files.edit(path, change, Cause.REMEMBER).result


def remove_items(path: Path, match: Match, *, files: MemoryFiles | None = None) -> list[EditedItem]:
    files = files or MemoryFiles([path.parent])
    return files.edit(path, edit.remove_items(path, match), Cause.FORGET).result


def update_items(
    path: Path, match: Match, change: Change, *, files: MemoryFiles | None = None
) -> list[EditedItem]:
    files = files or MemoryFiles([path.parent])
    return files.edit(path, edit.update_items(path, match, change), Cause.EDIT).result


def lease_waited_on() -> bool:
    """Whether an open of a file this process holds a lease on waits for it (/proc/locks): the
    door holds leases on the file it read and on its new version while it swaps them."""
    pid = str(os.getpid())
    try:
        with open("/proc/locks", encoding="ascii") as fh:
            return any(
                (f := line.split())[1:3] == ["LEASE", "BREAKING"] and f[4] == pid for line in fh
            )
    except OSError:
        return False


def editor_acts(action: Callable[[], None]) -> threading.Thread:
    """An editor's `action` in a thread of its own, returned once it is done or waits for a
    lease the door holds (its open then goes on when the door lets go: join the thread)."""
    done = threading.Event()

    def run() -> None:
        try:
            action()
        finally:
            done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    wait_for(lambda: done.is_set() or lease_waited_on(), 10, 0.001)
    return t
