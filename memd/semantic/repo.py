"""The semantic layer's storage: every SQL statement over `vectors` and `vector_dirty` lives here.

`vectors` holds one vector per (kind, key, model), in the int8 form of
`memd.semantic.vectors.encode` (migration m100): kind ``"section"`` or ``"item"``
keyed by the hash of the text embedded (a content key: a file re-indexed with new section ids
keeps its vectors), kind ``"turn"`` keyed by the turn's id. `vector_dirty` is the queue of
turns whose text changed (filled by triggers, emptied by the backfill worker).

The backfill worker and the vector index read the memory and conversation tables here too
(sections, items, turns): what to embed and how to scope a search. They never write them.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from memd.db.bulk import insert_rows, select_by_keys

SECTION = "section"
ITEM = "item"
TURN = "turn"
_IDS_PER_QUERY = 400


class VectorRow(NamedTuple):
    """One vector to store: its key, the hash of the text it was computed from, that text's
    dominant script, its length and its stored bytes (`memd.semantic.vectors.encode`)."""

    key: str
    text_hash: str
    script: str
    dim: int
    vec: bytes


class SectionKeyRow(NamedTuple):
    """A section as the backfill and the index see it (no text): what its content key is
    made of, where it sits, and its text's length."""

    id: int
    stem: str
    heading: str
    sha256: str
    kind: str
    owner: str
    length: int


class SectionText(NamedTuple):
    id: int
    stem: str
    heading: str
    text: str


class ItemText(NamedTuple):
    """A list item with a vector of its own (`items_to_embed`)."""

    section_id: int
    text: str


class TurnPassageRow(NamedTuple):
    """A turn with the turn before it in its session (empty when it is the first), and what
    a search of turns is scoped by."""

    id: int
    session_id: str
    project: str
    agent_id: str
    label: str
    text: str
    prev_label: str
    prev_text: str


class TurnIndexRow(NamedTuple):
    id: int
    session_id: str
    project: str
    agent_id: str
    source: str
    script: str
    dim: int
    vec: bytes


def _chunks(ids: Sequence[int]) -> Iterable[Sequence[int]]:
    for i in range(0, len(ids), _IDS_PER_QUERY):
        yield ids[i : i + _IDS_PER_QUERY]


# -- vectors ------------------------------------------------------------------------------------
def models(conn: sqlite3.Connection) -> dict[str, int]:
    """Model id → number of stored vectors."""
    return {r[0]: r[1] for r in conn.execute("SELECT model, count(*) FROM vectors GROUP BY model")}


def drop_other_models(conn: sqlite3.Connection, model: str) -> int:
    """Delete every vector not computed by `model` (and the queue: everything is redone)."""
    n = conn.execute("DELETE FROM vectors WHERE model != ?", (model,)).rowcount
    if n:
        conn.execute("DELETE FROM vector_dirty")
    return int(n)


def counts(conn: sqlite3.Connection, model: str) -> dict[str, int]:
    """Vectors of `model` per kind."""
    rows = conn.execute(
        "SELECT kind, count(*) FROM vectors WHERE model = ? GROUP BY kind", (model,)
    )
    return {r[0]: r[1] for r in rows}


def keys(conn: sqlite3.Connection, kind: str, model: str) -> dict[str, str]:
    """Key → text hash of every stored vector of one kind and model."""
    rows = conn.execute(
        "SELECT key, text_hash FROM vectors WHERE kind = ? AND model = ?", (kind, model)
    )
    return {r[0]: r[1] for r in rows}


def hashes_of(
    conn: sqlite3.Connection, kind: str, model: str, keys: Sequence[str]
) -> dict[str, str]:
    """Key → text hash for the given keys that have a vector."""
    found = select_by_keys(
        conn, "v.key, v.text_hash",
        "vectors v ON v.kind = k.column1 AND v.model = k.column2 AND v.key = k.column3",
        [(kind, model, k) for k in keys],
    )  # fmt: skip
    return {r[0]: r[1] for r in found}


def vectors_of(conn: sqlite3.Connection, kind: str, model: str) -> dict[str, tuple[str, bytes]]:
    """Key → (script, stored bytes) of every vector of one kind and model."""
    rows = conn.execute(
        "SELECT key, script, vec FROM vectors WHERE kind = ? AND model = ?", (kind, model)
    )
    return {r[0]: (r[1], r[2]) for r in rows}


def vectors_by_hash(
    conn: sqlite3.Connection, model: str, hashes: Sequence[str]
) -> dict[str, tuple[int, bytes]]:
    """Text hash → (dim, stored bytes) of a vector of `model` computed from that text, for
    the hashes that have one (of any kind: the same text embeds the same)."""
    found = select_by_keys(
        conn, "v.text_hash, v.dim, v.vec", "vectors v ON v.model = k.column1 AND v.text_hash = k.column2",
        [(model, h) for h in dict.fromkeys(hashes)],
    )  # fmt: skip
    return {r[0]: (r[1], r[2]) for r in found}


def put(conn: sqlite3.Connection, kind: str, model: str, rows: Sequence[VectorRow]) -> None:
    """Store vectors (replacing those of the same kind, model and key)."""
    now = time.time()
    insert_rows(
        conn,
        "INSERT INTO vectors(kind, model, key, text_hash, script, dim, vec, at)",
        [(kind, model, r.key, r.text_hash, r.script, r.dim, r.vec, now) for r in rows],
        "ON CONFLICT(kind, model, key) DO UPDATE SET text_hash = excluded.text_hash,"
        " script = excluded.script, dim = excluded.dim, vec = excluded.vec, at = excluded.at",
    )


