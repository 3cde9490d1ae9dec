"""What the tailer keeps about log files: checkpoints (`log_files`), unparsable lines
(`bad_lines`) and Claude Code titles waiting for their leaf (`pending_titles`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

from memd.conversations.tailer import Checkpoint


class LogTotals(NamedTuple):
    """What the tailer has read: files (deleted ones too), turns, bad lines."""

    files: int
    turns: int
    bad_lines: int
    deleted: int


# -- log files --------------------------------------------------------------------------------
def checkpoint(conn: sqlite3.Connection, path: str) -> Checkpoint | None:
    """Where the tailer stopped in a log file."""
    r = conn.execute(
        "SELECT inode, size, offset, lineno, head, mtime_ns FROM log_files WHERE path = ?", (path,)
    ).fetchone()
    return None if r is None else Checkpoint(path, r[0], r[1], r[2], r[3], r[4], r[5])


def tailed_files(conn: sqlite3.Connection) -> dict[str, Checkpoint]:
    """path → checkpoint of every log file not marked deleted."""
    return {
        r[0]: Checkpoint(*r)
        for r in conn.execute(
            "SELECT path, inode, size, offset, lineno, head, mtime_ns FROM log_files WHERE deleted = 0"
        )
    }


def save_checkpoint(
    conn: sqlite3.Connection, path: str, fmt: str, cp: Checkpoint, added: int, now: float
) -> None:
    """Record how far a log was read and what it gave (turns add up, bad lines are counted)."""
    conn.execute(
        "INSERT INTO log_files(path, format, inode, size, offset, lineno, head, mtime_ns, turns, bad_lines,"
        " updated_at, deleted) VALUES (?,?,?,?,?,?,?,?,?,(SELECT count(*) FROM bad_lines WHERE path = ?),?,0)"
        " ON CONFLICT(path) DO UPDATE SET format = excluded.format, inode = excluded.inode,"
        " size = excluded.size, offset = excluded.offset, lineno = excluded.lineno, head = excluded.head,"
        " mtime_ns = excluded.mtime_ns, turns = log_files.turns + excluded.turns,"
        " bad_lines = excluded.bad_lines, updated_at = excluded.updated_at, deleted = 0",
        (
            path,
            fmt,
            cp.inode,
            cp.size,
            cp.offset,
            cp.lineno,
            cp.head,
            cp.mtime_ns,
            added,
            path,
            now,
        ),
    )


def mark_deleted(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    conn.executemany("UPDATE log_files SET deleted = 1 WHERE path = ?", [(p,) for p in paths])


def forget_bad_lines(conn: sqlite3.Connection, path: str, from_line: int = 0) -> None:
    """Forget a log's bad lines (those from line `from_line` on: a part read again)."""
    conn.execute("DELETE FROM bad_lines WHERE path = ? AND line >= ?", (path, from_line))


def add_bad_lines(
    conn: sqlite3.Connection, path: str, bad: Sequence[tuple[int, str]], now: float
) -> None:
    """Record unparsable lines of a log: (line number, reason)."""
    conn.executemany(
        "INSERT OR REPLACE INTO bad_lines(path, line, reason, seen_at) VALUES (?,?,?,?)",
        [(path, n, why, now) for n, why in bad],
    )


def bad_reasons(conn: sqlite3.Connection, path: str) -> set[str]:
    """The reasons already recorded for a log's bad lines."""
    return {
        r[0] for r in conn.execute("SELECT DISTINCT reason FROM bad_lines WHERE path = ?", (path,))
    }


def files_by_format(conn: sqlite3.Connection) -> dict[str, tuple[int, int, int]]:
    """format → (files read and still there, turns they gave, bad lines)."""
    return {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT format, sum(deleted = 0), coalesce(sum(turns), 0), coalesce(sum(bad_lines), 0)"
            " FROM log_files GROUP BY format"
        )
    }


def bad_lines_under(
    conn: sqlite3.Connection, roots: list[str], limit: int
) -> list[tuple[str, int, str]]:
    """(path, line, reason) of the most recent bad lines of logs below any of `roots`."""
    if not roots:
        return []
    where = " OR ".join("substr(path, 1, ?) = ?" for _ in roots)
    params: list[object] = [x for r in roots for x in (len(r), r)]
    return [
        (r[0], r[1], r[2])
        for r in conn.execute(
            f"SELECT path, line, reason FROM bad_lines WHERE {where}"
            " ORDER BY seen_at DESC, path, line DESC LIMIT ?",
            (*params, limit),
        )
    ]


def log_totals(conn: sqlite3.Connection, *, exclude_format: str = "") -> LogTotals:
    """What was read from log files (those of `exclude_format` left out)."""
    r = conn.execute(
        "SELECT count(*), coalesce(sum(turns), 0), coalesce(sum(bad_lines), 0),"
        " coalesce(sum(deleted), 0) FROM log_files WHERE format != ?",
        (exclude_format,),
    ).fetchone()
    return LogTotals(r[0], r[1], r[2], r[3])


def recent_bad_lines(conn: sqlite3.Connection, limit: int) -> list[tuple[str, int, str]]:
    """(path, line, reason) of the most recently seen bad lines."""
    return [
        (r[0], r[1], r[2])
        for r in conn.execute(
            "SELECT path, line, reason FROM bad_lines ORDER BY seen_at DESC, path, line DESC LIMIT ?",
            (limit,),
        )
    ]


def pending_titles(conn: sqlite3.Connection, path: str) -> dict[str, tuple[str, str, int]]:
    """leaf id → (session id, title, line) of a log's titles waiting for their leaf."""
    return {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT leaf_id, session_id, title, line FROM pending_titles WHERE path = ?", (path,)
        )
    }


def add_pending_title(
    conn: sqlite3.Connection, path: str, leaf_id: str, session_id: str, title: str, line: int
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO pending_titles(path, leaf_id, session_id, title, line) VALUES (?,?,?,?,?)",
        (path, leaf_id, session_id, title, line),
    )


def drop_pending_title(conn: sqlite3.Connection, path: str, leaf_id: str) -> None:
    conn.execute("DELETE FROM pending_titles WHERE path = ? AND leaf_id = ?", (path, leaf_id))
