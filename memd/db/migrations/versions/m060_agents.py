"""Agents and their relationship with the user."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m060_agents(conn: sqlite3.Connection) -> None:
    # Agents and their relationship with the user. session_signals: what the user's turns said
    # about the assistant's work (thanks, frustration, ...), written by the extraction job with
    # its cursor. subagent_turns: the turns of Claude Code sub-agent runs, without their text
    # (their "user" turns are the main agent's prompts, not the user's words), one row per turn
    # so that a transcript read again counts nothing twice; subagent_runs: the same per run,
    # kept in step in the same transaction, for reads that must stay cheap. relationship_sessions:
    # per session with an agent, how far this device extracted it (with the extraction cursor)
    # and how far its signals were applied to the agent's trust (never twice; sessions that came
    # in an import were extracted elsewhere and are not applied again here).
    # agent_state: per agent, the latest session whose mood is shown (the agent's cursor) and
    # the trust and familiarity last written to its file.
    # Claude Code sessions read before turns named their agent belong to agent `claude-code`.
    run_script(
        conn,
        """
        CREATE TABLE session_signals (
            session_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            strength REAL NOT NULL,
            evidence TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (session_id, turn_id, kind)
        );
        CREATE TABLE subagent_turns (
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            agent_type TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL,
            ts REAL NOT NULL,
            PRIMARY KEY (session_id, run_id, turn_id)
        );
        CREATE TABLE subagent_runs (
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            agent_type TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL,
            first_ts REAL NOT NULL,
            last_ts REAL NOT NULL,
            PRIMARY KEY (session_id, run_id)
        );
        CREATE INDEX subagent_runs_type ON subagent_runs(agent_type);
        CREATE TABLE relationship_sessions (
            session_id TEXT PRIMARY KEY,
            agent_id TEXT NOT NULL,
            extracted INTEGER NOT NULL DEFAULT 0,
            upto INTEGER NOT NULL DEFAULT 0,
            step INTEGER NOT NULL DEFAULT 0,
            at REAL NOT NULL DEFAULT 0
        );
        CREATE TABLE agent_state (
            agent_id TEXT PRIMARY KEY,
            mood_at REAL NOT NULL DEFAULT 0,
            trust INTEGER,
            familiarity INTEGER,
            written_at REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_agent ON sessions(agent_id, updated_at);
        UPDATE sessions SET agent_id = 'claude-code' WHERE source = 'claude-code' AND agent_id = '';
        UPDATE turns SET agent_id = 'claude-code' WHERE source = 'claude-code' AND agent_id = '';
        """,
    )
