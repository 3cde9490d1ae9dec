"""The memory feature's storage: every SQL statement over its tables lives here.

Tables: `files`, `sections` and `items` (the index of the Markdown tree, FTS kept in step by
triggers), `problems` (files that could not be indexed), `item_usage` (when `context` or
`search` last returned an item) and `memory_hashes` (every memory memd wrote, so that a line
deleted or edited by hand is never written again). Results are plain named tuples; ranking,
snippets and the context block are built from them in `search` and `context`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import starmap
from typing import Any, Literal, NamedTuple

from memd.api.messages.status import FileProblem
from memd.core.models import ParsedFile
from memd.core.redact import redact
from memd.core.text import estimate_tokens, expand_cjk, fts_query, terms

# The memory switch ("enabled") is a `state` value; the engine reads state through here too.
from memd.db.state import get_state as get_state
from memd.db.state import set_state as set_state
from memd.memory.repo.items import IDS_PER_QUERY
from memd.memory.repo.items import (
    ExportItem as ExportItem,
)
from memd.memory.repo.items import (
    ItemRow as ItemRow,
)
from memd.memory.repo.items import (
    TreeItem as TreeItem,
)
from memd.memory.repo.items import (
    export_items as export_items,
)
from memd.memory.repo.items import (
    items_containing as items_containing,
)
from memd.memory.repo.items import (
    items_of_kinds as items_of_kinds,
)
from memd.memory.repo.items import (
    items_with_id as items_with_id,
)
from memd.memory.repo.items import (
    present_items as present_items,
)
from memd.memory.repo.items import (
    tree_items as tree_items,
)

BM25_WEIGHTS = (2.0, 1.0, 0.75)
"""bm25 weights of the sections' full-text columns: heading, body and file (its file's title
and path words, `memd.core.text.file_words`). A heading match weighs twice a body match. The
file's weight is below the body's, so that a section saying a word outranks a section of a
file named by it (at the same lengths), and of such weights it is the one doing best on fold A
of the ranking set (`bench/ranking.py --file-weights A`)."""


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


class IndexedFile(NamedTuple):
    """Where an indexed file sits: its root, its path inside it and its kind."""

    root: str
    rel: str
    kind: str


class SectionRow(NamedTuple):
    """An indexed section with the columns of its file; a full-text search also gives its
    `tokens` and its bm25 `rank` (lower is better)."""

    id: int
    path: str
    rel: str
    kind: str
    owner: str
    stem: str
    title: str
    expires: str | None
    heading: str
    ordinal: int
    start_line: int
    end_line: int
    text: str
    tokens: int = 0
    rank: float = 0.0


class MemoryHash(NamedTuple):
    """One memory memd wrote: its scope, content hash, id and text, where and when."""

    scope: str
    hash: str
    memory_id: str
    content: str
    path: str
    session_id: str
    created_at: float


def item_key(rel: str, text: str, meta: dict[str, str]) -> str:
    """An item's id: its metadata id, or a stable hash of file and text for hand-written items.

    The text is hashed as the index holds it (redacted): the same item read from the file, a
    secret in it, has the same id.
    """
    if meta.get("id"):
        return meta["id"]
    shown = redact(text)
    if shown != text:
        text = shown.strip()
    return "h_" + hashlib.sha1(f"{rel}\0{text}".encode()).hexdigest()[:10]


def _json_default(o: Any) -> str:
    return str(o)


# -- files ------------------------------------------------------------------------------------
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
    """Drop a file (its sections and items go with it) and its problem; True if it was indexed."""
    cur = conn.execute("DELETE FROM files WHERE path = ?", (path,))
    conn.execute("DELETE FROM problems WHERE path = ?", (path,))
    return cur.rowcount > 0


def indexed_file(conn: sqlite3.Connection, path: str) -> IndexedFile | None:
    """The root, relative path and kind of an indexed file."""
    row = conn.execute("SELECT root, rel, kind FROM files WHERE path = ?", (path,)).fetchone()
    return None if row is None else IndexedFile(row[0], row[1], row[2])


def paths_under(conn: sqlite3.Connection, folder: str) -> list[str]:
    """Indexed files below `folder`."""
    prefix = folder + os.sep
    return [
        r[0]
        for r in conn.execute(
            "SELECT path FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
        )
    ]


def manifest(conn: sqlite3.Connection, root: str) -> dict[str, tuple[int, int, str]]:
    """path → (mtime_ns, size, sha256) for every indexed file of a root."""
    return {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT path, mtime_ns, size, sha256 FROM files WHERE root = ?", (root,)
        )
    }


def indexed_roots(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(root, project slug) of every root the index holds files of; the slug is set for a
    project's own folder (every file of it is the project's), "" for a user-tier root."""
    return [
        (r[0], r[2] if r[1] else "")
        for r in conn.execute(
            "SELECT root, min(kind = 'project'), max(owner) FROM files GROUP BY root ORDER BY root"
        )
    ]


