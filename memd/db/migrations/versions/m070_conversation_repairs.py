"""Turns forgotten on purpose; times stored in the wrong unit; names stored unredacted."""

from __future__ import annotations

import sqlite3

_MAX_TS = 253402300799  # 9999-12-31T23:59:59Z


def _ts_by_magnitude(col: str) -> str:
    """A stored time read as seconds: in range as it is, else as ms, µs or ns, else 0."""
    cases = " ".join(
        f"WHEN {col} >= 0 AND {col} < {limit} AND {col} / {per} <= {_MAX_TS} THEN {col} / {per}"
        for limit, per in (("1e14", "1e3"), ("1e17", "1e6"), ("1e20", "1e9"))
    )
    return f"CASE WHEN {col} BETWEEN 0 AND {_MAX_TS} THEN {col} {cases} ELSE 0 END"


def m070_conversation_repairs(conn: sqlite3.Connection) -> None:
    # Turns forgotten on purpose, by a hash of (session id, turn id): a log read again (a
    # rebuilt index, a replaced transcript) must not bring them back.
    conn.execute("CREATE TABLE IF NOT EXISTS forgotten_turns (key TEXT PRIMARY KEY) WITHOUT ROWID")
    # Older versions read epoch numbers as seconds or ms only: a time sent in µs or ns was
    # stored as a year no date function can show, and broke every reader of its session.
    bad = f"NOT ({{0}} BETWEEN 0 AND {_MAX_TS})"
    conn.execute(f"UPDATE turns SET ts = {_ts_by_magnitude('ts')} WHERE {bad.format('ts')}")
    for col, agg in (("started_at", "min"), ("updated_at", "max")):
        conn.execute(
            f"UPDATE sessions SET {col} = coalesce((SELECT {agg}(t.ts) FROM turns t"
            f" WHERE t.session_id = sessions.session_id AND t.ts > 0), {_ts_by_magnitude(col)})"
            f" WHERE {bad.format(col)}"
        )
    # Names, projects and agent ids were stored as given, secrets included.
    from memd.core.redact import redact

    for table, cols in (("turns", ("speaker", "project", "agent_id")),
                        ("sessions", ("project", "agent_id"))):  # fmt: skip
        for col in cols:
            values = [r[0] for r in conn.execute(f"SELECT DISTINCT {col} FROM {table}") if r[0]]
            changed = [(redact(v), v) for v in values if redact(v) != v]
            conn.executemany(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", changed)
