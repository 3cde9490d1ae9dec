"""Turns, their split-message parts and the turn search index (`turns`, `turn_parts`,
`turns_fts`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from memd.core.models import MAX_TS
from memd.core.text import index_text
from memd.db.bulk import insert_rows, select_by_keys

# Times outside 1970..MAX_TS cannot be shown by any date function: rows that hold one (written
# by an older memd, or by hand) are read as undated instead of breaking every reader.


def ts_sql(col: str) -> str:
    """A time column as read: itself when in range, else 0."""
    return f"(CASE WHEN {col} BETWEEN 0 AND {MAX_TS} THEN {col} ELSE 0 END)"


class StoredTurn(NamedTuple):
    """A row of `turns` (`id` orders the turns as they were stored)."""

    id: int
    turn_id: str
    role: str
    text: str
    ts: float
    source: str
    source_path: str
    line: int
    agent_id: str
    project: str
    speaker: str


class TurnRef(NamedTuple):
    """Where a turn sits, for ranking it among its neighbours."""

    id: int
    session_id: str
    ts: float
    speaker: str
    project: str
    agent_id: str
    source: str


class FoundTurn(NamedTuple):
    """A turn found by a search, with its session's title."""

    id: int
    session_id: str
    turn_id: str
    role: str
    text: str
    ts: float
    source: str
    source_path: str
    line: int
    session_title: str
    speaker: str


