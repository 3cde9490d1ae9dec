"""Many rows per statement: multi-row `VALUES` for inserts and key lookups.

Why not `executemany`: it steps the statement once per row and Python's sqlite3 releases and
retakes the GIL around every step. While another thread runs Python (the log parser feeding
the writer), each retake waits for the interpreter's switch interval (5 ms), so the writer
advances a row at a time and the two threads end up taking turns. One statement per few
hundred rows does the same SQLite work in a handful of GIL-free steps, and the parser runs
meanwhile (measured on 100,000 turns in `bench/ingest_bench.py`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

# Rows per statement: enough to amortise the statement, few enough for a small SQL text.
MAX_ROWS = 500


def _batches(
    conn: sqlite3.Connection, rows: Sequence[Sequence[Any]], width: int
) -> Iterator[Sequence[Sequence[Any]]]:
    """Full batches, then the rest in power-of-two sizes (110 rows: 64 + 32 + 8 + 4 + 2).

    Every row count is a different SQL text, and compiling a statement of a few hundred
    `VALUES` rows costs more than running it: with a handful of sizes, sqlite3's statement
    cache serves them all (a folder of 100-turn transcripts ran 3x slower without this).
    """
    per = max(1, min(MAX_ROWS, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    i, n = 0, len(rows)
    while n - i >= per:
        yield rows[i : i + per]
        i += per
    size = 1 << max(0, (per.bit_length() - 1))
    while i < n:
        while size > n - i:
            size >>= 1
        yield rows[i : i + size]
        i += size


def _values(n: int, width: int) -> str:
    one = "(" + ",".join("?" * width) + ")"
    return ",".join([one] * n)


def insert_rows(
    conn: sqlite3.Connection, head: str, rows: Sequence[Sequence[Any]], tail: str = ""
) -> None:
    """Run ``{head} VALUES (...), (...) {tail}`` for `rows` (all of one width), a batch per statement.

    `head` is the statement up to VALUES, e.g. ``INSERT INTO t(a, b)``; `tail` may hold an
    ``ON CONFLICT`` clause. Rows go in in order.
    """
    if not rows:
        return
    width = len(rows[0])
    for batch in _batches(conn, rows, width):
        conn.execute(
            f"{head} VALUES {_values(len(batch), width)} {tail}", [v for r in batch for v in r]
        )


def select_by_keys(
    conn: sqlite3.Connection, select: str, on: str, keys: Sequence[Sequence[Any]]
) -> list[sqlite3.Row]:
    """Rows of ``SELECT {select} FROM (VALUES keys) AS k JOIN {on}``, a batch per statement.

    In `on`, the key columns are ``k.column1``, ``k.column2`` …; a join (unlike a row-value
    ``IN``) lets SQLite look each key up in an index instead of scanning the table.
    """
    out: list[sqlite3.Row] = []
    if not keys:
        return out
    width = len(keys[0])
    for batch in _batches(conn, keys, width):
        sql = f"SELECT {select} FROM (VALUES {_values(len(batch), width)}) AS k JOIN {on}"
        out.extend(conn.execute(sql, [v for r in batch for v in r]).fetchall())
    return out
