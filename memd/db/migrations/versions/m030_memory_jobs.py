"""What the memory jobs keep: memories ever written, tokens spent, summary cursors, item usage."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m030_memory_jobs(conn: sqlite3.Connection) -> None:
    # memory_hashes: every memory the extraction job ever wrote, so a line deleted or edited by
    # hand is never written again. llm_runs: tokens spent per job run (daily budget, cost report).
    # llm_summaries: how far the summary job got per session. item_usage: when `context` or
    # `search` last returned an item (decay in the archival job).
    run_script(
        conn,
        """
        CREATE TABLE memory_hashes (
            scope TEXT NOT NULL,
            hash TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            content TEXT NOT NULL,
            path TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            PRIMARY KEY (scope, hash)
        );
        CREATE INDEX memory_hashes_id ON memory_hashes(memory_id);
        CREATE TABLE llm_runs (
            id INTEGER PRIMARY KEY,
            job TEXT NOT NULL,
            started REAL NOT NULL,
            day TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            requests INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX llm_runs_day ON llm_runs(day);
        CREATE TABLE llm_summaries (
            session_id TEXT PRIMARY KEY,
            upto INTEGER NOT NULL,
            at REAL NOT NULL,
            outcome TEXT NOT NULL
        );
        CREATE TABLE item_usage (
            item_id TEXT PRIMARY KEY,
            last_used REAL NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0
        );
        """,
    )
