"""The Markdown index: files, their sections (searched in full text) and items; problems; state."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m001_memory_index(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            root TEXT NOT NULL,
            rel TEXT NOT NULL,
            kind TEXT NOT NULL,
            owner TEXT NOT NULL DEFAULT '',
            stem TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            front_matter TEXT NOT NULL DEFAULT '{}',
            pinned INTEGER NOT NULL DEFAULT 0,
            expires TEXT,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            sha256 TEXT NOT NULL DEFAULT '',
            indexed_at REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX files_root ON files(root);
        CREATE INDEX files_kind ON files(kind, owner);
        CREATE INDEX files_stem ON files(stem, kind);
        CREATE TABLE sections (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            heading TEXT NOT NULL,
            level INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            tokens INTEGER NOT NULL
        );
        CREATE INDEX sections_file ON sections(file_id, ordinal);
        CREATE VIRTUAL TABLE sections_fts USING fts5(
            heading, body, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER sections_ai AFTER INSERT ON sections BEGIN
            INSERT INTO sections_fts(rowid, heading, body)
            VALUES (new.id, memd_index_text(new.heading), memd_index_text(new.text));
        END;
        CREATE TRIGGER sections_ad AFTER DELETE ON sections BEGIN
            DELETE FROM sections_fts WHERE rowid = old.id;
        END;
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            section_id INTEGER NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            item_id TEXT NOT NULL,
            line INTEGER NOT NULL,
            text TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX items_item_id ON items(item_id);
        CREATE INDEX items_file ON items(file_id);
        CREATE TABLE problems (
            path TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            seen_at REAL NOT NULL
        );
        CREATE TABLE state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    )
