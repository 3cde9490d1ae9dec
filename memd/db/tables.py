"""Generic table queries any feature may use for its status (no feature's schema here)."""

from __future__ import annotations

import sqlite3


def count_rows(conn: sqlite3.Connection, table: str) -> int:
    """The number of rows of `table` (a name from the schema, never user input)."""
    return int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
