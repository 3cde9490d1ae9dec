"""Test helpers: memd's item edits through a door to the memory files of a test folder."""

from __future__ import annotations

from pathlib import Path

from memd.history import Cause
from memd.memory import edit
from memd.memory.edit import Change, EditedItem, Match
from memd.memory.files import MemoryFiles


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