def manifest_of(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, tuple[int, int, str]]:
    """`manifest` for the given paths (those not indexed are left out)."""
    return {
        r[0]: (r[1], r[2], r[3])
        for path in paths
        for r in conn.execute(
            "SELECT path, mtime_ns, size, sha256 FROM files WHERE path = ?", (path,)
        )
    }


def has_files(conn: sqlite3.Connection, root: str) -> bool:
    """Whether anything of `root` is indexed."""
    return (
        conn.execute("SELECT 1 FROM files WHERE root = ? LIMIT 1", (root,)).fetchone() is not None
    )


def last_indexed_at(conn: sqlite3.Connection) -> float:
    """When a file was last (re)indexed (epoch seconds, 0 when none was)."""
    return float(conn.execute("SELECT max(indexed_at) FROM files").fetchone()[0] or 0.0)


def set_problem(conn: sqlite3.Connection, path: str, reason: str) -> None:
    conn.execute(
        "INSERT INTO problems(path, reason, seen_at) VALUES (?,?,?)"
        " ON CONFLICT(path) DO UPDATE SET reason = excluded.reason, seen_at = excluded.seen_at",
        (path, reason, time.time()),
    )


def clear_problem(conn: sqlite3.Connection, path: str) -> None:
    conn.execute("DELETE FROM problems WHERE path = ?", (path,))


def problems(conn: sqlite3.Connection) -> list[FileProblem]:
    """Files with a problem; `indexed`: the index holds text of the file all the same (broken
    front matter: the rest of the file; a file that became unreadable: its last readable
    version), so search finds it."""
    return [
        FileProblem(path=r[0], reason=r[1], seen_at=r[2], indexed=bool(r[3]))
        for r in conn.execute(
            "SELECT p.path, p.reason, p.seen_at, f.id IS NOT NULL FROM problems p"
            " LEFT JOIN files f ON f.path = p.path ORDER BY p.path"
        )
    ]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    one = conn.execute(
        "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM sections),"
        " (SELECT count(*) FROM items), (SELECT count(*) FROM problems)"
    ).fetchone()
    return {"files": one[0], "sections": one[1], "items": one[2], "problems": one[3]}


