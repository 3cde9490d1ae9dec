"""memd's own changes kept on disk from the moment they are recorded until they are committed.

`History.record_written` answers at once and a background thread commits (a git run of tens
of milliseconds): a memd killed in between (SIGKILL, a power cut) would lose the change, and the
next start would find memd's lines only in the tree, recorded as a hand edit. So each change is
first appended to a spool file in the history's folder (flushed to disk) and marked done once
committed; the next start commits what was not done before anything else, so each of memd's
changes stays one change of its own across a crash.

The spool holds the redacted file contents the history would commit anyway, compressed; it is
emptied whenever nothing is waiting. A line that cannot be read (cut by the crash) is skipped.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

from memd.core.errors import HistoryError
from memd.history.commits import Captured
from memd.history.git import Git
from memd.history.models import CHANGE_TRAILER, Cause
from memd.history.query import recent_ids

log = logging.getLogger(__name__)
NAME = "memd-spool.jsonl"


def _pack(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(zlib.compress(data, 1)).decode("ascii")


def _unpack(text: str | None) -> bytes | None:
    return None if text is None else zlib.decompress(base64.b64decode(text))


class Spool:
    """The changes recorded and not yet committed, in one append-only file."""

    def __init__(self, git_dir: Path) -> None:
        self.path = git_dir / NAME
        self._next = 0
        self._open: set[int] = set()
        self._lock = threading.Lock()  # `add` runs on writers' threads, `done` on the commit's

    def add(self, c: Captured) -> None:
        """Append `c` (flushed to disk) and give it its spool number."""
        with self._lock:
            self._next += 1
            c.spool = self._next
            self._add(c)

    def _add(self, c: Captured) -> None:
        line = {
            "n": c.spool,
            "cause": str(c.cause),
            "detail": c.detail,
            "at": c.at,
            "author": c.author,
            "trailers": c.trailers,
            "files": {k: _pack(v) for k, v in c.files.items()},
            "before": None if c.before is None else {k: _pack(v) for k, v in c.before.items()},
        }
        self._write(json.dumps(line) + "\n")
        assert c.spool is not None
        self._open.add(c.spool)

    def done(self, items: list[Captured]) -> None:
        """`items` were committed (or given up): the next start does not commit them again."""
        with self._lock:
            ns = [c.spool for c in items if c.spool is not None and c.spool in self._open]
            if not ns:
                return
            self._open.difference_update(ns)
            with contextlib.suppress(OSError):
                if self._open:
                    self._write(json.dumps({"done": ns}) + "\n", sync=False)
                else:
                    self._empty()  # nothing waits: start the file afresh

    def pending(self) -> list[Captured]:
        """The changes a previous run recorded and did not commit, oldest first. They stay in
        the file until the caller says they are `done` (committed, or given up): a memd killed
        again before that replays them at its next start."""
        if self.path.is_symlink():  # not memd's: never read or written through
            log.warning("history: %s is a link, not memd's spool: removed", self.path)
            self.path.unlink()
            return []
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        added: dict[int, Captured] = {}
        for line in raw.splitlines():
            try:
                rec = json.loads(line)
                if "done" in rec:
                    for n in rec["done"]:
                        added.pop(int(n), None)
                    continue
                added[int(rec["n"])] = _captured(rec)
            except (ValueError, KeyError, TypeError, zlib.error) as exc:
                log.debug("history: an unreadable spool line skipped: %s", exc)
        for n, c in added.items():
            c.spool = n
        with self._lock:
            # Numbers go on after the file's: a change recorded meanwhile is appended to it.
            self._next = max(self._next, *added) if added else self._next
            self._open.update(added)
        return [added[n] for n in sorted(added)]

    def replay(self, git: Git, commit: Callable[[list[Captured]], object]) -> None:
        """At a start: `commit` the changes a previous run recorded and did not commit (oldest
        first), then mark them done. A batch committed just before a kill is still here: its
        changes are in the history already, told by their ids. (Told by content instead, a
        change that a later one of its batch wrote over would be committed again, after a
        "hand" edit going back to its file's state before it.)"""
        replayed = self.pending()
        if not replayed:
            return
        try:
            ids = recent_ids(git, 2 * len(replayed) + 50)
        except HistoryError as exc:
            log.debug("history: reading the last changes failed: %s", exc)
            ids = set()
        try:
            todo = [c for c in replayed if c.trailers.get(CHANGE_TRAILER) not in ids]
            if todo:
                commit(todo)
        finally:
            self.done(replayed)

    def _empty(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)

    def _write(self, text: str, *, sync: bool = True) -> None:
        # Never through a link put in its place (its target would get memd's file contents).
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(self.path, flags, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)


def _captured(rec: dict[str, object]) -> Captured:
    files = rec["files"]
    before = rec["before"]
    assert isinstance(files, dict) and (before is None or isinstance(before, dict))
    trailers = rec.get("trailers") or {}
    assert isinstance(trailers, dict)
    return Captured(
        Cause(str(rec["cause"])),
        str(rec["detail"]),
        {str(k): _unpack(v) for k, v in files.items()},
        float(rec["at"]),  # type: ignore[arg-type]
        str(rec["author"]),
        {str(k): str(v) for k, v in trailers.items()},
        before=None if before is None else {str(k): _unpack(v) for k, v in before.items()},
        replayed=True,
    )
