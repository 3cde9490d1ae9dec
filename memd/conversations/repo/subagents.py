"""Sub-agent runs: the turns of Claude Code sub-agents, counted without their text.

`subagent_turns` holds one row per turn (ids and times only), so a transcript read again adds
nothing; `subagent_runs` is the same per run, refreshed for the runs a write touched, in the
same transaction.
"""

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
    """Record (session id, run id, turn id, agent type, role, ts) rows and refresh their runs; a
    turn seen again only fills in its agent type when it was unknown."""
    insert_rows(
        conn,
        "INSERT INTO subagent_turns(session_id, run_id, turn_id, agent_type, role, ts)",
        rows,
        "ON CONFLICT(session_id, run_id, turn_id) DO UPDATE SET agent_type ="
        " CASE WHEN subagent_turns.agent_type = '' THEN excluded.agent_type"
        " ELSE subagent_turns.agent_type END",
    )
    conn.executemany(
        "INSERT OR REPLACE INTO subagent_runs"
        "(session_id, run_id, agent_type, turns, first_ts, last_ts) SELECT session_id, run_id, max(agent_type), count(*), min(ts), max(ts)"
        " FROM subagent_turns WHERE session_id = ? AND run_id = ?",
        sorted({(r[0], r[1]) for r in rows}),
    )


def subagent_runs(
    conn: sqlite3.Connection, agent_types: Sequence[str] | None = None
) -> list[SubagentRun]:
    """Every sub-agent run (or the runs of these agent types), oldest first."""
    sql = "SELECT session_id, run_id, agent_type, turns, first_ts, last_ts FROM subagent_runs"
    params: tuple[str, ...] = ()
    if agent_types is not None:
        sql += f" WHERE agent_type IN ({','.join('?' * len(agent_types))})"
        params = tuple(agent_types)
    rows = conn.execute(sql + " ORDER BY first_ts, session_id, run_id", params).fetchall()
    return [SubagentRun(*r) for r in rows]


def subagent_totals(conn: sqlite3.Connection) -> list[tuple[str, int, int, float, float]]:
    """Per agent type: (type, runs, turns, first ts, last ts)."""
    rows = conn.execute(
        "SELECT agent_type, count(*), sum(turns), min(first_ts), max(last_ts) FROM subagent_runs"
        " GROUP BY agent_type ORDER BY agent_type"
    ).fetchall()
    return [(r[0], int(r[1]), int(r[2]), float(r[3]), float(r[4])) for r in rows]
