"""The write guard: memd's acknowledged changes survive an editor writing back an older copy.

An editor that loaded a file before memd changed it, and saves its buffer afterwards, writes
memd's change away: the remembered item is gone although memd answered "remembered". For
`WINDOW_S` seconds after memd changes items in a file, the guard keeps those changes as
item-level operations (add this line to this section, remove the item with this id, give
this item this line) and, whenever the file is read again by memd (before its next edit) or
seen changed by the watcher, checks them:

- nothing changed since memd's own last write: nothing to do;
- memd's most recent change is missing: whoever wrote the file worked on a copy older than
  that change (an editor's stale buffer), so every missing change of the window is applied
  again, on top of what was written (the other program's edits are kept);
- memd's most recent change is there but older ones are not: someone who saw memd's latest
  version removed or changed those items on purpose (a person deleting a line is a forget):
  they stay as the person left them, and the guard lets them go.

A changed item counts as undone only when its line is back to exactly what it was before
memd's change: a line changed to anything else was edited by a person.

What this cannot tell apart: a person who, within the window, deletes exactly memd's most
recent item (or restores a line memd just removed) gets memd's change back once; after the
window every edit is taken as it is. Only items with a memd id are guarded (lines a person
wrote are theirs); journal entries and whole-file writes (undo, a pulled or imported file) are
not. The guard is active in the daemon only (`active`), where the watcher reports changes.
Part of `memd.memory.files`: one guard belongs to one door (`MemoryFiles`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memd.core.errors import SourceError
from memd.memory.items import body_of, insert_lines, items_of
from memd.memory.parse import item_prefix

log = logging.getLogger(__name__)
WINDOW_S = 5.0


@dataclass(frozen=True, slots=True)
class _View:
    """The items of a file, for checking many operations at once (bodies: `items.body_of`)."""

    ids: dict[str, str]  # memd id -> the item's body
    bodies: frozenset[str]

    @classmethod
    def of(cls, text: str) -> _View:
        lines = text.split("\n")
        ids: dict[str, str] = {}
        found = set()
        for i, _t, meta in items_of(text):
            body = body_of(lines[i])
            found.add(body)
            if meta.get("id"):
                ids.setdefault(meta["id"], body)
        return cls(ids, frozenset(found))


@dataclass(frozen=True, slots=True)
class AddOp:
    """An item memd added at the end of `section` (`body`: its text and metadata comment)."""

    section: str
    body: str
    item_id: str
    title: str

    def holds(self, view: _View) -> bool:
        return self.item_id in view.ids if self.item_id else self.body in view.bodies


@dataclass(frozen=True, slots=True)
class RemoveOp:
    """An item memd removed (by id, or by its body when it had none)."""

    item_id: str
    body: str

    def holds(self, view: _View) -> bool:
        return self.item_id not in view.ids if self.item_id else self.body not in view.bodies


@dataclass(frozen=True, slots=True)
class SetOp:
    """An item memd changed from `before` to `body`. Only the old line back exactly undoes
    it (an older copy written back); an item since removed, or changed to anything else, is
    a person's doing and stays so."""

    item_id: str
    body: str
    before: str

    def holds(self, view: _View) -> bool:
        return view.ids.get(self.item_id) != self.before


Op = AddOp | RemoveOp | SetOp


