"""Search kept to some files (kinds, an owner) ranks the best matches first and filters those
(`repo.WIDEN`): the same sections, in the same order, as the filter inside the ranking —
whether enough wanted sections are among the best matches, all matches were looked at, or the
filtered ranking has to run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memd.core.text import fts_query
from memd.db import Store
from memd.memory import repo
from memd.memory.indexer import Indexer, Root
from memd.memory.repo import SectionRow


def _filtered_in_ranking(
    conn: sqlite3.Connection,
    query: str,
    limit: int,
    kinds: tuple[str, ...],
    exclude_kinds: tuple[str, ...],
) -> list[int]:
    """The reference: every match's file looked up inside the ranking."""
    sql = repo.search_sql(kinds, False, exclude_kinds)
    rows = conn.execute(sql, {"q": fts_query(query, mode="or"), "limit": limit}).fetchall()
    return [SectionRow._make(r).id for r in rows]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A tree where the journal holds most matches of 'kestrel' and topics a few of them."""
    root = tmp_path / "memory"
    (root / "topics").mkdir(parents=True)
    (root / "journal").mkdir()
    for n in range(60):
        words = " ".join(["kestrel"] * (1 + n % 7))
        (root / "journal" / f"2026-01-{n % 28 + 1:02d}-{n}.md").write_text(
            f"# Day {n}\n\n## Log {n}\n{words} host rebooted, entry {n}\n"
        )
    for n in range(8):
        (root / "topics" / f"t{n}.md").write_text(
            f"# T{n}\n\n## Notes {n}\nthe {'kestrel ' * (1 + n % 3)}staging host, topic {n}\n"
        )
    (root / "topics" / "rare.md").write_text("# Rare\n\n## Once\nthe osprey host\n")
    s = Store.open(tmp_path / "index.db")
    Indexer(s, [Root(root)], max_file_bytes=1 << 20).reconcile()
    return s


class Recording:
    """A connection that notes which of the three queries ran."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.ran: list[str] = []

    def execute(self, sql: str, params: object = ()) -> sqlite3.Cursor:
        self.ran.append("count" if "count(*)" in sql else "wide" if ":wide" in sql else "ranked")
        return self.conn.execute(sql, params)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "limit", "kinds", "exclude", "ran"),
    [
        # The journal repeats 'kestrel' more: the best 9 of 68 matches hold too few topics.
        ("kestrel", 3, ("topic",), (), ["wide", "count", "ranked"]),
        ("kestrel host", 20, ("journal",), (), ["wide"]),  # enough among the best 60
        ("osprey", 5, ("topic",), (), ["wide", "count"]),  # every match looked at: one
        ("kestrel", 10, (), ("journal",), ["wide", "count", "ranked"]),
        ("kestrel", 10, ("journal", "topic"), (), ["wide"]),
    ],
)
def test_filtered_search_is_the_filtered_ranking(
    store: Store,
    query: str,
    limit: int,
    kinds: tuple[str, ...],
    exclude: tuple[str, ...],
    ran: list[str],
) -> None:
    conn = Recording(store.read())
    got = repo.search_rows(
        conn,  # type: ignore[arg-type]
        query,
        limit=limit,
        kinds=kinds,
        exclude_kinds=exclude,
        mode="or",
    )
    want = _filtered_in_ranking(conn.conn, query, limit, kinds=kinds, exclude_kinds=exclude)
    assert [r.id for r in got] == want and want
    assert conn.ran == ran
