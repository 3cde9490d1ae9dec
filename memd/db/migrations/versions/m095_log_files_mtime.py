"""Log files keep their modification time: a document rewritten in place at the same size (a
chat whose last-updated time changed) is read again."""

from __future__ import annotations

import sqlite3


def m095_log_files_mtime(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE log_files ADD COLUMN mtime_ns INTEGER NOT NULL DEFAULT 0")
