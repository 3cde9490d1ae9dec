"""Conversations: sessions and their turns, searched in full text."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m002_conversations(conn: sqlite3.Connection) -> None:
    # Conversations are memory, not cache: a log deleted by its app (Claude Code keeps 30 days)
    # must never delete what memd learned from it, so these rows are only rebuilt from logs
    # that still exist and are never dropped by `reindex --full`.
    run_script(
        conn,
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            source_path TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            title_source TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            started_at REAL NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL DEFAULT 0,
            turn_count INTEGER NOT NULL DEFAULT 0,
            summary TEXT NOT NULL DEFAULT '',
            summary_kind TEXT NOT NULL DEFAULT '',
            summary_at REAL NOT NULL DEFAULT 0,
            summary_upto INTEGER NOT NULL DEFAULT 0,
            extracted_upto INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_updated ON sessions(updated_at);
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL,
            ts REAL NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            source_path TEXT NOT NULL DEFAULT '',
            line INTEGER NOT NULL DEFAULT 0,
            agent_id TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            UNIQUE (session_id, turn_id)
        );
        CREATE INDEX turns_session ON turns(session_id, ts);
        CREATE TABLE turn_parts (
            part_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (session_id, part_id)
        );
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER turns_ai AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(new.text));
        END;
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            DELETE FROM turns_fts WHERE rowid = old.id;
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF text ON turns BEGIN
            DELETE FROM turns_fts WHERE rowid = old.id;
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(new.text));
        END;
        CREATE TABLE log_files (
            path TEXT PRIMARY KEY,
            format TEXT NOT NULL,
            inode INTEGER NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            offset INTEGER NOT NULL DEFAULT 0,
            lineno INTEGER NOT NULL DEFAULT 0,
            head TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL DEFAULT 0,
            bad_lines INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE bad_lines (
            path TEXT NOT NULL,
            line INTEGER NOT NULL,
            reason TEXT NOT NULL,
            seen_at REAL NOT NULL,
            PRIMARY KEY (path, line)
        );
        """,
    )