def delete(conn: sqlite3.Connection, kind: str, model: str, keys: Sequence[str]) -> None:
    """Forget the vectors of these keys."""
    conn.executemany(
        "DELETE FROM vectors WHERE kind = ? AND model = ? AND key = ?",
        [(kind, model, k) for k in keys],
    )


# -- sections and items ---------------------------------------------------------------------
def data_version(conn: sqlite3.Connection) -> int:
    """Changes when another connection commits to the file (SQLite's `data_version`)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def section_signature(conn: sqlite3.Connection) -> tuple[int, int, float]:
    """(sections, largest section id, last file indexed): changes whenever the sections do."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM sections), (SELECT coalesce(max(id), 0) FROM sections),"
        " (SELECT coalesce(max(indexed_at), 0) FROM files)"
    ).fetchone()
    return int(row[0]), int(row[1]), float(row[2])


def section_keys(conn: sqlite3.Connection) -> list[SectionKeyRow]:
    """Every section without its text."""
    return list(
        map(
            SectionKeyRow._make,
            conn.execute(
                "SELECT s.id, f.stem, s.heading, s.sha256, f.kind, f.owner, length(s.text)"
                " FROM sections s JOIN files f ON f.id = s.file_id"
            ),
        )
    )


def section_texts(conn: sqlite3.Connection, ids: Sequence[int]) -> list[SectionText]:
    """The given sections with their file's stem, heading and text."""
    out: list[SectionText] = []
    for chunk in _chunks(ids):
        out += map(
            SectionText._make,
            conn.execute(
                "SELECT s.id, f.stem, s.heading, s.text FROM sections s JOIN files f ON f.id = s.file_id"
                f" WHERE s.id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ),
        )
    return out


def items_to_embed(conn: sqlite3.Connection, min_chars: int) -> list[ItemText]:
    """The items that get a vector of their own: every item of a section whose text is longer
    than `min_chars`, and every memory memd wrote (an item carrying a memd id) in a section
    holding more than one item."""
    return list(
        map(
            ItemText._make,
            conn.execute(
                "SELECT i.section_id, i.text FROM items i JOIN sections s ON s.id = i.section_id"
                " WHERE length(s.text) > ? OR (json_extract(i.meta, '$.id') IS NOT NULL"
                " AND EXISTS (SELECT 1 FROM items j WHERE j.section_id = i.section_id"
                " AND j.id != i.id)) ORDER BY i.section_id, i.line",
                (min_chars,),
            ),
        )
    )


# -- turns ----------------------------------------------------------------------------------
def last_turn_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM turns").fetchone()[0])


def turn_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])


def turns_without_vectors(conn: sqlite3.Connection, model: str, upto: int) -> list[int]:
    """Ids (up to `upto`) of the turns that have no vector of `model`, oldest first."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT t.id FROM turns t WHERE t.id <= ? AND NOT EXISTS (SELECT 1 FROM vectors v"
            " WHERE v.kind = 'turn' AND v.model = ? AND v.key = CAST(t.id AS TEXT)) ORDER BY t.id",
            (upto, model),
        )
    ]


def turn_ids_between(conn: sqlite3.Connection, after: int, upto: int) -> list[int]:
    """Ids of the turns stored after turn `after`, up to `upto`."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM turns WHERE id > ? AND id <= ? ORDER BY id", (after, upto)
        )
    ]


def dirty(conn: sqlite3.Connection, kind: str) -> dict[str, int]:
    """Key → change count of the keys queued for a fresh look (turns whose text, or whose
    predecessor's, changed)."""
    rows = conn.execute("SELECT key, seq FROM vector_dirty WHERE kind = ?", (kind,))
    return {r[0]: r[1] for r in rows}


def clear_dirty(conn: sqlite3.Connection, kind: str, seen: Sequence[tuple[str, int]]) -> None:
    """Unqueue keys, each only if it did not change again since its count was read."""
    conn.executemany(
        "DELETE FROM vector_dirty WHERE kind = ? AND key = ? AND seq = ?",
        [(kind, k, n) for k, n in seen],
    )


_LABEL = "CASE WHEN {0}.speaker != '' THEN {0}.speaker ELSE {0}.role END"


def turn_passages(conn: sqlite3.Connection, ids: Sequence[int]) -> list[TurnPassageRow]:
    """The given turns (those that exist), each with the turn stored before it in its session."""
    out: list[TurnPassageRow] = []
    for chunk in _chunks(ids):
        out += map(
            TurnPassageRow._make,
            conn.execute(
                f"SELECT t.id, t.session_id, t.project, t.agent_id, {_LABEL.format('t')}, t.text,"
                f" coalesce({_LABEL.format('p')}, ''), coalesce(p.text, '') FROM turns t"
                " LEFT JOIN turns p ON p.id = (SELECT max(id) FROM turns"
                " WHERE session_id = t.session_id AND id < t.id)"
                f" WHERE t.id IN ({','.join('?' * len(chunk))}) ORDER BY t.id",
                tuple(chunk),
            ),
        )
    return out


def turn_index_rows(conn: sqlite3.Connection, model: str) -> list[TurnIndexRow]:
    """Every stored turn vector of `model` with the turn's session, project, agent and source."""
    return list(
        map(
            TurnIndexRow._make,
            conn.execute(
                "SELECT t.id, t.session_id, t.project, t.agent_id, t.source, v.script, v.dim, v.vec"
                " FROM vectors v JOIN turns t ON t.id = CAST(v.key AS INTEGER)"
                " WHERE v.kind = 'turn' AND v.model = ? ORDER BY t.id",
                (model,),
            ),
        )
    )
