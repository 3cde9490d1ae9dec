"""Full-text search over sections (FTS5 bm25) as hits with provenance and a snippet.

The query itself is the repository's (`memd.memory.repo.search_sql` / `search_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memd.core.models import Hit
from memd.core.text import snippet, terms
from memd.db import Connection
from memd.memory.repo import search_rows


def search_sections(
    conn: Connection,
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
            path=r.path,
            heading=r.heading,
            start_line=r.start_line,
            end_line=r.end_line,
            score=round(-float(r.rank), 4),
            snippet=snippet(r.text or r.heading, qt),
            text=r.text,
            file_kind=r.kind,
            archived=r.kind == "archive",
        )
        for r in rows
    ]
