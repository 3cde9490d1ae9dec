"""The extraction job's storage: its cursor on each session (`sessions.extracted_upto`), and
what it keeps about agents: the signals of sessions, how far they were applied to each agent's
relationship (`relationship_sessions`) and each agent's state (`agent_state`); and the batch the
model last failed to answer (a `state` value), so a batch no model can read falls to the rules.

The turns it reads are the conversation feature's (`memd.conversations.repo`) and the memories it
has written are the memory feature's (`memd.memory.repo`); this module holds only the statements
about how far extraction got and what it derived.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from memd.db.state import delete_state, get_state, set_state


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


def session_progress(conn: sqlite3.Connection, session_id: str) -> tuple[int, int] | None:
    """(turns stored, turns read by extraction) of a session; None when there is none."""
    row = conn.execute(
        "SELECT extracted_upto FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    total, read = conn.execute(
        "SELECT count(*), coalesce(sum(id <= ?), 0) FROM turns WHERE session_id = ?",
        (row[0], session_id),
    ).fetchone()
    return int(total), int(read)


# -- agents: the signals of sessions and how far they were applied -------------------------
@dataclass(frozen=True, slots=True)
class StoredSignal:
    """A signal of a user turn as stored: thanks, praise, frustration, correction or revert."""

    kind: str
    turn_id: str
    strength: float
    evidence: str


@dataclass(frozen=True, slots=True)
class FinishedPart:
    """The part of a finished session whose signals are not applied yet: turns (after, upto]."""

    session_id: str
    agent_id: str
    title: str
    ended_at: float
    after: int
    upto: int


@dataclass(frozen=True, slots=True)
class AgentSessions:
    """One agent's sessions: (last turn time, turns) each, and the first and last times."""

    agent_id: str
    sessions: list[tuple[float, int]]
    first: float
    last: float


@dataclass(frozen=True, slots=True)
class AgentState:
    """Per agent: the end of the session whose mood the file shows, the values last written."""

    mood_at: float = 0.0
    trust: int | None = None
    familiarity: int | None = None


def add_signals(
    conn: sqlite3.Connection, session_id: str, rows: Sequence[tuple[str, str, float, str, str]]
) -> None:
    """Store a batch's signals: (turn id, kind, strength, evidence, source) rows; one per turn
    and kind, the first stored wins (a batch read again after a crash adds nothing)."""
    conn.executemany(
        "INSERT OR IGNORE INTO session_signals"
        "(session_id, turn_id, kind, strength, evidence, source) VALUES (?, ?, ?, ?, ?, ?)",
        [(session_id, *r) for r in rows],
    )


def agent_ids(conn: sqlite3.Connection) -> list[str]:
    """The agent ids the sessions name, as written."""
    rows = conn.execute("SELECT DISTINCT agent_id FROM sessions WHERE agent_id != ''")
    return [r[0] for r in rows]


def agent_sessions(
    conn: sqlite3.Connection, agent_ids: Sequence[str] | None = None
) -> list[AgentSessions]:
    """The sessions of every agent (or of these agent ids), by the agent their turns name."""
    where = "agent_id != ''"
    params: tuple[str, ...] = ()
    if agent_ids is not None:
        where, params = f"agent_id IN ({','.join('?' * len(agent_ids))})", tuple(agent_ids)
    rows = conn.execute(
        f"SELECT agent_id, started_at, updated_at, turn_count FROM sessions WHERE {where}"
        " AND turn_count > 0 ORDER BY agent_id, updated_at",
        params,
    ).fetchall()
    grouped: dict[str, list[tuple[float, float, int]]] = {}
    for agent, started, updated, turns in rows:
        grouped.setdefault(agent, []).append((started or updated, updated, int(turns)))
    return [
        AgentSessions(
            agent,
            [(updated, turns) for _, updated, turns in sessions],
            min(s[0] for s in sessions),
            max(s[1] for s in sessions),
        )
        for agent, sessions in grouped.items()
    ]


def agent_totals(conn: sqlite3.Connection) -> list[tuple[str, int, int, float, float]]:
    """Per agent id as written: (agent, sessions, turns, first, last)."""
    rows = conn.execute(
        "SELECT agent_id, count(*), sum(turn_count), min(CASE WHEN started_at > 0 THEN started_at"
        " ELSE updated_at END), max(updated_at) FROM sessions WHERE agent_id != ''"
        " AND turn_count > 0 GROUP BY agent_id"
    ).fetchall()
    return [(r[0], int(r[1]), int(r[2]), float(r[3]), float(r[4])) for r in rows]


