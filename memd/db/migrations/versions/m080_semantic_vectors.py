"""Embeddings for recall by meaning, and the queue of turns to embed again."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m080_semantic_vectors(conn: sqlite3.Connection) -> None:
    # Embeddings for recall by meaning (memd/semantic), computed in the background and never
    # on a write path. `key` is a section's or an item's content key (the hash of what was
    # embedded: a file edit that gives sections new ids keeps their vectors) or a turn's id;
    # `text_hash` is the hash of the text the vector was computed from, `script` that text's
    # dominant script. A turn's vector depends on the turn before it too: the triggers below
    # queue a changed turn and its successor in `vector_dirty` for the backfill worker (only
    # an UPDATE pays for it; inserts are found by id); `seq` counts the changes, so the worker
    # clears an entry only if no change came in while it was embedding the text it had read.
    # A turn deleted (forgotten) takes its vector with it, and its successor's, whose passage
    # held part of its text, at once: the worker embeds the successor again.
    run_script(
        conn,
        """
        CREATE TABLE vectors (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            script TEXT NOT NULL DEFAULT '',
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL,
            at REAL NOT NULL,
            UNIQUE (kind, model, key)
        );
        CREATE TABLE vector_dirty (
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (kind, key)
        );
        CREATE TRIGGER turns_vector_au AFTER UPDATE OF text, speaker ON turns BEGIN
            INSERT INTO vector_dirty(kind, key) VALUES ('turn', CAST(new.id AS TEXT))
                ON CONFLICT(kind, key) DO UPDATE SET seq = seq + 1;
            INSERT INTO vector_dirty(kind, key)
                SELECT 'turn', CAST(min(id) AS TEXT) FROM turns
                WHERE session_id = new.session_id AND id > new.id HAVING min(id) IS NOT NULL
                ON CONFLICT(kind, key) DO UPDATE SET seq = seq + 1;
        END;
        CREATE TRIGGER turns_vector_ad AFTER DELETE ON turns BEGIN
            DELETE FROM vectors WHERE kind = 'turn' AND key IN (CAST(old.id AS TEXT),
                (SELECT CAST(min(id) AS TEXT) FROM turns
                 WHERE session_id = old.session_id AND id > old.id));
            INSERT INTO vector_dirty(kind, key)
                SELECT 'turn', CAST(min(id) AS TEXT) FROM turns
                WHERE session_id = old.session_id AND id > old.id HAVING min(id) IS NOT NULL
                ON CONFLICT(kind, key) DO UPDATE SET seq = seq + 1;
        END;
        """,
    )
