"""Sessions: titles, summaries and the cursors of the jobs that follow a session (journal,
LLM summaries in `llm_summaries`); extraction's cursor is the extraction repository's."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

from memd.conversations.repo.turns import ts_sql
from memd.db.bulk import insert_rows

# A later title replaces an earlier one only from an equal or better source.
TITLE_RANK = {"": 0, "first": 1, "log": 2, "summary": 3, "custom": 4, "llm": 5, "user": 6}

_SESSION_COLUMNS = (
    "id, session_id, source, source_path, title, title_source, agent_id, project,"
    f" {ts_sql('started_at')}, {ts_sql('updated_at')}, turn_count, summary, summary_kind,"
    " summary_at, summary_upto, extracted_upto, journal_upto"
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
        f"SELECT title, {ts_sql('started_at')} FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def all_sessions(conn: sqlite3.Connection) -> list[SessionRow]:
    """Every session, in storage order."""
    return list(
        map(
            SessionRow._make,
            conn.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY id").fetchall(),
        )
    )


def recent_sessions(
    conn: sqlite3.Connection,
    *,
    limit: int,
    project: str = "",
    agent_id: str = "",
    source: str = "",
) -> list[SessionRow]:
    """Sessions with turns, the most recently active first (optionally of a project, an agent,
    an assistant)."""
    where, params = ["turn_count > 0"], []
    for col, val in (("project", project), ("agent_id", agent_id), ("source", source)):
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


def session_ids_from(conn: sqlite3.Connection, prefix: str, limit: int) -> list[str]:
    """Up to `limit` session ids that start with `prefix`, in order."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT session_id FROM sessions WHERE session_id >= ? AND session_id < ?"
            " ORDER BY session_id LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
    ]


def delete_session(conn: sqlite3.Connection, session_id: str) -> None:
    """Delete a session's row and what the jobs kept about it (its turns are deleted apart)."""
    for table in ("sessions", "llm_summaries", "pending_titles"):
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))


def turns_removed(conn: sqlite3.Connection, session_id: str, removed: int) -> None:
    """A session lost `removed` turns: its count goes down and its summary and title are made
    again from what is left (an LLM summary or a title taken from a removed turn may quote it)."""
    conn.execute(
        "UPDATE sessions SET turn_count = max(turn_count - ?, 0), summary = '', summary_kind = '',"
        " summary_upto = 0, title = CASE WHEN title_source IN ('first', 'llm') THEN '' ELSE title END,"
        " title_source = CASE WHEN title_source IN ('first', 'llm') THEN '' ELSE title_source END"
        " WHERE session_id = ?",
        (removed, session_id),
    )
    conn.execute("DELETE FROM llm_summaries WHERE session_id = ?", (session_id,))


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


def projects(conn: sqlite3.Connection, limit: int = 10_000) -> list[str]:
    """The folders sessions were held in (their `project`), the most recently active first."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT project FROM sessions WHERE project != '' GROUP BY project"
            " ORDER BY max(updated_at) DESC LIMIT ?",
            (limit,),
        )
    ]


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
        f" HAVING max(t.id) > coalesce(max(l.upto), 0) AND max({ts_sql('t.ts')}) <= ?"
        f" ORDER BY max({ts_sql('t.ts')}) DESC",
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
