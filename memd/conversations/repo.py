"""The conversation feature's storage: every SQL statement over its tables lives here.

Tables: `sessions` (title, summary, and the cursors of the jobs that follow a session: journal,
extraction, summaries), `turns` with `turns_fts` and `turn_parts`, `log_files` (the tailer's
checkpoints), `bad_lines`, `pending_titles` and `llm_summaries`. The write functions run
inside the caller's writer transaction; ingest, the tailer, the journal, recall and the jobs
decide what to write and read, this module only says how.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from memd.conversations.tailer import Checkpoint
from memd.core.text import index_text
from memd.db.bulk import insert_rows, select_by_keys

# A later title replaces an earlier one only from an equal or better source.
TITLE_RANK = {"": 0, "first": 1, "log": 2, "summary": 3, "custom": 4, "llm": 5, "user": 6}

_SESSION_COLUMNS = (
    "id, session_id, source, source_path, title, title_source, agent_id, project, started_at,"
    " updated_at, turn_count, summary, summary_kind, summary_at, summary_upto, extracted_upto,"
    " journal_upto"
)


class SessionRow(NamedTuple):
    """A row of `sessions`."""

    id: int
    session_id: str
    source: str
    source_path: str
    title: str
    title_source: str
    agent_id: str
    project: str
    started_at: float
    updated_at: float
    turn_count: int
    summary: str
    summary_kind: str
    summary_at: float
    summary_upto: int
    extracted_upto: int
    journal_upto: int


class StoredTurn(NamedTuple):
    """A row of `turns` (`id` orders the turns as they were stored)."""

    id: int
    turn_id: str
    role: str
    text: str
    ts: float
    source: str
    source_path: str
    line: int
    agent_id: str
    project: str
    speaker: str


class TurnRef(NamedTuple):
    """Where a turn sits, for ranking it among its neighbours."""

    id: int
    session_id: str
    ts: float
    speaker: str
    project: str
    agent_id: str


class FoundTurn(NamedTuple):
    """A turn found by a search, with its session's title."""

    id: int
    session_id: str
    turn_id: str
    role: str
    text: str
    ts: float
    source: str
    source_path: str
    line: int
    session_title: str
    speaker: str


class LogTotals(NamedTuple):
    """What the tailer has read: files (deleted ones too), turns, bad lines."""

    files: int
    turns: int
    bad_lines: int
    deleted: int


