"""`run_script`: several SQL statements inside the caller's transaction, for migrations."""

from __future__ import annotations

import sqlite3


def run_script(conn: sqlite3.Connection, sql: str) -> None:
    """Run several statements inside the caller's transaction.

    `executescript` would COMMIT first, which breaks "a migration and its record share one
    transaction", so statements are split with `sqlite3.complete_statement` (trigger bodies too).
    """
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                conn.execute(buf)
            buf = ""
    if buf.strip():
        conn.execute(buf)
