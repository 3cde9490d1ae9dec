"""Writes and reads of indexed Markdown files, their sections and list items."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from memd.core.models import ParsedFile
from memd.core.text import estimate_tokens


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A Markdown file as seen on disk."""

    path: str
    root: str
    rel: str
    kind: str
    owner: str
    mtime_ns: int
    size: int
    sha256: str


def item_key(rel: str, text: str, meta: dict[str, str]) -> str:
    """An item's id: its metadata id, or a stable hash of file and text for hand-written items."""
    if meta.get("id"):
        return meta["id"]
    return "h_" + hashlib.sha1(f"{rel}\0{text}".encode()).hexdigest()[:10]


def _json_default(o: Any) -> str:
    return str(o)


def upsert_file(conn: sqlite3.Connection, rec: FileRecord, parsed: ParsedFile) -> int:
    """Replace a file's row, sections and items (FTS is kept in step by triggers)."""
    fm = parsed.front_matter
    pinned = 1 if fm.get("pinned") in (True, "true", "yes", 1) else 0
    expires = str(fm["expires"]) if fm.get("expires") else None
    row = conn.execute("SELECT id FROM files WHERE path = ?", (rec.path,)).fetchone()
    stem = rec.rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    values = (
        rec.root, rec.rel, rec.kind, rec.owner, stem, parsed.title,
        json.dumps(fm, default=_json_default, ensure_ascii=False), pinned, expires,
        rec.mtime_ns, rec.size, rec.sha256, time.time(),
    )  # fmt: skip
    if row is None:
        cur = conn.execute(
            "INSERT INTO files(root, rel, kind, owner, stem, title, front_matter, pinned, expires,"
            " mtime_ns, size, sha256, indexed_at, path) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (*values, rec.path),
        )
        file_id = int(cur.lastrowid or 0)
    else:
        file_id = int(row[0])
        conn.execute("DELETE FROM sections WHERE file_id = ?", (file_id,))
        conn.execute(
            "UPDATE files SET root=?, rel=?, kind=?, owner=?, stem=?, title=?, front_matter=?, pinned=?,"
            " expires=?, mtime_ns=?, size=?, sha256=?, indexed_at=? WHERE id = ?",
            (*values, file_id),
        )
    for s in parsed.sections:
        cur = conn.execute(
            "INSERT INTO sections(file_id, ordinal, heading, level, start_line, end_line, text,"
            " sha256, tokens) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                file_id, s.ordinal, s.heading, s.level, s.start_line, s.end_line, s.text,
                hashlib.sha256(s.text.encode()).hexdigest(),
                estimate_tokens(f"## {s.heading}\n{s.text}"),
            ),
        )  # fmt: skip
        sid = cur.lastrowid
        if s.items:
            conn.executemany(
                "INSERT INTO items(section_id, file_id, item_id, line, text, meta)"
                " VALUES (?,?,?,?,?,?)",
                [
                    (sid, file_id, item_key(rec.rel, it.text, it.meta), it.line, it.text,
                     json.dumps(it.meta, ensure_ascii=False))
                    for it in s.items
                ],
            )  # fmt: skip
    return file_id


def touch_file(conn: sqlite3.Connection, path: str, mtime_ns: int, size: int) -> None:
    """Record a new mtime/size for a file whose content hash did not change."""
    conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))


def delete_file(conn: sqlite3.Connection, path: str) -> bool:
    cur = conn.execute("DELETE FROM files WHERE path = ?", (path,))
    conn.execute("DELETE FROM problems WHERE path = ?", (path,))
    return cur.rowcount > 0


def delete_under(conn: sqlite3.Connection, folder: str) -> int:
    """Delete every file below `folder` (a moved or deleted directory)."""
    prefix = folder.rstrip("/") + "/"
    cur = conn.execute("DELETE FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix))
    conn.execute("DELETE FROM problems WHERE substr(path, 1, ?) = ?", (len(prefix), prefix))
    return cur.rowcount


def set_problem(conn: sqlite3.Connection, path: str, reason: str) -> None:
    conn.execute(
        "INSERT INTO problems(path, reason, seen_at) VALUES (?,?,?)"
        " ON CONFLICT(path) DO UPDATE SET reason = excluded.reason, seen_at = excluded.seen_at",
        (path, reason, time.time()),
    )


def clear_problem(conn: sqlite3.Connection, path: str) -> None:
    conn.execute("DELETE FROM problems WHERE path = ?", (path,))


def manifest(conn: sqlite3.Connection, root: str) -> dict[str, tuple[int, int, str]]:
    """path → (mtime_ns, size, sha256) for every indexed file of a root."""
    return {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT path, mtime_ns, size, sha256 FROM files WHERE root = ?", (root,)
        )
    }


def problems(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [
        {"path": r[0], "reason": r[1], "seen_at": r[2]}
        for r in conn.execute("SELECT path, reason, seen_at FROM problems ORDER BY path")
    ]


def get_state(conn: sqlite3.Connection, key: str, default: str = "") -> str:
    row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else default


def set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO state(key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    one = conn.execute(
        "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM sections),"
        " (SELECT count(*) FROM items), (SELECT count(*) FROM problems)"
    ).fetchone()
    return {"files": one[0], "sections": one[1], "items": one[2], "problems": one[3]}
