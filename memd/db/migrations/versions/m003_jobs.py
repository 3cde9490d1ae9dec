"""Background jobs: each job's state and a row per run."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m003_jobs(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE jobs (
            name TEXT PRIMARY KEY,
            last_started REAL NOT NULL DEFAULT 0,
            last_finished REAL NOT NULL DEFAULT 0,
            outcome TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL DEFAULT '',
            counts TEXT NOT NULL DEFAULT '{}',
            last_success REAL NOT NULL DEFAULT 0,
            runs INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE job_runs (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            started REAL NOT NULL,
            finished REAL NOT NULL,
            outcome TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            counts TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX job_runs_name ON job_runs(name, started);
        """,
    )
