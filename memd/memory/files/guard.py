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

A save counts as within the window by when it was made (the file's change time), not by
when memd looks at it: on a loaded machine the watcher, or memd's next edit, can get to an
editor's older copy seconds late (memd looks for up to `LATE_S` seconds).

What this cannot tell apart: a person who, within the window, deletes exactly memd's most
recent item (or restores a line memd just removed) gets memd's change back once; after the
window every edit is taken as it is. Only items with a memd id are guarded (lines a person
wrote are theirs); journal entries and whole-file writes (undo, a pulled or imported file) are
not — but a whole-file write decided on an older copy an editor saved gets memd's missing items
applied again on top of it, as any write does (the door: `missing`). The guard is active in the
daemon only (`active`), where the watcher reports changes.
Part of `memd.memory.files`: one guard belongs to one door (`MemoryFiles`).

The changes in their window are also kept in a small file (`state`): an editor saving its
older copy while memd is down (killed, or restarting) would otherwise take memd's acknowledged
change with it for good. Each change is one line appended to it (a remember's item, or the
state of one file after a check), so a write costs the same however many changes are kept; the
file is rewritten whole only when it has grown by `COMPACT_LINES` lines, and at start. When memd starts, a file changed
since memd's last write, last at a time within `LATE_S` of the window of memd's changes
(`resume`: an editor that saved its older copy within the window while memd was down may have
saved it again since, and the file keeps only the last save's time), gets them back as if memd
had never stopped; a file changed later was changed by a person after the window and stays as
they left it. The file is not flushed to disk on each change: it survives
memd being killed, not a power cut (which also loses an editor's unsynced save).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memd.core.errors import SourceError
from memd.memory.items import body_of, insert_lines, items_of
from memd.memory.parse import item_prefix

log = logging.getLogger(__name__)
WINDOW_S = 5.0
COMPACT_LINES = 256
LATE_S = 60.0
"""How long after memd's change a save of the file may still be seen: the watcher, or memd's
next edit, can come late on a loaded machine. The save is judged by when it happened (the
file's change time), not by when memd looks at it."""


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


@dataclass(frozen=True, slots=True)
class Missing:
    """memd's recent changes an older copy wrote over (`ops`, to be applied again) and the
    cause of the latest of them: the cause the change putting them back is recorded with."""

    ops: list[Op] = field(default_factory=list)
    cause: str = ""


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
    at: float  # on the guard's clock
    cause: str = ""
    wall: float = 0.0  # the same moment as time.time(): what the state file keeps


@dataclass
class _File:
    last: bytes | None = None  # the digest of what memd last wrote (or accepted as it is)
    entries: list[_Entry] = field(default_factory=list)
    # When the watcher first saw someone else's save since then (time.time()): an editor may
    # save the same older copy again before memd gets to the file, and the file keeps only the
    # last save's time.
    saved_at: float | None = None

    def add(self, entry: _Entry) -> None:
        """A new change: a newer change of the same item replaces the older one."""
        ids = {op.item_id for op in entry.ops if op.item_id}
        for e in self.entries:
            e.ops = [op for op in e.ops if op.item_id not in ids]
        self.entries = [e for e in self.entries if e.ops]
        self.entries.append(entry)

    def accept(self, digest: bytes, view: _View) -> None:
        """The file as it is now (`digest`, its items `view`) is taken as it is: memd's changes
        that no longer hold there were undone on purpose and are let go."""
        for e in self.entries:
            e.ops = [op for op in e.ops if op.holds(view)]
        self.entries = [e for e in self.entries if e.ops]
        self.last = digest
        self.saved_at = None


def _first(seen: float | None, at: float | None) -> float | None:
    """The earlier of two save times (None: not known)."""
    return at if seen is None else seen if at is None else min(seen, at)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


_KINDS: tuple[tuple[str, type[AddOp] | type[RemoveOp] | type[SetOp]], ...] = (
    ("add", AddOp),
    ("remove", RemoveOp),
    ("set", SetOp),
)


def _op_json(op: Op) -> dict[str, str]:
    kind = next(k for k, t in _KINDS if isinstance(op, t))
    return {"kind": kind, **asdict(op)}


def _op_of(raw: dict[str, str]) -> Op:
    kind = dict(_KINDS)[raw.pop("kind")]
    return kind(**raw)


def _entry_json(e: _Entry) -> dict[str, object]:
    return {"wall": e.wall, "cause": e.cause, "ops": [_op_json(op) for op in e.ops]}


def _entry_of(raw: dict[str, object], now: float, wall: float) -> _Entry:
    """An entry kept by an earlier run: its time moved onto this run's clock."""
    ops = raw["ops"]
    if not isinstance(ops, list):
        raise TypeError("ops is not a list")
    at = float(raw["wall"])  # type: ignore[arg-type]
    return _Entry([_op_of(dict(o)) for o in ops], now - (wall - at), str(raw["cause"]), at)


class WriteGuard:
    """memd's recent item changes per file, re-applied after an outdated write (module doc)."""

    def __init__(
        self,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        *,
        state: Path | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.window_s = window_s
        self.clock = clock
        self.wall = wall
        self.state = state  # where the changes in their window are kept across a restart
        self.active = False  # the daemon turns it on while it watches the tree
        self.reapplied = 0  # operations applied again (for status and tests)
        self._files: dict[str, _File] = {}
        self._lock = threading.Lock()
        self._logged: dict[str, str] = {}  # per file kept in `state`: its last state line
        self._lines = 0  # lines in `state`
        self._failing = False
        if state is not None:
            self._load(state)

    def missing(
        self,
        path: Path | str,
        data: bytes | None,
        text: str | None,
        changed_at: float | None = None,
    ) -> Missing:
        """memd's recent changes an older copy wrote over in `text` (the file as just read:
        `data`, last changed at `changed_at` as time.time(), None for now), to be applied again
        (`reapply`) by whatever memd writes to the file next; counted as applied again."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if st is None or not self.active:
                return Missing()
            st.entries = self._seen(st.entries)
            if not st.entries or data is None:
                # Nothing recent, or the file was deleted: a deletion is the person's.
                del self._files[key]
                self._save(key)
                return Missing()
            digest = _digest(data)
            if digest == st.last:
                return Missing()
            # Written over memd's last write: within the window of which changes? Judged by the
            # first save the watcher saw since, if it saw one.
            st.entries = self._within(st.entries, _first(st.saved_at, changed_at))
            if not st.entries:  # saved after the window of every change: as the person left it
                del self._files[key]
                self._save(key)
                return Missing()
            view = _View.of(text or "")
            missing = [e for e in st.entries if any(not op.holds(view) for op in e.ops)]
            if not missing or missing[-1] is not st.entries[-1]:
                # All there, or whoever wrote saw memd's latest change: the older ones missing
                # were undone on purpose.
                st.accept(digest, view)
                self._save(key)
                return Missing()
            todo = [op for e in missing for op in e.ops if not op.holds(view)]
            for e in missing:
                e.at, e.wall = self.clock(), self.wall()
            self.reapplied += len(todo)
            self._save(key)
        log.info("%s: an older copy was written over memd's recent changes; applying %d again",
                 key, len(todo))  # fmt: skip
        return Missing(todo, missing[-1].cause or "edit")

    def written(self, path: Path | str, data: bytes, ops: list[Op] | None, cause: str = "") -> None:
        """memd wrote `data` to `path`, making `ops` (None: a whole-file write, not guarded)."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if ops is None or not self.active:
                if self._files.pop(key, None) is not None:
                    self._save(key)
                return
            if st is None:
                if not ops:
                    return
                st = self._files[key] = _File()
            st.last = _digest(data)
            st.saved_at = None
            entry = _Entry(list(ops), self.clock(), cause, self.wall()) if ops else None
            if entry is not None:
                st.add(entry)
            self._save(key, entry)

    def forget_file(self, path: Path | str) -> None:
        """memd replaced or deleted the whole file: its earlier changes are no longer guarded."""
        key = os.path.abspath(path)
        with self._lock:
            if self._files.pop(key, None) is not None:
                self._save(key)

    def rewritten(self, path: Path | str, data: bytes, text: str) -> None:
        """memd wrote the whole file (`data`, decoded `text`: an undo, a pulled file): its
        earlier changes that no longer hold there were taken back on purpose and are let go;
        those that still hold stay guarded."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if st is None:
                return
            st.accept(_digest(data), _View.of(text))
            self._save(key)

    def resume(self, path: Path | str, data: bytes | None, changed_at: float) -> None:
        """memd starts: `path` holds `data`, last changed at `changed_at` (time.time()). If it
        is not what memd last wrote and was last changed within `LATE_S` of the window of memd's
        changes kept from before, those changes count from now (the next `missing` finds
        what is missing); a file changed later keeps what it has."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if st is None or data is None or _digest(data) == st.last:
                return
            # Changed after memd's last write of it (it is not that write). The file's change
            # time is its last save's: an editor that saved its older copy within the window
            # while memd was down, and saved that copy again after it, leaves only the later
            # time. So a save seen only now counts as within the window up to LATE_S after it,
            # as the watcher's late look does; a person who deleted memd's latest item in that
            # minute while memd was down gets it back once.
            live = [e for e in st.entries if changed_at - e.wall < self.window_s + LATE_S]
            if live:
                now = self.clock()
                for e in live:  # their window runs from that save on, as after `missing`
                    e.at, e.wall = now, max(e.wall, changed_at)
                st.entries = live
            else:
                del self._files[key]
            self._save(key)

    def kept(self) -> list[str]:
        """Files whose changes were kept from before this start (see `resume`)."""
        with self._lock:
            return list(self._files)

    def _save(self, key: str, added: _Entry | None = None) -> None:
        """Keep the change of `key`'s state in the state file (lock held): the entry `added`
        by a write, else the file's state as it is now (module doc)."""
        if self.state is None:
            return
        st = self._files.get(key)
        if added is not None and st is not None and st.last is not None:
            # Its state now is more than one line: no full line to compare the next one with.
            line = json.dumps({"f": key, "last": st.last.hex(), "add": _entry_json(added)})
            self._write(key, line, "")
        elif (full := self._state_line(key, st)) is not None:
            if self._logged.get(key) != full:
                self._write(key, full, full)
        elif key in self._logged:
            self._write(key, json.dumps({"f": key}), None)  # no longer kept
        # else: never kept in the file, nothing to take back

    def _write(self, key: str, line: str, logged: str | None) -> None:
        """Append `line` for `key` (lock held), which then stands in the file as `logged` (its
        full line, "" for one of several, None for none); or rewrite the file whole."""
        assert self.state is not None
        try:
            if not self._files or self._lines >= COMPACT_LINES or self._failing:
                # Nothing kept (no file); time to drop what no longer holds; or a line that
                # could not be written is missing from the file: written whole again.
                self._compact()
            else:
                # Never through a link put in its place: that fails, and the next change
                # writes the file whole (a rename replaces the link, not what it points to).
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                fd = os.open(self.state, flags, 0o600)
                try:
                    os.write(fd, (line + "\n").encode("utf-8"))
                finally:
                    os.close(fd)
                self._lines += 1
                if logged is None:
                    self._logged.pop(key, None)
                else:
                    self._logged[key] = logged
            self._failing = False
        except OSError as exc:  # memory-only then: the guard itself still works
            if not self._failing:  # once until it works again (a full disk: every write)
                log.warning("the write guard cannot keep its changes in %s: %s", self.state, exc)
            self._failing = True

    def _state_line(self, key: str, st: _File | None) -> str | None:
        """The state file's line for `key` holding the changes a save may still be seen for;
        None when there are none."""
        if st is None or st.last is None:
            return None
        entries = self._seen(st.entries)
        if not entries:
            return None
        return json.dumps(
            {"f": key, "last": st.last.hex(), "entries": [_entry_json(e) for e in entries]}
        )

    def _compact(self) -> None:
        """Rewrite the state file with one line per file whose changes a save may still be
        seen for (lock held); no such file: no state file."""
        assert self.state is not None
        logged = {k: line for k, st in self._files.items() if (line := self._state_line(k, st))}
        if not logged:
            self.state.unlink(missing_ok=True)
        else:
            tmp = self.state.with_name(self.state.name + ".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in logged.values()))
            os.replace(tmp, self.state)
        self._logged, self._lines = logged, len(logged)

    def _load(self, state: Path) -> None:
        """The changes a previous run kept (their times moved onto this run's clock), read
        line by line; the file is then rewritten with what holds. A line that cannot be read
        costs a warning, and its file's changes are not kept (what they were is not known)."""
        try:
            raw = state.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("the write guard's kept changes in %s cannot be read: %s", state, exc)
            return
        now, wall = self.clock(), self.wall()
        bad = 0
        for line in raw.splitlines():
            if line.strip() and not self._read_line(line, now, wall):
                bad += 1
        if bad:
            log.warning("the write guard's kept changes in %s: %d lines cannot be read", state, bad)
        try:
            self._compact()
        except OSError as exc:
            log.warning("the write guard cannot keep its changes in %s: %s", state, exc)

    def _read_line(self, line: bytes, now: float, wall: float) -> bool:
        """Replay one line of the state file; False when it cannot be read."""
        key: str | None = None
        try:
            rec = json.loads(line)
            if "files" in rec:  # the one-object form of earlier versions
                for k, f in rec["files"].items():
                    key = str(k)
                    self._replay(key, f, now, wall)
                return True
            key = str(rec["f"])
            self._replay(key, rec, now, wall)
            return True
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if key is not None:
                self._files.pop(key, None)
            log.debug("write guard: an unreadable line in %s: %s", self.state, exc)
            return False

    def _replay(self, key: str, rec: dict[str, object], now: float, wall: float) -> None:
        """One line of the state file: a file's changes (`entries`), one more (`add`), or
        none kept (neither)."""
        if "add" not in rec and "entries" not in rec:
            self._files.pop(key, None)
            return
        last = bytes.fromhex(str(rec["last"]))
        if "add" in rec:
            add = rec["add"]
            if not isinstance(add, dict):
                raise TypeError("add is not an object")
            st = self._files.setdefault(key, _File())
            st.last = last
            st.add(_entry_of(add, now, wall))
            return
        entries = rec["entries"]
        if not isinstance(entries, list):
            raise TypeError("entries is not a list")
        self._files[key] = _File(last, [_entry_of(e, now, wall) for e in entries])

    def watched(self, path: Path | str, changed_at: float | None = None) -> str | None:
        """The cause of the guarded changes of `path` a save at `changed_at` (time.time(); None
        for now) falls within the window of (None when none). The first such save since memd's
        last write of the file is noted: `missing` judges the window by it, not by a later save
        of the same older copy."""
        key = os.path.abspath(path)
        with self._lock:
            st = self._files.get(key)
            if st is None:
                return None
            st.saved_at = _first(st.saved_at, self.wall() if changed_at is None else changed_at)
            live = self._within(self._seen(st.entries), st.saved_at)
            return (live[-1].cause or "edit") if live else None

    def _seen(self, entries: list[_Entry]) -> list[_Entry]:
        """The changes a save of their file may still be seen for (`LATE_S`)."""
        now = self.clock()
        return [e for e in entries if now - e.at < self.window_s + LATE_S]

    def _within(self, entries: list[_Entry], changed_at: float | None) -> list[_Entry]:
        """The changes a save at `changed_at` (time.time(); None: now) came within the
        window of."""
        at = self.wall() if changed_at is None else changed_at
        return [e for e in entries if at - e.wall < self.window_s]
