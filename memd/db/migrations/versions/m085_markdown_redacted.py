"""The Markdown index holds files redacted: files indexed before lose what they showed."""

from __future__ import annotations

import sqlite3


def m085_markdown_redacted(conn: sqlite3.Connection) -> None:
    # The Markdown index now holds files redacted, `<private>` spans left out. Files indexed
    # before that which hold either lose their sections and items here (nothing of them is
    # served meanwhile) and are read again by the next reconcile (their sha and mtime reset).
    from memd.core.redact import redact

    def shows_more(value: str) -> bool:
        return "<private" in value.lower() or redact(value) != value

    stale = {
        file_id
        for sql in (
            "SELECT id, title || char(10) || front_matter FROM files",
            "SELECT file_id, heading || char(10) || text FROM sections",
        )
        for file_id, value in conn.execute(sql)
        if shows_more(value)
    }
    if not stale:
        return
    # Deleted rows are overwritten, not only unlinked, and the full-text index is merged so
    # no segment keeps the old terms.
    was = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        for file_id in sorted(stale):
            conn.execute("DELETE FROM sections WHERE file_id = ?", (file_id,))
            conn.execute(
                "UPDATE files SET title = '', front_matter = '{}', mtime_ns = 0, sha256 = ''"
                " WHERE id = ?",
                (file_id,),
            )
        conn.execute("INSERT INTO sections_fts(sections_fts) VALUES ('optimize')")
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(was)}")
