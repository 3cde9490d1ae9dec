"""Sync: the outbox of changes for the cloud, per-file and per-target state, conflicts."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m020_sync_outbox(conn: sqlite3.Connection) -> None:
    # Operational state, never rebuilt: the queue of changes waiting for the cloud (one row per
    # file and target: newer changes replace queued ones), what each file looked like when it
    # was last in step with the cloud, pull cursors and errors per target, and conflicts.
    run_script(
        conn,
        """
        CREATE TABLE sync_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            target TEXT NOT NULL,
            path TEXT NOT NULL,
            op_id TEXT NOT NULL UNIQUE,
            version INTEGER NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            content TEXT NOT NULL DEFAULT '',
            sha256 TEXT NOT NULL,
            local_sha TEXT NOT NULL DEFAULT '',
            updated_at REAL NOT NULL,
            enqueued_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at REAL NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            last_attempt_at REAL NOT NULL DEFAULT 0,
            parked_at REAL NOT NULL DEFAULT 0,
            parked_config TEXT NOT NULL DEFAULT '',
            UNIQUE (target, path)
        );
        CREATE INDEX sync_outbox_due ON sync_outbox(target, parked_at, next_at, seq);
        CREATE TABLE sync_files (
            target TEXT NOT NULL,
            path TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 0,
            base_sha TEXT NOT NULL DEFAULT '',
            incoming_sha TEXT NOT NULL DEFAULT '',
            remote_device TEXT NOT NULL DEFAULT '',
            remote_sha TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (target, path)
        );
        CREATE TABLE sync_targets (
            target TEXT PRIMARY KEY,
            backend TEXT NOT NULL,
            pull_cursor REAL NOT NULL DEFAULT 0,
            summaries_cursor REAL NOT NULL DEFAULT 0,
            last_attempt_at REAL NOT NULL DEFAULT 0,
            last_success_at REAL NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            last_error_at REAL NOT NULL DEFAULT 0,
            last_push_at REAL NOT NULL DEFAULT 0,
            last_pull_at REAL NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            retry_at REAL NOT NULL DEFAULT 0,
            pushed INTEGER NOT NULL DEFAULT 0,
            pulled INTEGER NOT NULL DEFAULT 0,
            conflicts INTEGER NOT NULL DEFAULT 0,
            refused_config TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE sync_conflicts (
            id INTEGER PRIMARY KEY,
            target TEXT NOT NULL,
            path TEXT NOT NULL,
            kind TEXT NOT NULL,
            copy_path TEXT NOT NULL DEFAULT '',
            remote_device TEXT NOT NULL DEFAULT '',
            remote_version INTEGER NOT NULL DEFAULT 0,
            at REAL NOT NULL
        );
        CREATE INDEX sync_conflicts_target ON sync_conflicts(target, id);
        """,
    )