# -- turns ------------------------------------------------------------------------------------
def existing_texts(
    conn: sqlite3.Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """(session id, turn id) → stored text, for the keys that are stored."""
    found = select_by_keys(
        conn, "t.session_id, t.turn_id, t.text", "turns t ON t.session_id = k.column1 AND t.turn_id = k.column2",
        list(keys),
    )  # fmt: skip
    return {(r[0], r[1]): r[2] for r in found}


def add_parts(conn: sqlite3.Connection, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
    """Store message parts (part id, session id, turn id, seq, text); a part stored before gets
    the text it has now (a part written again as it streamed: the last copy wins)."""
    insert_rows(
        conn, "INSERT INTO turn_parts(part_id, session_id, turn_id, seq, text)", rows,
        "ON CONFLICT(session_id, part_id) DO UPDATE SET text = excluded.text, seq = excluded.seq"
        " WHERE turn_parts.text != excluded.text OR turn_parts.seq != excluded.seq",
    )  # fmt: skip


def turns_by_source(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """source → (turns, sessions) stored, from the sessions' counts: `status` asks for it, and
    counting the turns themselves read every turn of the index on each call."""
    return {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT source, sum(turn_count), count(*) FROM sessions WHERE turn_count > 0"
            " GROUP BY source"
        )
    }


def part_texts(conn: sqlite3.Connection, session_id: str, turn_id: str) -> list[str]:
    """The texts of a turn's stored parts, in order."""
    rows = conn.execute(
        "SELECT text FROM turn_parts WHERE session_id = ? AND turn_id = ? ORDER BY seq, part_id",
        (session_id, turn_id),
    ).fetchall()
    return [r[0] for r in rows]


def insert_turns(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert turns (session id, turn id, role, text, ts, source, source path, line, agent id,
    project, speaker) and index them in one pass (the per-row trigger is held back meanwhile).

    The rows get the ids after the current largest (one writer, one statement), so their search
    text goes in with those ids; `memd_index_text` (CJK bigrams) runs only on texts that need it.
    """
    last = conn.execute("SELECT coalesce(max(id), 0) FROM turns").fetchone()[0]
    conn.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('turns_fts_deferred', '1')")
    insert_rows(
        conn,
        "INSERT INTO turns(session_id, turn_id, role, text, ts, source, source_path, line, agent_id, project,"
        " speaker)",
        rows,
    )
    if conn.execute("SELECT max(id) FROM turns").fetchone()[0] == last + len(rows):
        docs = []
        for i, r in enumerate(rows, last + 1):
            text = f"{r[10]}: {r[3]}" if r[10] else r[3]
            docs.append((i, index_text(text)))
        insert_rows(conn, "INSERT INTO turns_fts(rowid, text)", docs)
    else:
        conn.execute(
            "INSERT INTO turns_fts(rowid, text) SELECT id, memd_index_text(CASE WHEN speaker = '' THEN text"
            " ELSE speaker || ': ' || text END) FROM turns WHERE id > ?",
            (last,),
        )
    conn.execute("DELETE FROM state WHERE key = 'turns_fts_deferred'")


def update_texts(conn: sqlite3.Connection, updates: Sequence[tuple[str, str, str]]) -> None:
    """Replace the text of stored turns: (text, session id, turn id)."""
    conn.executemany("UPDATE turns SET text = ? WHERE session_id = ? AND turn_id = ?", updates)


_TURN_COLUMNS = f"id, turn_id, role, text, {ts_sql('ts')}, source, source_path, line, agent_id, project, speaker"


def _turns(conn: sqlite3.Connection, rest: str, params: Sequence[Any]) -> list[StoredTurn]:
    return list(
        map(
            StoredTurn._make,
            conn.execute(f"SELECT {_TURN_COLUMNS} FROM turns WHERE session_id = ? {rest}", params),
        )
    )


def turns_of(conn: sqlite3.Connection, session_id: str) -> list[StoredTurn]:
    """Every turn of a session, in storage order."""
    return _turns(conn, "ORDER BY id", (session_id,))


def turns_after(
    conn: sqlite3.Connection, session_id: str, after: int, limit: int
) -> list[StoredTurn]:
    """Up to `limit` turns of a session stored after turn `after`, in order."""
    return _turns(conn, "AND id > ? ORDER BY id LIMIT ?", (session_id, after, limit))


def turns_upto(conn: sqlite3.Connection, session_id: str, upto: int) -> list[StoredTurn]:
    """A session's turns up to turn `upto`, in order."""
    return _turns(conn, "AND id <= ? ORDER BY id", (session_id, upto))


def opening_turns(conn: sqlite3.Connection, session_id: str, limit: int) -> list[StoredTurn]:
    """A session's first `limit` turns by time."""
    return _turns(conn, "ORDER BY ts, id LIMIT ?", (session_id, limit))


def turns_to_journal(
    conn: sqlite3.Connection, session_id: str, after: int, oldest: float
) -> list[tuple[int, str, str, str, float]]:
    """(id, turn id, role, text, ts) of a session's turns after `after`; the text of turns
    older than `oldest` is left empty (a bulk import of history is mostly that)."""
    return [
        (r[0], r[1], r[2], r[3], r[4])
        for r in conn.execute(
            f"SELECT id, turn_id, role, CASE WHEN {ts_sql('ts')} >= ? THEN text ELSE '' END,"
            f" {ts_sql('ts')} FROM turns WHERE session_id = ? AND id > ? ORDER BY id",
            (oldest, session_id, after),
        )
    ]


def summary_turns(
    conn: sqlite3.Connection, session_id: str, count: int, head: int, tail: int
) -> list[tuple[str, str]]:
    """(role, text) of a session's turns: all of them, or when there are more than `head` +
    `tail` (`count` is the session's turn count), the first `head` and the last `tail`."""
    q = "SELECT role, text FROM turns WHERE session_id = ? ORDER BY ts, id"
    if count <= head + tail:
        return [(r[0], r[1]) for r in conn.execute(q, (session_id,))]
    first = conn.execute(q + " LIMIT ?", (session_id, head)).fetchall()
    last = conn.execute(
        "SELECT role, text FROM (SELECT role, text, ts, id FROM turns WHERE session_id = ?"
        " ORDER BY ts DESC, id DESC LIMIT ?) ORDER BY ts, id",
        (session_id, tail),
    ).fetchall()
    return [(r[0], r[1]) for r in (*first, *last)]


def first_turn(conn: sqlite3.Connection, session_id: str) -> tuple[str, str] | None:
    """(role, text) of a session's first turn."""
    row = conn.execute(
        "SELECT role, text FROM turns WHERE session_id = ? ORDER BY ts, id LIMIT 1", (session_id,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def turn_count(conn: sqlite3.Connection, session_id: str) -> int:
    return int(
        conn.execute("SELECT count(*) FROM turns WHERE session_id = ?", (session_id,)).fetchone()[0]
    )


def nth_turn_id(conn: sqlite3.Connection, session_id: str, n: int) -> int:
    """The id of a session's `n`-th stored turn (its last when it has fewer; 0 for n <= 0)."""
    if n <= 0:
        return 0
    row = conn.execute(
        "SELECT id FROM turns WHERE session_id = ? ORDER BY id LIMIT 1 OFFSET ?",
        (session_id, n - 1),
    ).fetchone()
    if row is None:
        row = conn.execute(
            "SELECT coalesce(max(id), 0) FROM turns WHERE session_id = ?", (session_id,)
        ).fetchone()
    return int(row[0])


def parts_of(conn: sqlite3.Connection, session_id: str) -> list[tuple[str, str, int, str]]:
    """(turn id, part id, seq, text) of a session's stored message parts."""
    return [
        (p[0], p[1], p[2], p[3])
        for p in conn.execute(
            "SELECT turn_id, part_id, seq, text FROM turn_parts WHERE session_id = ? ORDER BY turn_id, seq, part_id",
            (session_id,),
        )
    ]


# -- turn search ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TurnScope:
    """Which turns a search looks at: those of one session, a project, an agent, or one
    assistant's logs (`source`), and not those of `exclude_session` (the conversation in
    progress). An empty field filters nothing."""

    session_id: str = ""
    project: str = ""
    agent_id: str = ""
    source: str = ""
    exclude_session: str = ""

    def holds(self, project: str, agent_id: str, source: str) -> bool:
        """Whether a turn of this project, agent and source is in scope (its session is
        checked by the query that found it)."""
        return (
            (not self.project or project == self.project)
            and (not self.agent_id or agent_id == self.agent_id)
            and (not self.source or source == self.source)
        )


EVERY_TURN = TurnScope()


def match_turns(
    conn: sqlite3.Connection,
    match: str,
    *,
    limit: int,
    scope: TurnScope = EVERY_TURN,
    recent: bool = False,
) -> dict[int, tuple[str, float]]:
    """Turn id → (session id, score) of the turns in `scope` matching an FTS5 expression: the
    best by bm25 (score = -bm25), or with `recent` the newest (all scored 1.0)."""
    where = ["turns_fts MATCH ?"]
    params: list[Any] = [match]
    for col, val in (
        ("t.session_id", scope.session_id),
        ("t.project", scope.project),
        ("t.agent_id", scope.agent_id),
        ("t.source", scope.source),
    ):
        if val:
            where.append(f"{col} = ?")
            params.append(val)
    if scope.exclude_session:
        where.append("t.session_id != ?")
        params.append(scope.exclude_session)
    if len(where) == 1 and not recent:
        # No filter on the turns: rank the matches' ids first and read the rows of the best
        # `limit` only, not of every match (the same rows: the join neither drops nor reorders).
        return {
            r[0]: (r[1], -float(r[2]))
            for r in conn.execute(
                "SELECT t.id, t.session_id, top.rank FROM (SELECT rowid AS id, bm25(turns_fts)"
                " AS rank FROM turns_fts WHERE turns_fts MATCH ? ORDER BY rank LIMIT ?) AS top"
                " JOIN turns t ON t.id = top.id ORDER BY top.rank",
                (match, limit),
            )
        }
    return {
        r[0]: (r[1], -float(r[2]))
        for r in conn.execute(
            f"SELECT t.id, t.session_id, {'-1.0' if recent else 'bm25(turns_fts)'} FROM turns_fts"
            f" JOIN turns t ON t.id = turns_fts.rowid WHERE {' AND '.join(where)}"
            f" ORDER BY {'turns_fts.rowid DESC' if recent else 'bm25(turns_fts)'} LIMIT ?",
            (*params, limit),
        )
    }


def turn_refs(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, TurnRef]:
    """The given turns (those that exist) with their session, time, speaker, project and agent."""
    ids = tuple(ids)
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples: a search reads ~1,000 of these, a Row each costs
    cur.execute(
        f"SELECT id, session_id, {ts_sql('ts')}, speaker, project, agent_id, source FROM turns"
        f" WHERE id IN ({','.join('?' * len(ids))})",
        ids,
    )
    make = TurnRef._make
    return {r[0]: make(r) for r in cur.fetchall()}


def exchange_partners(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """The other turn of each given turn's exchange, by the given turn's id: for a user's turn
    the turn right after it in its session, for an assistant's the turn right before it (in
    time, then storage order), when that turn is of the other role. Turns of other roles, and
    those with no such neighbour, are left out."""
    ids = tuple(ids)
    if not ids:
        return {}
    nxt = (
        "SELECT n.turn_id || char(31) || n.role FROM turns n WHERE n.session_id = t.session_id"
        " AND (n.ts > t.ts OR (n.ts = t.ts AND n.id > t.id)) ORDER BY n.ts, n.id LIMIT 1"
    )
    prev = (
        "SELECT n.turn_id || char(31) || n.role FROM turns n WHERE n.session_id = t.session_id"
        " AND (n.ts < t.ts OR (n.ts = t.ts AND n.id < t.id)) ORDER BY n.ts DESC, n.id DESC"
        " LIMIT 1"
    )
    cur = conn.cursor()
    cur.row_factory = None
    cur.execute(
        f"SELECT t.id, t.role, CASE t.role WHEN 'user' THEN ({nxt}) WHEN 'assistant' THEN"
        f" ({prev}) END FROM turns t WHERE t.id IN ({','.join('?' * len(ids))})",
        ids,
    )
    out: dict[int, str] = {}
    for rowid, role, other in cur.fetchall():
        if other is None:
            continue
        turn_id, _, other_role = str(other).rpartition("\x1f")
        if {role, other_role} == {"user", "assistant"}:
            out[rowid] = turn_id
    return out


def found_turns(conn: sqlite3.Connection, ids: Iterable[int]) -> list[FoundTurn]:
    """The given turns with their session's title (in no particular order)."""
    ids = tuple(ids)
    return list(
        map(
            FoundTurn._make,
            conn.execute(
                f"SELECT t.id, t.session_id, t.turn_id, t.role, t.text, {ts_sql('t.ts')}, t.source, t.source_path, t.line,"
                " coalesce(s.title, ''), t.speaker FROM turns t LEFT JOIN sessions s ON s.session_id = t.session_id"
                f" WHERE t.id IN ({','.join('?' * len(ids))})",
                ids,
            ).fetchall(),
        )
    )


# -- forgetting -------------------------------------------------------------------------------
def delete_turns(conn: sqlite3.Connection, session_id: str, turn_ids: Sequence[str]) -> int:
    """Delete turns of a session and their message parts (their search entries go with them)."""
    rows = [(session_id, t) for t in turn_ids]
    conn.executemany("DELETE FROM turn_parts WHERE session_id = ? AND turn_id = ?", rows)
    cur = conn.executemany("DELETE FROM turns WHERE session_id = ? AND turn_id = ?", rows)
    return int(cur.rowcount)


def any_forgotten(conn: sqlite3.Connection) -> bool:
    """Whether any turn was ever forgotten (most indexes: none, and no lookup is needed)."""
    return conn.execute("SELECT 1 FROM forgotten_turns LIMIT 1").fetchone() is not None


def forgotten_among(conn: sqlite3.Connection, keys: Sequence[str]) -> set[str]:
    """Which of these forgotten-turn keys are recorded."""
    found = select_by_keys(
        conn, "f.key", "forgotten_turns f ON f.key = k.column1", [(k,) for k in keys]
    )
    return {r[0] for r in found}


def add_forgotten(conn: sqlite3.Connection, keys: Sequence[str]) -> None:
    """Record forgotten-turn keys (hashes of session and turn id: the ids themselves are not kept)."""
    insert_rows(conn, "INSERT OR IGNORE INTO forgotten_turns(key)", [(k,) for k in keys])
