"""Read conversations from a database another program owns (OpenCode's ``opencode.db``).

The database is polled: when its size or time (with its write-ahead log's) changed since the
last read, the rows updated after the checkpoint are read, oldest first, a batch at a time, and
become turns through the format's pure functions. The checkpoint (`Checkpoint`) keeps the
database's combined size (`size`, `offset`) and latest time (`mtime_ns`), and the last row read:
its update time in ms (`lineno`) and id (`head`). Rows updated again later (a streamed part) are
read again and replace their earlier copy.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from memd.conversations.formats.opencode import PartRow, message_facts, part_turn
from memd.conversations.repo import opencode_db
from memd.conversations.tailer import Checkpoint
from memd.core.models import Turn

BATCH = 2000


@dataclass(frozen=True, slots=True)
class DatabaseRead:
    """One batch: its turns, the checkpoint after it, and whether more rows wait."""

    turns: list[Turn]
    checkpoint: Checkpoint
    more: bool


def stat(path: str) -> tuple[int, int, int]:
    """(inode, size, latest modification time in ns) of a database with its write-ahead log."""
    st = os.stat(path)
    size, mtime = st.st_size, st.st_mtime_ns
    try:
        wal = os.stat(path + "-wal")
    except FileNotFoundError:
        pass
    else:
        size, mtime = size + wal.st_size, max(mtime, wal.st_mtime_ns)
    return st.st_ino, size, mtime


def unchanged(previous: Checkpoint | None, path: str) -> bool:
    """Whether the database is as it was when `previous` was read whole."""
    if previous is None or previous.offset != previous.size:
        return False
    try:
        inode, size, mtime = stat(path)
    except OSError:
        return False
    return (inode, size, mtime) == (previous.inode, previous.size, previous.mtime_ns)


def read_opencode(path: str, previous: Checkpoint | None, limit: int = BATCH) -> DatabaseRead:
    """The parts of ``opencode.db`` updated since `previous`, as turn parts (at most `limit`
    rows). `SourceError` when the database cannot be read."""
    inode, size, mtime = stat(path)
    after_ms, after_id = (previous.lineno, previous.head) if previous is not None else (0, "")
    rows = opencode_db.read_changed(path, after_ms, after_id, limit)
    turns = [t for r in rows if (t := _turn(r, path)) is not None]
    more = len(rows) == limit
    if rows:
        after_ms, after_id = rows[-1].updated, rows[-1].part_id
    # Read whole (no more rows): the stat taken before the read is what was read.
    cp = Checkpoint(path, inode, size, size if not more else 0, after_ms, after_id, mtime)
    return DatabaseRead(turns, cp, more)


def _turn(r: opencode_db.PartRow, path: str) -> Turn | None:
    data = _object(r.data)
    if data.get("type") != "text":
        return None
    role, created, cwd = message_facts(_object(r.message))
    row = PartRow(
        part_id=r.part_id, message_id=r.message_id, session_id=r.session_id, data=data,
        role=role, created=created, cwd=cwd, directory=r.directory, parent=r.parent,
        title=r.title,
    )  # fmt: skip
    return part_turn(row, path=path)


def _object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
