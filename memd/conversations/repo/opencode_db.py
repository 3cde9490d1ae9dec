"""The SQL over OpenCode's own database (``opencode.db``, OpenCode 1.2 and later): read only.

The database is OpenCode's: it is opened read-only (``query_only`` too), never written, never
migrated, and only its ``session``, ``message`` and ``part`` tables are read — its account,
credential, share and permission tables never are. While OpenCode runs (its write-ahead log, the
``-wal`` file, exists) it is opened ``mode=ro``, a reader among OpenCode's own; when OpenCode is
not running it is opened ``immutable``, which creates no ``-wal``/``-shm`` files beside it (a
``mode=ro`` reader would leave them there).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from typing import NamedTuple

from memd.core.errors import SourceError

BUSY_TIMEOUT_S = 2.0


class PartRow(NamedTuple):
    """A part with its message's and session's JSON: (part id, message id, session id, time
    updated (ms), part data, message data, session directory, parent session id, title)."""

    part_id: str
    message_id: str
    session_id: str
    updated: int
    data: str
    message: str
    directory: str
    parent: str
    title: str


@contextlib.contextmanager
def open_readonly(path: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database at `path` (`sqlite3.Error` when it cannot be read)."""
    quoted = urllib.parse.quote(os.path.abspath(path))
    running = os.path.exists(path + "-wal")
    conn = _open(f"file:{quoted}?mode=ro" + ("" if running else "&immutable=1"))
    try:
        yield conn
    finally:
        conn.close()


def _open(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT 1 FROM part LIMIT 0").fetchall()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def changed_parts(
    conn: sqlite3.Connection, after_ms: int, after_id: str, limit: int
) -> list[PartRow]:
    """Parts updated after (`after_ms`, `after_id`), oldest first, with their message and session."""
    rows = conn.execute(
        "SELECT p.id, p.message_id, p.session_id, p.time_updated, p.data, coalesce(m.data, '{}'),"
        " coalesce(s.directory, ''), coalesce(s.parent_id, ''), coalesce(s.title, '')"
        " FROM part p LEFT JOIN message m ON m.id = p.message_id"
        " LEFT JOIN session s ON s.id = p.session_id"
        " WHERE p.time_updated > ? OR (p.time_updated = ? AND p.id > ?)"
        " ORDER BY p.time_updated, p.id LIMIT ?",
        (after_ms, after_ms, after_id, limit),
    ).fetchall()
    return [PartRow(*r) for r in rows]


def read_changed(path: str, after_ms: int, after_id: str, limit: int) -> list[PartRow]:
    """`changed_parts` of the database at `path`, opened read-only for this read; `SourceError`
    when it cannot be read."""
    try:
        with open_readonly(path) as conn:
            return changed_parts(conn, after_ms, after_id, limit)
    except sqlite3.Error as exc:
        raise SourceError(f"cannot read the database read-only: {exc}") from exc
