"""Edits of memory files memd makes itself: add an item, remove items, change items.

Each edit is a `TextEdit`: a pure function of the file's text, written through the door
(`MemoryFiles.edit`: never over a change memd has not read; appends that only add lines are
appended, not rewritten), with the item-level changes the write guard can apply again if an
editor writes back an older copy of the file. memd only touches the lines it is asked to: the
rest of a hand-edited file is kept byte for byte::

    with files.operation(Cause.REMEMBER) as op:
        item = files.edit(path, add_item(path, "Notes", text, meta), op).result
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memd.core.errors import EditConflict, InvalidParams, NotFound
from memd.core.redact import redact
from memd.memory.files import MemoryFiles, Operation, TextEdit
from memd.memory.files.guard import AddOp, Op, RemoveOp, SetOp
from memd.memory.items import (
    ItemAt,
    bumped,
    check_item_text,
    clean_text,
    heading_problem,
    insert_lines,
    item_body,
    item_line,
    items_of,
    same_item,
)
from memd.memory.parse import item_prefix, parse_markdown

Match = Callable[[str, dict[str, str]], bool]
Change = Callable[[str, dict[str, str]], tuple[str, dict[str, str]]]


@dataclass(frozen=True, slots=True)
class EditedItem:
    """An item line memd wrote, changed or removed."""

    path: str
    line: int
    text: str
    meta: dict[str, str]
    existed: bool = False  # an add found the same item already there (and bumped its hits)
    before: str = ""  # a changed item: its line's body before the change


def _set(c: EditedItem) -> SetOp:
    """The guard's record of a changed item: its line now, and before."""
    return SetOp(c.meta["id"], item_body(c.text, c.meta), c.before)


# -- edits of files ---------------------------------------------------------------------------
def add_item(
    path: Path,
    section: str,
    text: str,
    meta: dict[str, str],
    *,
    title: str = "",
    dedupe: bool = False,
) -> TextEdit[EditedItem]:
    """Add `- text <!-- memd … -->` at the end of `## section` (created when missing).

    An item with the same id already in the file is not added again. With `dedupe`, an item in
    effect with the same normalised text is not added either: its `hits` is bumped (and `seen`
    set to `meta["at"]`), and the result says `existed`.
    """
    text = clean_text(text)
    body = item_body(text, meta)
    title = title or path.stem.replace("-", " ").title()
    want_id = meta.get("id", "")

    def edit(current: str | None) -> tuple[str | None, EditedItem]:
        parsed = parse_markdown(current) if current else None
        if parsed is not None and current:
            items = items_of(parsed)
            for i, t, m in items:
                if want_id and m.get("id") == want_id:
                    return None, EditedItem(str(path), i + 1, t, m, existed=True)
            same = same_item(text, items) if dedupe else None
            if same is not None:
                i, t, m = same
                lines = current.split("\n")
                m2 = bumped(m, meta.get("at", ""))
                lines[i] = item_line(t, m2, item_prefix(lines[i]))
                old = item_body(t, m)
                return "\n".join(lines), EditedItem(str(path), i + 1, t, m2, True, old)
        new, at = insert_lines(current, section, [f"- {body}"], title, str(path), parsed)
        return new, EditedItem(str(path), at, text, meta)

    def ops(r: EditedItem) -> list[Op]:
        if r.existed:
            if not r.meta.get("id") or not r.before:
                return []
            return [SetOp(r.meta["id"], item_body(r.text, r.meta), r.before)]
        return [AddOp(section, body, want_id, title)] if want_id else []

    return TextEdit(edit, ops)


def remove_items(path: Path, match: Match) -> TextEdit[list[EditedItem]]:
    """Remove every list item for which `match(text, meta)` is true; return what was removed."""

    def edit(current: str | None) -> tuple[str | None, list[EditedItem]]:
        if current is None:
            return None, []
        lines = current.split("\n")
        gone: set[int] = set()
        removed = []
        for i, t, m in items_of(current):
            if match(t, m):
                gone.add(i)
                removed.append(EditedItem(str(path), i + 1, t, m))
        if not removed:
            return None, []
        return "\n".join(x for i, x in enumerate(lines) if i not in gone), removed

    def ops(removed: list[EditedItem]) -> list[Op]:
        return [
            RemoveOp(r.meta["id"], item_body(r.text, r.meta)) for r in removed if r.meta.get("id")
        ]

    return TextEdit(edit, ops)


def update_items(path: Path, match: Match, change: Change) -> TextEdit[list[EditedItem]]:
    """Rewrite matching items in place with `change(text, meta) -> (text, meta)`."""

    def edit(current: str | None) -> tuple[str | None, list[EditedItem]]:
        if current is None:
            return None, []
        lines = current.split("\n")
        changed = []
        for i, t, m in items_of(current):
            if not match(t, m):
                continue
            t2, m2 = change(t, dict(m))
            t2 = clean_text(t2)
            # The marker and a task box stay as they were: `1.` or `- [x]` keep their meaning.
            lines[i] = item_line(t2, m2, item_prefix(lines[i]))
            changed.append(EditedItem(str(path), i + 1, t2, m2, before=item_body(t, m)))
        return ("\n".join(lines) if changed else None), changed

    def ops(changed: list[EditedItem]) -> list[Op]:
        return [_set(c) for c in changed if c.meta.get("id")]

    return TextEdit(edit, ops)


