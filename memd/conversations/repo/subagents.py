"""Sub-agent runs: the turns of Claude Code sub-agents, counted without their text."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

from memd.db.bulk import insert_rows


class SubagentRun(NamedTuple):
    """One sub-agent run: its session, its kind (empty when unknown), turns, first and last."""

    session_id: str
    run_id: str
    agent_type: str
    turns: int
    first_ts: float
    last_ts: float


def add_subagent_turns(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Record (session id, run id, turn id, agent type, role, ts) rows; a turn seen again only
    fills in its agent type when it was unknown."""
    insert_rows(
        conn,
        "INSERT INTO subagent_turns(session_id, run_id, turn_id, agent_type, role, ts)",
        rows,
        "ON CONFLICT(session_id, run_id, turn_id) DO UPDATE SET agent_type ="
        " CASE WHEN subagent_turns.agent_type = '' THEN excluded.agent_type"
        " ELSE subagent_turns.agent_type END",
    )


def subagent_runs(conn: sqlite3.Connection) -> list[SubagentRun]:
    """Every sub-agent run, oldest first."""
    rows = conn.execute(
        "SELECT session_id, run_id, max(agent_type), count(*), min(ts), max(ts)"
        " FROM subagent_turns GROUP BY session_id, run_id ORDER BY min(ts), session_id, run_id"
    ).fetchall()
    return [SubagentRun(*r) for r in rows]