# -- turns ------------------------------------------------------------------------------------
def existing_texts(
    conn: sqlite3.Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """(session id, turn id) → stored text, for the keys that are stored."""
    found = select_by_keys(
        conn, "t.session_id, t.turn_id, t.text", "turns t ON t.session_id = k.column1 AND t.turn_id = k.column2",
        list(keys),
    )  # fmt: skip
    return {(r[0], r[1]): r[2] for r in found}


def add_parts(conn: sqlite3.Connection, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
    """Store message parts (part id, session id, turn id, seq, text); known parts are kept."""
    insert_rows(
        conn, "INSERT OR IGNORE INTO turn_parts(part_id, session_id, turn_id, seq, text)", rows
    )


def part_texts(conn: sqlite3.Connection, session_id: str, turn_id: str) -> list[str]:
    """The texts of a turn's stored parts, in order."""
    rows = conn.execute(
        "SELECT text FROM turn_parts WHERE session_id = ? AND turn_id = ? ORDER BY seq, part_id",
        (session_id, turn_id),
    ).fetchall()
    return [r[0] for r in rows]


def insert_turns(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert turns (session id, turn id, role, text, ts, source, source path, line, agent id,
    project, speaker) and index them in one pass (the per-row trigger is held back meanwhile).

    The rows get the ids after the current largest (one writer, one statement), so their search
    text goes in with those ids; `memd_index_text` (CJK bigrams) runs only on texts that need it.
    """
    last = conn.execute("SELECT coalesce(max(id), 0) FROM turns").fetchone()[0]
    conn.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('turns_fts_deferred', '1')")
    insert_rows(
        conn,
        "INSERT INTO turns(session_id, turn_id, role, text, ts, source, source_path, line, agent_id, project,"
        " speaker)",
        rows,
    )
    if conn.execute("SELECT max(id) FROM turns").fetchone()[0] == last + len(rows):
        docs = []
        for i, r in enumerate(rows, last + 1):
            text = f"{r[10]}: {r[3]}" if r[10] else r[3]
            docs.append((i, index_text(text)))
        insert_rows(conn, "INSERT INTO turns_fts(rowid, text)", docs)
    else:
        conn.execute(
            "INSERT INTO turns_fts(rowid, text) SELECT id, memd_index_text(CASE WHEN speaker = '' THEN text"
            " ELSE speaker || ': ' || text END) FROM turns WHERE id > ?",
            (last,),
        )
    conn.execute("DELETE FROM state WHERE key = 'turns_fts_deferred'")


def update_texts(conn: sqlite3.Connection, updates: Sequence[tuple[str, str, str]]) -> None:
    """Replace the text of stored turns: (text, session id, turn id)."""
    conn.executemany("UPDATE turns SET text = ? WHERE session_id = ? AND turn_id = ?", updates)


def turns_of(conn: sqlite3.Connection, session_id: str) -> list[StoredTurn]:
    """Every turn of a session, in storage order."""
    return list(
        map(
            StoredTurn._make,
            conn.execute(
                "SELECT id, turn_id, role, text, ts, source, source_path, line, agent_id, project, speaker"
                " FROM turns WHERE session_id = ? ORDER BY id",
                (session_id,),
            ),
        )
    )


def turns_after(
    conn: sqlite3.Connection, session_id: str, after: int, limit: int
) -> list[tuple[int, str, str, str, float, str]]:
    """(id, turn id, role, text, ts, source) of up to `limit` turns stored after turn `after`."""
    return [
        (r[0], r[1], r[2], r[3], r[4], r[5])
        for r in conn.execute(
            "SELECT id, turn_id, role, text, ts, source FROM turns WHERE session_id = ? AND id > ?"
            " ORDER BY id LIMIT ?",
            (session_id, after, limit),
        )
    ]


def turns_upto(
    conn: sqlite3.Connection, session_id: str, upto: int
) -> list[tuple[str, str, str, float, str]]:
    """(turn id, role, text, ts, source) of a session's turns up to turn `upto`, in order."""
    return [
        (r[0], r[1], r[2], r[3], r[4])
        for r in conn.execute(
            "SELECT turn_id, role, text, ts, source FROM turns WHERE session_id = ? AND id <= ? ORDER BY id",
            (session_id, upto),
        )
    ]


def turns_to_journal(
    conn: sqlite3.Connection, session_id: str, after: int, oldest: float
) -> list[tuple[int, str, str, str, float]]:
    """(id, turn id, role, text, ts) of a session's turns after `after`; the text of turns
    older than `oldest` is left empty (a bulk import of history is mostly that)."""
    return [
        (r[0], r[1], r[2], r[3], r[4])
        for r in conn.execute(
            "SELECT id, turn_id, role, CASE WHEN ts >= ? THEN text ELSE '' END, ts FROM turns"
            " WHERE session_id = ? AND id > ? ORDER BY id",
            (oldest, session_id, after),
        )
    ]


def summary_turns(
    conn: sqlite3.Connection, session_id: str, count: int, head: int, tail: int
) -> list[tuple[str, str]]:
    """(role, text) of a session's turns: all of them, or when there are more than `head` +
    `tail` (`count` is the session's turn count), the first `head` and the last `tail`."""
    q = "SELECT role, text FROM turns WHERE session_id = ? ORDER BY ts, id"
    if count <= head + tail:
        return [(r[0], r[1]) for r in conn.execute(q, (session_id,))]
    first = conn.execute(q + " LIMIT ?", (session_id, head)).fetchall()
    last = conn.execute(
        "SELECT role, text FROM (SELECT role, text, ts, id FROM turns WHERE session_id = ?"
        " ORDER BY ts DESC, id DESC LIMIT ?) ORDER BY ts, id",
        (session_id, tail),
    ).fetchall()
    return [(r[0], r[1]) for r in (*first, *last)]


def first_turn(conn: sqlite3.Connection, session_id: str) -> tuple[str, str] | None:
    """(role, text) of a session's first turn."""
    row = conn.execute(
        "SELECT role, text FROM turns WHERE session_id = ? ORDER BY ts, id LIMIT 1", (session_id,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def opening_turns(
    conn: sqlite3.Connection, session_id: str, limit: int
) -> list[tuple[int, str, str, str, float, str, str, int]]:
    """(id, turn id, role, text, ts, source, source path, line) of a session's first `limit`
    turns by time."""
    return [
        (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])
        for r in conn.execute(
            "SELECT id, turn_id, role, text, ts, source, source_path, line FROM turns"
            " WHERE session_id = ? ORDER BY ts, id LIMIT ?",
            (session_id, limit),
        )
    ]


def turn_count(conn: sqlite3.Connection, session_id: str) -> int:
    return int(
        conn.execute("SELECT count(*) FROM turns WHERE session_id = ?", (session_id,)).fetchone()[0]
    )


def nth_turn_id(conn: sqlite3.Connection, session_id: str, n: int) -> int:
    """The id of a session's `n`-th stored turn (its last when it has fewer; 0 for n <= 0)."""
    if n <= 0:
        return 0
    row = conn.execute(
        "SELECT id FROM turns WHERE session_id = ? ORDER BY id LIMIT 1 OFFSET ?",
        (session_id, n - 1),
    ).fetchone()
    if row is None:
        row = conn.execute(
            "SELECT coalesce(max(id), 0) FROM turns WHERE session_id = ?", (session_id,)
        ).fetchone()
    return int(row[0])


def parts_of(conn: sqlite3.Connection, session_id: str) -> list[tuple[str, str, int, str]]:
    """(turn id, part id, seq, text) of a session's stored message parts."""
    return [
        (p[0], p[1], p[2], p[3])
        for p in conn.execute(
            "SELECT turn_id, part_id, seq, text FROM turn_parts WHERE session_id = ? ORDER BY turn_id, seq, part_id",
            (session_id,),
        )
    ]


# -- turn search ------------------------------------------------------------------------------
def match_turns(
    conn: sqlite3.Connection,
    match: str,
    *,
    limit: int,
    session_id: str = "",
    project: str = "",
    agent_id: str = "",
    exclude_session: str = "",
    recent: bool = False,
) -> dict[int, tuple[str, float]]:
    """Turn id → (session id, score) of the turns matching an FTS5 expression: the best by
    bm25 (score = -bm25), or with `recent` the newest (all scored 1.0)."""
    where = ["turns_fts MATCH ?"]
    params: list[Any] = [match]
    for col, val in (
        ("t.session_id", session_id),
        ("t.project", project),
        ("t.agent_id", agent_id),
    ):
        if val:
            where.append(f"{col} = ?")
            params.append(val)
    if exclude_session:
        where.append("t.session_id != ?")
        params.append(exclude_session)
    return {
        r[0]: (r[1], -float(r[2]))
        for r in conn.execute(
            f"SELECT t.id, t.session_id, {'-1.0' if recent else 'bm25(turns_fts)'} FROM turns_fts"
            f" JOIN turns t ON t.id = turns_fts.rowid WHERE {' AND '.join(where)}"
            f" ORDER BY {'turns_fts.rowid DESC' if recent else 'bm25(turns_fts)'} LIMIT ?",
            (*params, limit),
        )
    }


def turn_refs(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, TurnRef]:
    """The given turns (those that exist) with their session, time, speaker, project and agent."""
    ids = tuple(ids)
    return {
        r[0]: TurnRef._make(r)
        for r in conn.execute(
            f"SELECT id, session_id, ts, speaker, project, agent_id FROM turns WHERE id IN ({','.join('?' * len(ids))})",
            ids,
        )
    }


def found_turns(conn: sqlite3.Connection, ids: Iterable[int]) -> list[FoundTurn]:
    """The given turns with their session's title (in no particular order)."""
    ids = tuple(ids)
    return list(
        map(
            FoundTurn._make,
            conn.execute(
                "SELECT t.id, t.session_id, t.turn_id, t.role, t.text, t.ts, t.source, t.source_path, t.line,"
                " coalesce(s.title, ''), t.speaker FROM turns t LEFT JOIN sessions s ON s.session_id = t.session_id"
                f" WHERE t.id IN ({','.join('?' * len(ids))})",
                ids,
            ).fetchall(),
        )
    )


# -- sessions ---------------------------------------------------------------------------------
def _rank_sql(col: str) -> str:
    whens = " ".join(f"WHEN '{k}' THEN {v}" for k, v in TITLE_RANK.items() if k)
    return f"(CASE {col} {whens} ELSE 0 END)"


_BETTER_TITLE = (
    "excluded.title != '' AND "
    + _rank_sql("excluded.title_source")
    + " > "
    + _rank_sql("sessions.title_source")
)
_SESSION_UPSERT = (
    "ON CONFLICT(session_id) DO UPDATE SET"
    " started_at = CASE WHEN sessions.started_at = 0 OR excluded.started_at < sessions.started_at"
    "   THEN excluded.started_at ELSE sessions.started_at END,"
    " updated_at = max(sessions.updated_at, excluded.updated_at),"
    " turn_count = sessions.turn_count + excluded.turn_count,"
    " agent_id = CASE WHEN sessions.agent_id = '' THEN excluded.agent_id ELSE sessions.agent_id END,"
    " project = CASE WHEN sessions.project = '' THEN excluded.project ELSE sessions.project END,"
    " source_path = CASE WHEN sessions.source_path = '' THEN excluded.source_path ELSE sessions.source_path END,"
    f" title = CASE WHEN {_BETTER_TITLE} THEN excluded.title ELSE sessions.title END,"
    f" title_source = CASE WHEN {_BETTER_TITLE} THEN excluded.title_source ELSE sessions.title_source END"
)


def upsert_sessions(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Fold what a batch says about sessions into their rows: (session id, source, source path,
    title, title source, agent id, project, started, updated, new turns). The earliest start and
    latest update win, turns add up, empty fields fill in, a title from a better source wins."""
    insert_rows(
        conn,
        "INSERT INTO sessions(session_id, source, source_path, title, title_source, agent_id, project,"
        " started_at, updated_at, turn_count)",
        rows,
        _SESSION_UPSERT,
    )


def session(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    row = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else SessionRow._make(row)


def title_and_start(conn: sqlite3.Connection, session_id: str) -> tuple[str, float] | None:
    """(title, started at) of a session."""
    row = conn.execute(
        "SELECT title, started_at FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def sessions(conn: sqlite3.Connection) -> list[SessionRow]:
    """Every session, in storage order."""
    return list(
        map(
            SessionRow._make,
            conn.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY id").fetchall(),
        )
    )


def recent_sessions(
    conn: sqlite3.Connection, *, limit: int, project: str = "", agent_id: str = ""
) -> list[SessionRow]:
    """Sessions with turns, the most recently active first (optionally of a project, an agent)."""
    where, params = ["turn_count > 0"], []
    for col, val in (("project", project), ("agent_id", agent_id)):
        if val:
            where.append(f"{col} = ?")
            params.append(val)
    return list(
        map(
            SessionRow._make,
            conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)}"
                " ORDER BY updated_at DESC LIMIT ?",
                (*params, limit),
            ).fetchall(),
        )
    )


def known_sessions(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    """Which of `ids` are stored sessions."""
    found: set[str] = set()
    for i in range(0, len(ids), 400):
        chunk = ids[i : i + 400]
        marks = ",".join("?" * len(chunk))
        found.update(
            r[0]
            for r in conn.execute(
                f"SELECT session_id FROM sessions WHERE session_id IN ({marks})", chunk
            )
        )
    return found


def title_source(conn: sqlite3.Connection, session_id: str) -> str | None:
    """Where a session's title came from ("" for none); None when there is no such session."""
    row = conn.execute(
        "SELECT title_source FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def add_titled_session(conn: sqlite3.Connection, session_id: str, title: str, source: str) -> None:
    """A session known so far only by its title."""
    conn.execute(
        "INSERT INTO sessions(session_id, source, title, title_source) VALUES (?, '', ?, ?)",
        (session_id, title, source),
    )


def set_title(conn: sqlite3.Connection, session_id: str, title: str, source: str) -> None:
    conn.execute(
        "UPDATE sessions SET title = ?, title_source = ? WHERE session_id = ?",
        (title, source, session_id),
    )


def import_session(conn: sqlite3.Connection, s: SessionRow) -> None:
    """Create or overwrite a session with every field of `s` (its cursors included); `id` and
    `journal_upto` are this index's own and are not taken."""
    conn.execute(
        "INSERT INTO sessions(session_id, source, source_path, title, title_source, agent_id, project, started_at,"
        " updated_at, turn_count, summary, summary_kind, summary_at, summary_upto, extracted_upto)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET"
        " source = excluded.source, source_path = excluded.source_path, title = excluded.title,"
        " title_source = excluded.title_source, agent_id = excluded.agent_id, project = excluded.project,"
        " started_at = excluded.started_at, updated_at = excluded.updated_at, summary = excluded.summary,"
        " summary_kind = excluded.summary_kind, summary_at = excluded.summary_at,"
        " summary_upto = excluded.summary_upto, extracted_upto = excluded.extracted_upto",
        (s.session_id, s.source, s.source_path, s.title, s.title_source, s.agent_id, s.project,
         s.started_at, s.updated_at, s.turn_count, s.summary, s.summary_kind, s.summary_at,
         s.summary_upto, s.extracted_upto),
    )  # fmt: skip


# -- summaries --------------------------------------------------------------------------------
def _due(min_step: int, max_step: int) -> str:
    return (
        "summary_kind != 'llm' AND turn_count - summary_upto"
        f" >= max({min_step}, min({max_step}, summary_upto / 4))"
    )


def count_due(conn: sqlite3.Connection, min_step: int, max_step: int) -> int:
    """Sessions with an extractive summary that is `min_step`..`max_step` turns behind (a
    quarter of the turns it covers, within those bounds)."""
    return int(
        conn.execute(f"SELECT count(*) FROM sessions WHERE {_due(min_step, max_step)}").fetchone()[
            0
        ]
    )


def due(conn: sqlite3.Connection, limit: int, min_step: int, max_step: int) -> list[str]:
    """Up to `limit` of the sessions `count_due` counts."""
    return [
        r[0]
        for r in conn.execute(
            f"SELECT session_id FROM sessions WHERE {_due(min_step, max_step)} LIMIT ?", (limit,)
        )
    ]


def summary_state(conn: sqlite3.Connection, session_id: str) -> tuple[int, int, str] | None:
    """(turn count, turns the summary covers, summary kind) of a session."""
    row = conn.execute(
        "SELECT turn_count, summary_upto, summary_kind FROM sessions WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def set_extractive_summary(
    conn: sqlite3.Connection, session_id: str, text: str, at: float, upto: int
) -> None:
    conn.execute(
        "UPDATE sessions SET summary = ?, summary_kind = 'extractive', summary_at = ?, summary_upto = ?"
        " WHERE session_id = ?",
        (text, at, upto, session_id),
    )


def set_llm_summary(
    conn: sqlite3.Connection, session_id: str, text: str, at: float, upto: int | None = None
) -> None:
    """An LLM summary covering `upto` turns (all the session's turns when None)."""
    if upto is None:
        # summary_upto counts turns, as the extractive summaries of the conversation ingest do.
        conn.execute(
            "UPDATE sessions SET summary = ?, summary_kind = 'llm', summary_at = ?, summary_upto = turn_count"
            " WHERE session_id = ?",
            (text, at, session_id),
        )
        return
    conn.execute(
        "UPDATE sessions SET summary = ?, summary_kind = 'llm', summary_at = ?, summary_upto = ?"
        " WHERE session_id = ?",
        (text, at, upto, session_id),
    )


def stored_summary(conn: sqlite3.Connection, session_id: str) -> str | None:
    """A session's stored summary ("" before the first); None when there is no such session."""
    row = conn.execute(
        "SELECT summary FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def idle_sessions(conn: sqlite3.Connection, idle_before: float) -> list[tuple[str, int]]:
    """(session id, last turn id) of sessions quiet since `idle_before` with turns the LLM
    summary job has not handled, the most recently active first."""
    rows = conn.execute(
        "SELECT s.session_id, max(t.id) FROM sessions s"
        " JOIN turns t ON t.session_id = s.session_id"
        " LEFT JOIN llm_summaries l ON l.session_id = s.session_id"
        " WHERE s.updated_at <= ? GROUP BY s.session_id"
        " HAVING max(t.id) > coalesce(max(l.upto), 0) AND max(t.ts) <= ?"
        " ORDER BY max(t.ts) DESC",
        (idle_before, idle_before),
    ).fetchall()
    return [(r[0], int(r[1])) for r in rows]


def record_llm_summary(
    conn: sqlite3.Connection, session_id: str, upto: int, at: float, outcome: str
) -> None:
    """How far the LLM summary job handled a session, and with what outcome."""
    conn.execute(
        "INSERT INTO llm_summaries(session_id, upto, at, outcome) VALUES (?,?,?,?)"
        " ON CONFLICT(session_id) DO UPDATE SET upto = excluded.upto, at = excluded.at,"
        " outcome = excluded.outcome",
        (session_id, upto, at, outcome),
    )


def note_imported_llm_summary(
    conn: sqlite3.Connection, session_id: str, upto: int, at: float
) -> None:
    """An imported LLM summary covers the session up to turn `upto` (unless the job got further)."""
    conn.execute(
        "INSERT OR IGNORE INTO llm_summaries(session_id, upto, at, outcome) VALUES (?,?,?,'imported')",
        (session_id, upto, at),
    )


# -- the journal ------------------------------------------------------------------------------
def lagging_sessions(conn: sqlite3.Connection, since: float) -> list[str]:
    """Sessions active since `since` with turns after their journal mark (a crash between a
    write and its journal leaves some; a question still waiting for its answer too)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT s.session_id FROM sessions s WHERE s.updated_at >= ?"
            " AND s.journal_upto < (SELECT max(t.id) FROM turns t WHERE t.session_id = s.session_id)",
            (since,),
        )
    ]


def journal_mark(conn: sqlite3.Connection, session_id: str) -> tuple[str, int] | None:
    """(title, last journaled turn id) of a session."""
    row = conn.execute(
        "SELECT title, journal_upto FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def set_journal_marks(conn: sqlite3.Connection, marks: dict[str, int]) -> None:
    """Move sessions' journal marks forward (session id → last journaled turn id)."""
    conn.executemany(
        "UPDATE sessions SET journal_upto = max(journal_upto, ?) WHERE session_id = ?",
        [(v, k) for k, v in marks.items()],
    )


# -- log files --------------------------------------------------------------------------------
def checkpoint(conn: sqlite3.Connection, path: str) -> Checkpoint | None:
    """Where the tailer stopped in a log file."""
    r = conn.execute(
        "SELECT inode, size, offset, lineno, head FROM log_files WHERE path = ?", (path,)
    ).fetchone()
    return None if r is None else Checkpoint(path, r[0], r[1], r[2], r[3], r[4])


def tailed_files(conn: sqlite3.Connection) -> dict[str, tuple[int, int, int]]:
    """path → (inode, size, offset) of every log file not marked deleted."""
    return {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute("SELECT path, inode, size, offset FROM log_files WHERE deleted = 0")
    }


def save_checkpoint(
    conn: sqlite3.Connection, path: str, fmt: str, cp: Checkpoint, added: int, now: float
) -> None:
    """Record how far a log was read and what it gave (turns add up, bad lines are counted)."""
    conn.execute(
        "INSERT INTO log_files(path, format, inode, size, offset, lineno, head, turns, bad_lines, updated_at, deleted)"
        " VALUES (?,?,?,?,?,?,?,?,(SELECT count(*) FROM bad_lines WHERE path = ?),?,0)"
        " ON CONFLICT(path) DO UPDATE SET format = excluded.format, inode = excluded.inode,"
        " size = excluded.size, offset = excluded.offset, lineno = excluded.lineno, head = excluded.head,"
        " turns = log_files.turns + excluded.turns, bad_lines = excluded.bad_lines,"
        " updated_at = excluded.updated_at, deleted = 0",
        (path, fmt, cp.inode, cp.size, cp.offset, cp.lineno, cp.head, added, path, now),
    )


def mark_deleted(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    conn.executemany("UPDATE log_files SET deleted = 1 WHERE path = ?", [(p,) for p in paths])


def forget_bad_lines(conn: sqlite3.Connection, path: str) -> None:
    conn.execute("DELETE FROM bad_lines WHERE path = ?", (path,))


def add_bad_lines(
    conn: sqlite3.Connection, path: str, bad: Sequence[tuple[int, str]], now: float
) -> None:
    """Record unparsable lines of a log: (line number, reason)."""
    conn.executemany(
        "INSERT OR REPLACE INTO bad_lines(path, line, reason, seen_at) VALUES (?,?,?,?)",
        [(path, n, why, now) for n, why in bad],
    )


def log_totals(conn: sqlite3.Connection) -> LogTotals:
    r = conn.execute(
        "SELECT count(*), coalesce(sum(turns), 0), coalesce(sum(bad_lines), 0),"
        " coalesce(sum(deleted), 0) FROM log_files"
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