def reapply(text: str | None, ops: list[Op]) -> str:
    """PURE: `text` with `ops` applied again (removals and changes in place, additions at the
    end of their sections, in the order memd first made them)."""
    out = text or ""
    drop_ids = {op.item_id for op in ops if isinstance(op, RemoveOp) and op.item_id}
    drop_bodies = {op.body for op in ops if isinstance(op, RemoveOp) and not op.item_id}
    sets = {op.item_id: op.body for op in ops if isinstance(op, SetOp)}
    if drop_ids or drop_bodies or sets:
        lines = out.split("\n")
        gone = set()
        for i, _t, meta in items_of(out):
            mid = meta.get("id", "")
            if (mid and mid in drop_ids) or (not mid and body_of(lines[i]) in drop_bodies):
                gone.add(i)
            elif mid in sets:
                lines[i] = item_prefix(lines[i]) + sets[mid]
        out = "\n".join(x for i, x in enumerate(lines) if i not in gone)
    adds = [op for op in ops if isinstance(op, AddOp)]
    while adds:
        first = adds[0]
        group = [op for op in adds if (op.section, op.title) == (first.section, first.title)]
        adds = [op for op in adds if op not in group]
        try:
            out, _ = insert_lines(out, first.section, [f"- {op.body}" for op in group], first.title)
        except SourceError as exc:
            log.warning("cannot apply %d items again: %s", len(group), exc)
    return out


@dataclass
class _Entry:
    ops: list[Op]
    at: float
    cause: str = ""


@dataclass
class _File:
    last: bytes | None = None  # what memd last wrote (or accepted as it is)
    entries: list[_Entry] = field(default_factory=list)


class WriteGuard:
    """memd's recent item changes per file, re-applied after an outdated write (module doc)."""

    def __init__(
        self, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window_s = window_s
        self.clock = clock
        self.active = False  # the daemon turns it on while it watches the tree
        self.reapplied = 0  # operations applied again (for status and tests)
        self._files: dict[str, _File] = {}
        self._lock = threading.Lock()

    def restore(self, path: Path | str, data: bytes | None, text: str | None) -> str | None:
        """`text` (the file as just read) with memd's missing recent changes applied again."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if st is None or not self.active:
                return text
            now = self.clock()
            st.entries = [e for e in st.entries if now - e.at < self.window_s]
            if not st.entries or data is None:
                # Nothing recent, or the file was deleted: a deletion is the person's.
                del self._files[key]
                return text
            if data == st.last:
                return text
            view = _View.of(text or "")
            missing = [e for e in st.entries if any(not op.holds(view) for op in e.ops)]
            if not missing:
                st.last = data
                return text
            if missing[-1] is not st.entries[-1]:
                # Whoever wrote saw memd's latest change: the older ones were undone on purpose.
                for e in missing:
                    e.ops = [op for op in e.ops if op.holds(view)]
                st.entries = [e for e in st.entries if e.ops]
                st.last = data
                return text
            todo = [op for e in missing for op in e.ops if not op.holds(view)]
            for e in missing:
                e.at = now
            self.reapplied += len(todo)
        log.info("%s: an older copy was written over memd's recent changes; applying %d again",
                 key, len(todo))  # fmt: skip
        return reapply(text, todo)

    def written(self, path: Path | str, data: bytes, ops: list[Op] | None, cause: str = "") -> None:
        """memd wrote `data` to `path`, making `ops` (None: a whole-file write, not guarded)."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if ops is None or not self.active:
                self._files.pop(key, None)
                return
            if st is None:
                if not ops:
                    return
                st = self._files[key] = _File()
            st.last = data
            if ops:
                ids = {op.item_id for op in ops if op.item_id}
                for e in st.entries:  # a newer change of the same item replaces the older one
                    e.ops = [op for op in e.ops if op.item_id not in ids]
                st.entries = [e for e in st.entries if e.ops]
                st.entries.append(_Entry(list(ops), self.clock(), cause))

    def forget_file(self, path: Path | str) -> None:
        """memd replaced or deleted the whole file: its earlier changes are no longer guarded."""
        with self._lock:
            self._files.pop(os.path.abspath(path), None)

    def watched(self, path: Path | str) -> str | None:
        """The cause of the guarded changes of `path` (None when none are in their window)."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if st is None:
                return None
            now = self.clock()
            live = [e for e in st.entries if now - e.at < self.window_s]
            return (live[-1].cause or "edit") if live else None

    def paths(self) -> list[str]:
        """Files with changes still in their window."""
        now = self.clock()
        with self._lock:
            return [
                k
                for k, st in self._files.items()
                if any(now - e.at < self.window_s for e in st.entries)
            ]
