"""The extraction job's storage: its cursor on each session (`sessions.extracted_upto`).

The turns it reads are the conversation feature's (`memd.conversations.repo`) and the memories it
has written are the memory feature's (`memd.memory.repo`); this module holds only the statements
about how far extraction got.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PendingSession:
    """A session with turns after its extraction cursor."""

    session_id: str
    upto: int
    project: str
    agent_id: str


def pending_sessions(conn: sqlite3.Connection) -> list[PendingSession]:
    """Sessions with unextracted turns, the one whose oldest new turn is oldest first."""
    rows = conn.execute(
        "SELECT s.session_id, s.extracted_upto, s.project, s.agent_id,"
        " (SELECT min(t.ts) FROM turns t WHERE t.session_id = s.session_id AND t.id > s.extracted_upto) AS first"
        " FROM sessions s WHERE EXISTS"
        " (SELECT 1 FROM turns t WHERE t.session_id = s.session_id AND t.id > s.extracted_upto)"
        " ORDER BY first, s.session_id"
    ).fetchall()
    return [PendingSession(r[0], int(r[1]), r[2] or "", r[3] or "") for r in rows]


def advance_cursor(conn: sqlite3.Connection, session_id: str, upto: int) -> None:
    """Move a session's cursor forward to turn `upto` (never back)."""
    conn.execute(
        "UPDATE sessions SET extracted_upto = ? WHERE session_id = ? AND extracted_upto < ?",
        (upto, session_id, upto),
    )