def change_item(
    path: Path, match: Match, change: Change, *, expect_text: str | None = None
) -> TextEdit[EditedItem]:
    """Change the one item `match` finds, only if its text on disk is `expect_text` (when
    given); raises `NotFound` when it is not in the file, `EditConflict` when it differs."""

    def edit(current: str | None) -> tuple[str | None, EditedItem]:
        i, t, m = _found(path, current, match, expect_text)
        lines = (current or "").split("\n")
        t2, m2 = change(t, dict(m))
        t2 = clean_text(t2)
        lines[i] = item_line(t2, m2, item_prefix(lines[i]))
        return "\n".join(lines), EditedItem(str(path), i + 1, t2, m2, before=item_body(t, m))

    return TextEdit(edit, _set_ops)


def _set_ops(c: EditedItem) -> list[Op]:
    return [_set(c)] if c.meta.get("id") else []


@dataclass(frozen=True, slots=True)
class ItemChange:
    """What an edit of one item changes; None leaves that part as it is."""

    expect_text: str | None = None  # the text the caller saw: refuse if the file says otherwise
    text: str | None = None
    importance: int | None = None
    pinned: bool | None = None
    expires: str | None = None  # YYYY-MM-DD, or "" to clear
    move_to: tuple[str, str] | None = None  # (file relative to the memory root, section)

    def meta_changes(self) -> bool:
        return self.importance is not None or self.pinned is not None or self.expires is not None

    def check(self) -> None:
        """Refuse values no item can take (InvalidParams naming the param)."""
        if self.text is not None:
            check_item_text(self.text)
            if not clean_text(self.text):
                raise InvalidParams("param 'text': an item needs text (use forget to remove it)")
        if self.move_to is not None and (why := heading_problem(self.move_to[1])):
            raise InvalidParams(f"param 'move_to.section': {why}; nothing was written")
        if self.importance is not None and not 1 <= self.importance <= 10:
            raise InvalidParams("param 'importance': a whole number from 1 to 10")
        if self.expires:
            try:
                dt.date.fromisoformat(self.expires)
            except ValueError:
                raise InvalidParams("param 'expires': a date like 2027-01-31, or \"\"") from None
        if self.text is None and not self.meta_changes() and self.move_to is None:
            raise InvalidParams(
                "nothing to change: give text, importance, pinned, expires or move_to"
            )

    def apply(
        self, text: str, meta: dict[str, str], new_text: str | None, new_id: str
    ) -> tuple[str, dict[str, str]]:
        """PURE: the item's text and metadata after this change."""
        m = dict(meta)
        if new_id and not m.get("id"):
            m = {"id": new_id, **m}
        if self.importance is not None:
            m["imp"] = str(self.importance)
        if self.pinned is not None:
            if self.pinned:
                m["pinned"] = "true"
            else:
                m.pop("pinned", None)
        if self.expires is not None:
            if self.expires:
                m["expires"] = self.expires
            else:
                m.pop("expires", None)
        return (new_text if new_text is not None else text), m


def _found(path: Path, current: str | None, match: Match, expect_text: str | None) -> ItemAt:
    found = [x for x in items_of(current or "") if match(x[1], x[2])]
    if not found:
        raise NotFound(f"the item is no longer in {path}", hint="reload and try again")
    i, t, m = found[0]
    # The caller saw the text as the file has it, or as the index serves it (redacted).
    seen = " ".join(expect_text.split()) if expect_text is not None else None
    if seen is not None and seen not in (" ".join(t.split()), " ".join(redact(t).split())):
        raise EditConflict(
            f"the item changed in {path} since it was shown: it now reads {t!r}",
            hint="reload the page and make the change again",
        )
    return i, t, m


def move_item(
    files: MemoryFiles,
    source: Path,
    dest: Path,
    section: str,
    match: Match,
    change: Change,
    op: Operation,
    *,
    expect_text: str | None = None,
) -> EditedItem:
    """Move the item `match` finds to the end of `## section` of `dest`, changed by `change`.

    Across files the copy is written first and the original removed after (a crash leaves the
    item twice, never nowhere); if the original changed in between, the copy is removed again
    and `EditConflict` raised. The item must have (or be given, by `change`) a memd id.
    """
    title = dest.stem.replace("-", " ").title()
    if dest == source:

        def edit(current: str | None) -> tuple[str | None, EditedItem]:
            i, t, m = _found(source, current, match, expect_text)
            t2, m2 = change(t, m)
            lines = (current or "").split("\n")
            del lines[i]
            new, at = insert_lines("\n".join(lines), section, [item_line(t2, m2)], title)
            return new, EditedItem(str(dest), at, t2, m2, before=item_body(t, m))

        return files.edit(source, TextEdit(edit, _set_ops), op).result
    _, t, m = _found(source, files.text(source), match, expect_text)
    t2, m2 = change(t, m)
    if not m2.get("id"):
        raise InvalidParams("an item needs a memd id to be moved")
    copy = files.edit(dest, add_item(dest, section, t2, m2, title=title), op).result
    if not files.edit(
        source, remove_items(source, lambda t1, m1: match(t1, m1) and t1 == t), op
    ).result:
        files.edit(dest, remove_items(dest, lambda _t, m1: m1.get("id") == m2["id"]), op)
        raise EditConflict(
            f"the item changed in {source} while it was being moved; nothing was moved",
            hint="reload and try again",
        )
    return copy