# -- sections (the context block) ---------------------------------------------------------------
def _sections(conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> list[SectionRow]:
    return list(
        starmap(
            SectionRow,
            conn.execute(
                "SELECT s.id, f.path, f.rel, f.kind, f.owner, f.stem, f.title, f.expires, s.heading,"
                " s.ordinal, s.start_line, s.end_line, s.text FROM sections s JOIN files f ON f.id = s.file_id"
                f" WHERE {where}",
                params,
            ),
        )
    )


def core_sections(conn: sqlite3.Connection) -> list[SectionRow]:
    """Every section of the `_core/` files."""
    return _sections(conn, "f.kind = 'core'", ())


def owned_sections(
    conn: sqlite3.Connection, kind: Literal["agent", "project"], owner: str
) -> list[SectionRow]:
    """Every section of one agent's or one project's files."""
    return _sections(conn, f"f.kind = '{kind}' AND f.owner = ?", (owner,))


def sections_by_id(conn: sqlite3.Connection, ids: Sequence[int]) -> list[SectionRow]:
    """The given sections (those that still exist), with their `tokens`, in no order."""
    out: list[SectionRow] = []
    for i in range(0, len(ids), IDS_PER_QUERY):
        chunk = tuple(ids[i : i + IDS_PER_QUERY])
        out += map(
            SectionRow._make,
            conn.execute(
                "SELECT s.id, f.path, f.rel, f.kind, f.owner, f.stem, f.title, f.expires, s.heading,"
                " s.ordinal, s.start_line, s.end_line, s.text, s.tokens, 0.0"
                " FROM sections s JOIN files f ON f.id = s.file_id"
                f" WHERE s.id IN ({','.join('?' * len(chunk))})",
                chunk,
            ),
        )
    return out


def named_sections(
    conn: sqlite3.Connection, stems: Sequence[str], agent_id: str = ""
) -> list[SectionRow]:
    """Sections of topic and note files named like one of `stems` (and of `agent_id`'s files)."""
    marks = ",".join("?" * len(stems))
    rows = _sections(conn, f"f.kind IN ('topic', 'note') AND f.stem IN ({marks})", stems)
    if agent_id:
        rows += _sections(
            conn, f"f.kind = 'agent' AND f.owner = ? AND f.stem IN ({marks})", (agent_id, *stems)
        )
    return rows


# -- full-text search ---------------------------------------------------------------------------
# Results kept to some files (kinds, an owner) are first looked for among this many times
# `limit` of the best matches whatever their file: ranking only the matches, as a bare full-text
# query does, and looking up the files of those few, instead of the file of every match (a
# third of a context call's time on a tree of 12,000 sections, half of them topics and notes).
# Too few of them wanted, with more matches left: the filter goes into the ranking.
WIDEN = 3


def search_sql(
    kinds: Sequence[str] = (),
    owner: bool = False,
    exclude_kinds: Sequence[str] = (),
    *,
    widened: bool = False,
) -> str:
    """The SQL behind `search_rows` (printable, testable). `widened`: the best `:wide` matches
    are ranked whatever their file and the filters apply to them only (`WIDEN`)."""
    where = []
    if kinds:
        where.append(f"f2.kind IN ({','.join(repr(k) for k in kinds)})")
    if exclude_kinds:
        where.append(f"f2.kind NOT IN ({','.join(repr(k) for k in exclude_kinds)})")
    if owner:
        where.append("f2.owner = :owner")
    inner = ["sections_fts MATCH :q", *([] if widened else where)]
    outer = [w.replace("f2.", "f.") for w in where] if widened else []
    # Rank ids only, then fetch the few winning rows: sorting every match with its text is
    # what made OR queries over common words slow.
    return (
        "SELECT s.id, f.path, f.rel, f.kind, f.owner, f.stem, f.title, f.expires, s.heading,"
        " s.ordinal, s.start_line, s.end_line, s.text, s.tokens, top.rank FROM ("
        " SELECT sections_fts.rowid AS sid,"
        f" bm25(sections_fts, {', '.join(map(str, BM25_WEIGHTS))}) AS rank"
        " FROM sections_fts"
        + (
            " JOIN sections s2 ON s2.id = sections_fts.rowid JOIN files f2 ON f2.id = s2.file_id"
            if len(inner) > 1
            else ""
        )
        + f" WHERE {' AND '.join(inner)} ORDER BY rank LIMIT {':wide' if widened else ':limit'})"
        " AS top JOIN sections s ON s.id = top.sid JOIN files f ON f.id = s.file_id"
        + (f" WHERE {' AND '.join(outer)}" if outer else "")
        + " ORDER BY top.rank"
        + (" LIMIT :limit" if widened else "")
    )


def search_rows(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int = 10,
    kinds: Sequence[str] = (),
    exclude_kinds: Sequence[str] = (),
    owner: str | None = None,
    mode: str = "auto",
) -> list[SectionRow]:
    """Sections matching `query`, best first.

    ``mode="auto"`` returns sections containing every term first, then fills up to `limit` with
    sections matching some of the terms; ``"and"`` / ``"or"`` use one of the two alone.
    """
    rows: list[SectionRow] = []
    seen: set[int] = set()
    for m in ("and", "or") if mode == "auto" else (mode,):
        q = fts_query(query, mode=m)
        if not q or len(rows) >= limit:
            break
        params: dict[str, object] = {"q": q, "limit": limit}
        if owner is not None:
            params["owner"] = owner
        for r in _ranked(conn, params, kinds, exclude_kinds, owner is not None):
            if r.id not in seen and len(rows) < limit:
                seen.add(r.id)
                rows.append(r)
        if len(expand_cjk(terms(query) or terms(query, drop_stopwords=False))) <= 1:
            break  # AND and OR are the same query (a Chinese run is searched by its bigrams)
    return rows


def _ranked(
    conn: sqlite3.Connection,
    params: dict[str, object],
    kinds: Sequence[str],
    exclude_kinds: Sequence[str],
    owner: bool,
) -> list[SectionRow]:
    """One MATCH's best `limit` sections of the wanted files (`WIDEN`)."""
    if not (kinds or exclude_kinds or owner):
        return list(map(SectionRow._make, conn.execute(search_sql(), params).fetchall()))
    limit = int(str(params["limit"]))
    wide = limit * WIDEN
    sql = search_sql(kinds, owner, exclude_kinds, widened=True)
    rows = list(map(SectionRow._make, conn.execute(sql, {**params, "wide": wide}).fetchall()))
    if len(rows) >= limit:
        return rows  # the first `limit` wanted ones of the ranking: those of a filtered one
    matches = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM sections_fts WHERE sections_fts MATCH :q LIMIT :wide)",
        {"q": params["q"], "wide": wide},
    ).fetchone()[0]
    if matches < wide:
        return rows  # every match was looked at
    sql = search_sql(kinds, owner, exclude_kinds)
    return list(map(SectionRow._make, conn.execute(sql, params).fetchall()))


