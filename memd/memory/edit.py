"""Edits of memory files memd makes itself: append an item, remove items, change item metadata.

Every write is atomic (temp file + rename) so an editor or the watcher never sees half a file,
and memd only ever touches the lines it is asked to: the rest of a hand-edited file is kept
byte for byte.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memd.core.errors import SourceError
from memd.core.fsio import atomic_write
from memd.core.models import ParsedFile
from memd.memory.parse import format_meta, item_prefix, parse_markdown, split_item


@dataclass(frozen=True, slots=True)
class EditedItem:
    """An item line memd wrote or removed."""

    path: str
    line: int
    text: str
    meta: dict[str, str]


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def file_lock(path: Path) -> threading.Lock:
    """The lock serialising memd's own read-modify-write edits of one file in this process."""
    key = os.path.abspath(path)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def read_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return path.read_text(encoding="utf-8").split("\n")


def append_item(
    path: Path, section: str, text: str, meta: dict[str, str], *, title: str = ""
) -> EditedItem:
    """Append `- text <!-- memd … -->` at the end of `## section` (created when missing)."""
    with file_lock(path):
        return _append_item(path, section, text, meta, title)


def _append_item(
    path: Path, section: str, text: str, meta: dict[str, str], title: str
) -> EditedItem:
    text = " ".join(text.split())
    lines = read_lines(path)
    if not lines or lines == [""]:
        lines = [f"# {title or path.stem.replace('-', ' ').title()}", ""]
    span = _find_section(_parse(lines), section)
    if span is None:
        while lines and lines[-1] == "":
            lines.pop()
        lines += ["", f"## {section}", ""]
        span = (len(lines) - 2, len(lines))
    start, end = span
    # Insert after the last non-blank line of the section so items stay together.
    insert_at = end
    while insert_at > start + 1 and lines[insert_at - 1].strip() == "":
        insert_at -= 1
    line = f"- {text} {format_meta(meta)}" if meta else f"- {text}"
    # A blank line before the item ends an HTML block it would otherwise continue.
    for before in ([], [""]):
        new = [*lines[:insert_at], *before, line, *lines[insert_at:]]
        at = insert_at + len(before)
        if insert_at == end < len(lines):  # keep a blank line before the next heading
            new.insert(at + 1, "")
        if new[-1] != "":
            new.append("")
        if at + 1 in _item_lines(_parse(new)):
            atomic_write(path, "\n".join(new))
            return EditedItem(str(path), at + 1, text, meta)
    raise SourceError(
        f"cannot add to {path}: line {insert_at + 1}, where section {section!r} ends, is inside"
        " a code block or HTML block that is never closed, so a list item there would not be one",
        hint="close the code fence (``` or ~~~) or the HTML block in that file",
    )


def remove_items(path: Path, match: Callable[[str, dict[str, str]], bool]) -> list[EditedItem]:
    """Remove every list item for which `match(text, meta)` is true; return what was removed."""
    with file_lock(path):
        return _remove_items(path, match)


def _remove_items(path: Path, match: Callable[[str, dict[str, str]], bool]) -> list[EditedItem]:
    lines = read_lines(path)
    item_lines = _item_lines(_parse(lines))
    kept: list[str] = []
    removed: list[EditedItem] = []
    for i, line in enumerate(lines):
        it = split_item(line) if i + 1 in item_lines else None
        if it is not None and match(it[0], it[1]):
            removed.append(EditedItem(str(path), i + 1, it[0], it[1]))
            continue
        kept.append(line)
    if removed:
        atomic_write(path, "\n".join(kept))
    return removed


def update_items(
    path: Path,
    match: Callable[[str, dict[str, str]], bool],
    change: Callable[[str, dict[str, str]], tuple[str, dict[str, str]]],
) -> list[EditedItem]:
    """Rewrite matching items in place with `change(text, meta) -> (text, meta)`."""
    with file_lock(path):
        return _update_items(path, match, change)


def _update_items(
    path: Path,
    match: Callable[[str, dict[str, str]], bool],
    change: Callable[[str, dict[str, str]], tuple[str, dict[str, str]]],
) -> list[EditedItem]:
    lines = read_lines(path)
    item_lines = _item_lines(_parse(lines))
    changed: list[EditedItem] = []
    for i, line in enumerate(lines):
        it = split_item(line) if i + 1 in item_lines else None
        if it is None or not match(it[0], it[1]):
            continue
        text, meta = change(it[0], dict(it[1]))
        # The marker and a task box stay as they were: `1.` or `- [x]` keep their meaning.
        prefix = item_prefix(line)
        lines[i] = f"{prefix}{text} {format_meta(meta)}" if meta else f"{prefix}{text}"
        changed.append(EditedItem(str(path), i + 1, text, meta))
    if changed:
        atomic_write(path, "\n".join(lines))
    return changed


def _parse(lines: list[str]) -> ParsedFile:
    return parse_markdown("\n".join(lines))


def _item_lines(parsed: ParsedFile) -> set[int]:
    """1-based numbers of the lines that are list items with text."""
    return {it.line for s in parsed.sections for it in s.items}


def _find_section(parsed: ParsedFile, section: str) -> tuple[int, int] | None:
    """0-based [heading line, end) of the first level-2 section called `section`."""
    want = section.strip().lower()
    for s in parsed.sections:
        if s.level == 2 and s.heading.lower() == want:
            return s.start_line - 1, s.end_line
    return None
