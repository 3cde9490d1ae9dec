"""A speaker per turn, a journal cursor per session, and Claude Code titles waiting for their session."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m010_conversation_extra(conn: sqlite3.Connection) -> None:
    # journal_upto: the last turn (rowid) written to journal/, so an exchange is journaled once.
    # speaker: who said a turn when the log names people; searchable with the text, so the
    # insert/update triggers are replaced. FTS5 flushes its pending terms at every statement
    # inside a trigger (one segment per row, ~5x slower), so a batch writer sets the
    # 'turns_fts_deferred' state key and indexes its rows with one INSERT … SELECT instead.
    # pending_titles: Claude Code `summary` records wait here until their leafUuid is seen in
    # the same file (summaries of other sessions can be written into a transcript).
    run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN journal_upto INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE turns ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
        DROP TRIGGER turns_ai;
        DROP TRIGGER turns_au;
        CREATE TRIGGER turns_ai AFTER INSERT ON turns
        WHEN NOT EXISTS (SELECT 1 FROM state WHERE key = 'turns_fts_deferred') BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(
                CASE WHEN new.speaker = '' THEN new.text ELSE new.speaker || ': ' || new.text END));
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF text, speaker ON turns BEGIN
            DELETE FROM turns_fts WHERE rowid = old.id;
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(
                CASE WHEN new.speaker = '' THEN new.text ELSE new.speaker || ': ' || new.text END));
        END;
        CREATE TABLE pending_titles (
            path TEXT NOT NULL,
            leaf_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            title TEXT NOT NULL,
            line INTEGER NOT NULL,
            PRIMARY KEY (path, leaf_id)
        );
        """,
    )
