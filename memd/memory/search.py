"""Full-text search over sections (FTS5 bm25). `search_sql` returns the SQL, `search` runs it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memd.core.models import Hit
from memd.core.text import fts_query, snippet, terms

# Heading matches weigh twice as much as body matches.
BM25_WEIGHTS = (2.0, 1.0)


def search_sql(
    kinds: Sequence[str] = (), owner: bool = False, exclude_kinds: Sequence[str] = ()
) -> str:
    """The SQL behind `search_sections` (printable, testable)."""
    where = ["sections_fts MATCH :q"]
    if kinds:
        where.append(f"f2.kind IN ({','.join(repr(k) for k in kinds)})")
    if exclude_kinds:
        where.append(f"f2.kind NOT IN ({','.join(repr(k) for k in exclude_kinds)})")
    if owner:
        where.append("f2.owner = :owner")
    # Rank ids only, then fetch the few winning rows: sorting every match with its text is
    # what made OR queries over common words slow.
    return (
        "SELECT s.id, f.path, f.rel, f.kind, f.owner, f.stem, f.title, f.expires, s.heading,"
        " s.ordinal, s.start_line, s.end_line, s.text, s.tokens, top.rank FROM ("
        " SELECT sections_fts.rowid AS sid,"
        f" bm25(sections_fts, {BM25_WEIGHTS[0]}, {BM25_WEIGHTS[1]}) AS rank"
        " FROM sections_fts"
        + (
            " JOIN sections s2 ON s2.id = sections_fts.rowid JOIN files f2 ON f2.id = s2.file_id"
            if len(where) > 1
            else ""
        )
        + f" WHERE {' AND '.join(where)} ORDER BY rank LIMIT :limit) AS top"
        " JOIN sections s ON s.id = top.sid JOIN files f ON f.id = s.file_id ORDER BY top.rank"
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
) -> list[sqlite3.Row]:
    """Matching section rows (with their file columns and `rank`), best first.

    ``mode="auto"`` returns sections containing every term first, then fills up to `limit` with
    sections matching some of the terms; ``"and"`` / ``"or"`` use one of the two alone.
    """
    sql = search_sql(kinds, owner is not None, exclude_kinds)
    rows: list[sqlite3.Row] = []
    seen: set[int] = set()
    for m in ("and", "or") if mode == "auto" else (mode,):
        q = fts_query(query, mode=m)
        if not q or len(rows) >= limit:
            break
        params: dict[str, object] = {"q": q, "limit": limit}
        if owner is not None:
            params["owner"] = owner
        for r in conn.execute(sql, params).fetchall():
            if r["id"] not in seen and len(rows) < limit:
                seen.add(r["id"])
                rows.append(r)
        if len(terms(query) or terms(query, drop_stopwords=False)) <= 1:
            break  # AND and OR are the same query
    return rows


def search_sections(
    conn: sqlite3.Connection,
    query: str,
    *,
    limit: int = 10,
    kinds: Sequence[str] = (),
    exclude_kinds: Sequence[str] = (),
    owner: str | None = None,
    mode: str = "auto",
) -> list[Hit]:
    """Sections matching `query` as hits with provenance and a snippet, best first."""
    rows = search_rows(
        conn, query, limit=limit, kinds=kinds, exclude_kinds=exclude_kinds, owner=owner, mode=mode
    )
    qt = terms(query)
    return [
        Hit(
            kind="section",
            path=r["path"],
            heading=r["heading"],
            start_line=r["start_line"],
            end_line=r["end_line"],
            score=round(-float(r["rank"]), 4),
            snippet=snippet(r["text"] or r["heading"], qt),
            text=r["text"],
            file_kind=r["kind"],
            archived=r["kind"] == "archive",
        )
        for r in rows
    ]