def note_extracted(conn: sqlite3.Connection, session_id: str, agent_id: str, upto: int) -> None:
    """This device extracted a session with an agent up to turn `upto` (with the cursor)."""
    if not agent_id:
        return
    conn.execute(
        "INSERT INTO relationship_sessions(session_id, agent_id, extracted) VALUES (?, ?, ?)"
        " ON CONFLICT(session_id) DO UPDATE SET extracted = max(extracted, excluded.extracted)",
        (session_id, agent_id, upto),
    )


def finished_parts(conn: sqlite3.Connection, ended_before: float) -> list[FinishedPart]:
    """Sessions extracted here with turns whose signals were not applied yet, idle since
    `ended_before` and extracted to their last turn; the earliest ended first."""
    rows = conn.execute(
        "SELECT s.session_id, s.agent_id, s.title, s.updated_at, r.upto, r.extracted"
        " FROM relationship_sessions r JOIN sessions s ON s.session_id = r.session_id"
        " WHERE r.extracted > r.upto AND s.updated_at <= ?"
        " AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.session_id"
        "   AND t.id > r.extracted)"
        " ORDER BY s.updated_at, s.session_id",
        (ended_before,),
    ).fetchall()
    return [FinishedPart(r[0], r[1], r[2], r[3], int(r[4]), int(r[5])) for r in rows]


def part_signals(conn: sqlite3.Connection, part: FinishedPart) -> list[StoredSignal]:
    """The signals of a session's turns (after, upto], in turn order."""
    rows = conn.execute(
        "SELECT g.kind, g.turn_id, g.strength, g.evidence FROM session_signals g"
        " JOIN turns t ON t.session_id = g.session_id AND t.turn_id = g.turn_id"
        " WHERE g.session_id = ? AND t.id > ? AND t.id <= ? ORDER BY t.id, g.kind",
        (part.session_id, part.after, part.upto),
    ).fetchall()
    return [StoredSignal(r[0], r[1], float(r[2]), r[3]) for r in rows]


def mark_applied(
    conn: sqlite3.Connection,
    agent_id: str,
    parts: Sequence[tuple[FinishedPart, int]],
    *,
    mood_at: float | None,
    now: float,
) -> None:
    """Record (part, trust step) as applied to `agent_id`, and the end of the session whose mood
    the file will show (None: unchanged)."""
    conn.executemany(
        "UPDATE relationship_sessions SET upto = max(upto, ?), step = step + ?, at = ?"
        " WHERE session_id = ?",
        [(p.upto, step, now, p.session_id) for p, step in parts],
    )
    if mood_at is not None:
        conn.execute(
            "INSERT INTO agent_state(agent_id, mood_at) VALUES (?, ?) ON CONFLICT(agent_id)"
            " DO UPDATE SET mood_at = max(mood_at, excluded.mood_at)",
            (agent_id, mood_at),
        )


def agent_states(conn: sqlite3.Connection) -> dict[str, AgentState]:
    """Every agent's state row."""
    rows = conn.execute("SELECT agent_id, mood_at, trust, familiarity FROM agent_state")
    return {r[0]: AgentState(float(r[1]), r[2], r[3]) for r in rows}


def note_written(
    conn: sqlite3.Connection, agent_id: str, trust: int | None, familiarity: int, now: float
) -> None:
    """The trust and familiarity just written to an agent's file."""
    conn.execute(
        "INSERT INTO agent_state(agent_id, trust, familiarity, written_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(agent_id) DO UPDATE SET trust = coalesce(excluded.trust, trust),"
        " familiarity = excluded.familiarity, written_at = excluded.written_at",
        (agent_id, trust, familiarity, now),
    )


# The batch the model last failed to answer usably: {"session", "cursor", "runs"} (JSON).
FAILED_BATCH_KEY = "extract.failed_batch"


def failed_runs(conn: sqlite3.Connection, session_id: str, cursor: int) -> int:
    """Runs in a row whose model answer for the batch after `cursor` was unusable."""
    raw = get_state(conn, FAILED_BATCH_KEY, "")
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return 0
    if data.get("session") != session_id or data.get("cursor") != cursor:
        return 0
    runs = data.get("runs")
    return runs if isinstance(runs, int) else 0


def note_failed_batch(conn: sqlite3.Connection, session_id: str, cursor: int) -> int:
    """Count one more failed run of the batch after `cursor`; returns how many in a row."""
    runs = failed_runs(conn, session_id, cursor) + 1
    set_state(conn, FAILED_BATCH_KEY,
              json.dumps({"session": session_id, "cursor": cursor, "runs": runs}))  # fmt: skip
    return runs


def clear_failed_batch(conn: sqlite3.Connection, session_id: str) -> None:
    """A batch of `session_id` went through: forget a failure recorded for it."""
    raw = get_state(conn, FAILED_BATCH_KEY, "")
    if raw and f'"session": {json.dumps(session_id)}' in raw:
        delete_state(conn, FAILED_BATCH_KEY)
