"""m060_agents: Claude Code sessions stored before turns named their agent become `claude-code`'s."""

from __future__ import annotations

from pathlib import Path

from memd.db.connection import connect
from memd.db.migrations import MIGRATIONS, migrate


def test_old_claude_code_sessions_and_turns_get_their_agent(tmp_path: Path) -> None:
    conn = connect(tmp_path / "old.db")
    conn.execute("CREATE TABLE _memd_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for m in MIGRATIONS[: [m.__name__ for m in MIGRATIONS].index("m060_agents")]:
        m(conn)
        conn.execute("INSERT INTO _memd_migrations VALUES (?, 0)", (m.__name__,))
    for sid, source, agent in (
        ("cc", "claude-code", ""),
        ("app", "ingest", ""),
        ("a", "ingest", "ally"),
    ):
        conn.execute(
            "INSERT INTO sessions(session_id, source, agent_id, turn_count) VALUES (?, ?, ?, 1)",
            (sid, source, agent),
        )
        conn.execute(
            "INSERT INTO turns(session_id, turn_id, role, text, ts, source, agent_id)"
            " VALUES (?, 't', 'user', 'hi there', 1.0, ?, ?)",
            (sid, source, agent),
        )
    assert migrate(conn)[:1] == ["m060_agents"]  # later migrations may follow
    want = [("a", "ally"), ("app", ""), ("cc", "claude-code")]
    for table in ("sessions", "turns"):
        got = conn.execute(f"SELECT session_id, agent_id FROM {table} ORDER BY 1").fetchall()
        assert [tuple(r) for r in got] == want, table
