"""The memory feature's SQL for list items: find them by words or id, list them by kind, the
whole tree's for extraction and an export's. Part of `memd.memory.repo`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple

# Ids per `IN (...)` lookup: well under SQLite's variable limit.
IDS_PER_QUERY = 400


class ItemRow(NamedTuple):
    """An indexed list item with its file; `meta` is the item's metadata as stored (JSON)."""

    item_id: str
    text: str
    line: int
    meta: str
    path: str
    rel: str
    kind: str
    owner: str
    heading: str  # of the section the item is in


class TreeItem(NamedTuple):
    """An item of the tree as the extraction job plans against it."""

    text: str
    meta: str
    path: str
    kind: str
    owner: str


class ExportItem(NamedTuple):
    """An item with its file, section and use, as an export writes it."""

    item_id: str
    text: str
    meta: str
    rel: str
    root: str
    kind: str
    owner: str
    heading: str
    level: int
    last_used: float | None
    uses: int | None


# -- items ------------------------------------------------------------------------------------
_ITEM_COLUMNS = "i.item_id, i.text, i.line, i.meta, f.path, f.rel, f.kind, f.owner, s.heading"
# The tables those columns come from.
_ITEM_TABLES = "items i JOIN files f ON f.id = i.file_id JOIN sections s ON s.id = i.section_id"


def items_containing(conn: sqlite3.Connection, words: Sequence[str], limit: int) -> list[ItemRow]:
    """Items outside the archive and the journal whose text holds every one of `words`
    (lowercase)."""
    where = " AND ".join("instr(lower(i.text), ?) > 0" for _ in words)
    return list(
        map(
            ItemRow._make,
            conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM {_ITEM_TABLES}"
                f" WHERE {where} AND f.kind NOT IN ('archive', 'journal')"
                " ORDER BY f.rel, i.line LIMIT ?",
                (*words, limit),
            ).fetchall(),
        )
    )


def items_with_id(conn: sqlite3.Connection, item_id: str) -> list[ItemRow]:
    """The items carrying `item_id` (one, unless a file was copied by hand)."""
    return list(
        map(
            ItemRow._make,
            conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM {_ITEM_TABLES} WHERE i.item_id = ?",
                (item_id,),
            ).fetchall(),
        )
    )


def items_of_kinds(conn: sqlite3.Connection, kinds: Sequence[str]) -> list[ItemRow]:
    """Every item of files of these kinds, by kind, file and line."""
    marks = ",".join("?" * len(kinds))
    return list(
        map(
            ItemRow._make,
            conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM {_ITEM_TABLES}"
                f" WHERE f.kind IN ({marks}) ORDER BY f.kind, f.rel, i.line",
                tuple(kinds),
            ).fetchall(),
        )
    )


def tree_items(conn: sqlite3.Connection) -> list[TreeItem]:
    """Every item of the tree except the journal's, by file and line."""
    return list(
        map(
            TreeItem._make,
            conn.execute(
                "SELECT i.text, i.meta, f.path, f.kind, f.owner FROM items i JOIN files f ON f.id = i.file_id"
                " WHERE f.kind != 'journal' ORDER BY f.path, i.line"
            ),
        )
    )


def export_items(
    conn: sqlite3.Connection, kinds: Sequence[str], user_root: str
) -> Iterable[ExportItem]:
    """Items of files of these kinds with their section and use, the user tree's first."""
    marks = ",".join("?" * len(kinds))
    return map(
        ExportItem._make,
        conn.execute(
            "SELECT i.item_id, i.text, i.meta, f.rel, f.root, f.kind, f.owner, s.heading, s.level,"
            " u.last_used, u.uses FROM items i JOIN files f ON f.id = i.file_id"
            " JOIN sections s ON s.id = i.section_id LEFT JOIN item_usage u ON u.item_id = i.item_id"
            f" WHERE f.kind IN ({marks}) ORDER BY f.root != ?, f.root, f.rel, i.line",
            (*kinds, user_root),
        ),
    )


def present_items(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    """Which of `ids` are items of the index."""
    found: set[str] = set()
    for i in range(0, len(ids), IDS_PER_QUERY):
        chunk = ids[i : i + IDS_PER_QUERY]
        marks = ",".join("?" * len(chunk))
        found.update(
            r[0]
            for r in conn.execute(f"SELECT item_id FROM items WHERE item_id IN ({marks})", chunk)
        )
    return found
