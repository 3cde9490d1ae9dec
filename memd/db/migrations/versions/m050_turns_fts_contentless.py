"""The turns' full-text index keeps no second copy of their text."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m050_turns_fts_contentless(conn: sqlite3.Connection) -> None:
    # The turns' text is kept in `turns`; the FTS table kept a second copy of it (a third of
    # the index file, and a sixth of the ingest time). Contentless, FTS5 keeps only the index,
    # and a row is removed with the 'delete' command and the exact text it was indexed with,
    # which the triggers recompute from the row being deleted or updated.
    indexed = "memd_index_text(CASE WHEN {0}.speaker = '' THEN {0}.text ELSE {0}.speaker || ': ' || {0}.text END)"
    run_script(
        conn,
        f"""
        DROP TRIGGER turns_ai;
        DROP TRIGGER turns_ad;
        DROP TRIGGER turns_au;
        DROP TABLE turns_fts;
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO turns_fts(rowid, text) SELECT id, {indexed.format("turns")} FROM turns;
        CREATE TRIGGER turns_ai AFTER INSERT ON turns
        WHEN NOT EXISTS (SELECT 1 FROM state WHERE key = 'turns_fts_deferred') BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, {indexed.format("new")});
        END;
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, {indexed.format("old")});
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF text, speaker ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, {indexed.format("old")});
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, {indexed.format("new")});
        END;
        """,
    )