# -- item use (decay) -------------------------------------------------------------------------
def last_used(conn: sqlite3.Connection) -> dict[str, float]:
    """item id → when `context` or `search` last returned it (epoch seconds)."""
    return {r[0]: float(r[1]) for r in conn.execute("SELECT item_id, last_used FROM item_usage")}


def note_used(
    conn: sqlite3.Connection, spans: list[tuple[str, int, int]], when: float, uses: int = 1
) -> int:
    """Inside a write transaction: mark every item within these (path, first, last line) spans used."""
    n = 0
    for path, first, last in spans:
        cur = conn.execute(
            "INSERT INTO item_usage(item_id, last_used, uses)"
            " SELECT i.item_id, ?, ? FROM items i JOIN files f ON f.id = i.file_id"
            " WHERE f.path = ? AND i.line BETWEEN ? AND ?"
            " ON CONFLICT(item_id) DO UPDATE SET last_used = max(last_used, excluded.last_used),"
            " uses = uses + excluded.uses",
            (when, uses, path, first, last),
        )
        n += cur.rowcount
    return n


def merge_usage(conn: sqlite3.Connection, uses: Sequence[tuple[str, float, int]]) -> None:
    """Take (item id, last used, uses) from elsewhere where it is later or more than ours."""
    conn.executemany(
        "INSERT INTO item_usage(item_id, last_used, uses) VALUES (?,?,?) ON CONFLICT(item_id) DO UPDATE SET"
        " last_used = max(item_usage.last_used, excluded.last_used), uses = max(item_usage.uses, excluded.uses)"
        " WHERE excluded.last_used > item_usage.last_used OR excluded.uses > item_usage.uses",
        uses,
    )


# -- memories memd wrote ------------------------------------------------------------------------
def known_memories(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
    """(scope, hash, memory id, content) of every memory memd wrote."""
    return [
        (r[0], r[1], r[2], r[3])
        for r in conn.execute("SELECT scope, hash, memory_id, content FROM memory_hashes")
    ]


def memory_hashes(conn: sqlite3.Connection) -> Iterable[MemoryHash]:
    """Every record of a memory memd wrote, oldest first."""
    return map(
        MemoryHash._make,
        conn.execute(
            "SELECT scope, hash, memory_id, content, path, session_id, created_at FROM memory_hashes ORDER BY rowid"
        ),
    )


def add_memory_hashes(conn: sqlite3.Connection, rows: Sequence[MemoryHash]) -> int:
    """Remember memories memd wrote (those already known are kept); returns how many are new."""
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO memory_hashes(scope, hash, memory_id, content, path, session_id, created_at)"
        " VALUES (?,?,?,?,?,?,?)",
        rows,
    )
    return conn.total_changes - before
