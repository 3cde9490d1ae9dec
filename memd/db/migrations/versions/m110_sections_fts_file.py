"""Every section is found by its file's name too: a `file` column in the sections' full text.

A project's notes often never say the project's name: it is in their file's title ("# Project
blog") and path (`projects/blog/context.md`), so "blog" found the journal and the turns about
the blog, never the project's own notes. `sections_fts` gets a third column holding, for every
section, its file's title and path words (`memd.core.text.file_words`), weighted on its own in
bm25 (`memd.memory.repo.BM25_WEIGHTS`). An FTS5 table cannot gain a column: it is made again
and filled from the stored sections (docs/retrieval.md has what that costs on a large index);
the files are not read again and no vector changes.

The triggers keep the column in step: a section inserted takes its file's words, and a file
whose title, path or owner changes has them rewritten in each of its sections.
"""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m110_sections_fts_file(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        DROP TRIGGER IF EXISTS sections_ai;
        DROP TRIGGER IF EXISTS sections_ad;
        DROP TABLE IF EXISTS sections_fts;
        CREATE VIRTUAL TABLE sections_fts USING fts5(
            heading, body, file, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO sections_fts(rowid, heading, body, file)
            SELECT s.id, memd_index_text(s.heading), memd_index_text(s.text),
                   memd_file_text(f.title, f.rel, f.owner)
            FROM sections s JOIN files f ON f.id = s.file_id ORDER BY s.id;
        CREATE TRIGGER sections_ai AFTER INSERT ON sections BEGIN
            INSERT INTO sections_fts(rowid, heading, body, file)
            VALUES (new.id, memd_index_text(new.heading), memd_index_text(new.text),
                    (SELECT memd_file_text(f.title, f.rel, f.owner) FROM files f
                     WHERE f.id = new.file_id));
        END;
        CREATE TRIGGER sections_ad AFTER DELETE ON sections BEGIN
            DELETE FROM sections_fts WHERE rowid = old.id;
        END;
        CREATE TRIGGER files_name_au AFTER UPDATE OF title, rel, owner ON files
        WHEN old.title IS NOT new.title OR old.rel IS NOT new.rel OR old.owner IS NOT new.owner
        BEGIN
            UPDATE sections_fts SET file = memd_file_text(new.title, new.rel, new.owner)
            WHERE rowid IN (SELECT id FROM sections WHERE file_id = new.id);
        END;
        """,
    )
