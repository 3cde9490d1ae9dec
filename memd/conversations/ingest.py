"""Store conversation turns: sessions, turns, split-message parts, titles and summaries.

Every function here runs inside one writer transaction (`store.w.run(lambda c: ...)`), so the
turns of a batch, their sessions and the log checkpoint that produced them commit together.
Turns are keyed by `(session_id, turn_id)`: writing the same turn again changes nothing, which
is what makes re-reading a log (after a crash, a truncation or a replaced file) harmless.
Texts are redacted (secrets, `<private>` spans) before they reach a table.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memd.conversations.summary import summarize
from memd.core.models import Turn
from memd.core.redact import redact
from memd.core.text import index_text, shorten
from memd.db.bulk import insert_rows, select_by_keys

# A later title replaces an earlier one only from an equal or better source.
TITLE_RANK = {"": 0, "first": 1, "log": 2, "summary": 3, "custom": 4, "llm": 5, "user": 6}
MAX_TURN_CHARS = 64_000
TITLE_CHARS = 80
# Summaries are rebuilt as a session grows, less often as it gets long.
SUMMARY_MIN_STEP = 2
SUMMARY_MAX_STEP = 25
SUMMARY_HEAD_TURNS = 20
SUMMARY_TAIL_TURNS = 60


@dataclass(slots=True)
class WriteReport:
    """What one batch of turns changed."""

    added: int = 0
    updated: int = 0
    sessions: set[str] = field(default_factory=set)
    new_by_session: dict[str, int] = field(default_factory=dict)

    def merge(self, other: WriteReport) -> None:
        self.added += other.added
        self.updated += other.updated
        self.sessions |= other.sessions
        for k, v in other.new_by_session.items():
            self.new_by_session[k] = self.new_by_session.get(k, 0) + v


@dataclass(slots=True)
class _Pending:
    turn: Turn
    text: str
    parts: list[tuple[int, str, str]] = field(default_factory=list)  # (seq, part_id, text)


def _cap(text: str) -> str:
    if len(text) > MAX_TURN_CHARS:
        text = text[:MAX_TURN_CHARS] + "\n…[truncated by memd]"
    return text


def clean_text(text: str) -> str:
    """What is stored for a turn: redacted, capped, stripped."""
    return _cap(redact(text).strip())


def prepare(turns: Sequence[Turn]) -> list[Turn]:
    """Turns with their stored text (`clean_text`), so the redaction can run off the writer thread."""
    out = []
    for t in turns:
        text = clean_text(t.text)
        out.append(t if text == t.text else dataclasses.replace(t, text=text))
    return out


def write_turns(
    conn: sqlite3.Connection,
    turns: Sequence[Turn],
    *,
    now: float | None = None,
    prepared: bool = False,
    summaries: bool = True,
) -> WriteReport:
    """Insert new turns, update changed ones, keep sessions (and their summaries) in step.

    Turns with a `part_id` are parts of one message (Claude Code streams an assistant message
    over several records): each part is stored once and the turn's text is its parts joined in
    `line` order. A turn with `ts == 0` gets `now`. `prepared` turns went through `prepare`
    already; with `summaries=False` the caller refreshes the touched sessions' summaries itself
    (`refresh_summaries`), after a bulk load.
    """
    now = time.time() if now is None else now
    rep = WriteReport()
    batch: dict[tuple[str, str], _Pending] = {}
    for t in turns:
        text = t.text if prepared else clean_text(t.text)
        key = (t.session_id, t.turn_id)
        p = batch.get(key)
        if p is None:
            p = batch[key] = _Pending(t if t.ts else dataclasses.replace(t, ts=now), "")
        if t.part_id:
            p.parts.append((t.line, t.part_id, text))
        else:
            p.text = text
    if not batch:
        return rep
    existing = _existing(conn, batch.keys())
    part_rows = [
        (part_id, sid, tid, seq, text)
        for (sid, tid), p in batch.items()
        for seq, part_id, text in p.parts
    ]
    if part_rows:
        insert_rows(
            conn,
            "INSERT OR IGNORE INTO turn_parts(part_id, session_id, turn_id, seq, text)",
            part_rows,
        )
    inserts: list[tuple[Any, ...]] = []
    updates: list[tuple[str, str, str]] = []
    for key, p in batch.items():
        if p.parts:
            if key in existing:
                rows = conn.execute(
                    "SELECT text FROM turn_parts WHERE session_id = ? AND turn_id = ? ORDER BY seq, part_id",
                    key,
                ).fetchall()
                texts = [r[0] for r in rows]
            else:
                texts = [text for _, _, text in sorted(p.parts)]
            p.text = _cap("\n\n".join(x for x in texts if x))
        if not p.text:
            continue
        old = existing.get(key)
        if old is None:
            t = p.turn
            inserts.append((t.session_id, t.turn_id, t.role, p.text, t.ts, t.source, t.source_path,
                            t.line, t.agent_id, t.project, t.speaker))  # fmt: skip
            rep.new_by_session[t.session_id] = rep.new_by_session.get(t.session_id, 0) + 1
        elif old != p.text:
            updates.append((p.text, key[0], key[1]))
    if inserts:
        _insert_turns(conn, inserts)
    if updates:
        conn.executemany("UPDATE turns SET text = ? WHERE session_id = ? AND turn_id = ?", updates)
    rep.added, rep.updated = len(inserts), len(updates)
    touched = {sid for _, sid, _ in updates} | set(rep.new_by_session)
    rep.sessions = touched
    _upsert_sessions(
        conn, [p for p in batch.values() if p.turn.session_id in touched], rep.new_by_session
    )
    if summaries:
        for sid in touched:
            refresh_summary(conn, sid, now=now)
    return rep


def refresh_summaries(
    conn: sqlite3.Connection, session_ids: Iterable[str], *, now: float | None = None
) -> int:
    """`refresh_summary` for several sessions; returns how many were rebuilt."""
    now = time.time() if now is None else now
    return sum(refresh_summary(conn, sid, now=now) for sid in session_ids)


def _insert_turns(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert turns and index them in one pass (the per-row trigger is held back meanwhile).

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


def _existing(
    conn: sqlite3.Connection, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    found = select_by_keys(
        conn, "t.session_id, t.turn_id, t.text", "turns t ON t.session_id = k.column1 AND t.turn_id = k.column2",
        list(keys),
    )  # fmt: skip
    return {(r[0], r[1]): r[2] for r in found}


@dataclass(slots=True)
class _SessionRow:
    """What one batch says about a session (folded into its row by `_upsert_sessions`)."""

    source: str
    path: str
    agent: str
    project: str
    start: float
    end: float
    title: str = ""
    title_source: str = ""
    first_ts: float = 0.0
    first_text: str | None = None


def _upsert_sessions(
    conn: sqlite3.Connection, pending: list[_Pending], added: dict[str, int]
) -> None:
    agg: dict[str, _SessionRow] = {}
    for p in pending:
        t = p.turn
        a = agg.get(t.session_id)
        if a is None:
            a = agg[t.session_id] = _SessionRow(
                t.source, t.source_path, t.agent_id, t.project, t.ts, t.ts
            )
        if t.ts < a.start:
            a.start = t.ts
        if t.ts > a.end:
            a.end = t.ts
        if not a.agent and t.agent_id:
            a.agent = t.agent_id
        if not a.project and t.project:
            a.project = t.project
        if not a.path and t.source_path:
            a.path = t.source_path
        if t.session_title and not a.title:
            a.title, a.title_source = shorten(redact(t.session_title), TITLE_CHARS), "log"
        if t.role == "user" and (a.first_text is None or t.ts < a.first_ts):
            a.first_ts, a.first_text = t.ts, p.text
    rows = []
    for sid, a in agg.items():
        title, source = a.title, a.title_source
        if not title and a.first_text is not None:
            title, source = shorten(a.first_text, TITLE_CHARS), "first"
        rows.append(
            (
                sid,
                a.source,
                a.path,
                title,
                source,
                a.agent,
                a.project,
                a.start,
                a.end,
                added.get(sid, 0),
            )
        )
    insert_rows(
        conn,
        "INSERT INTO sessions(session_id, source, source_path, title, title_source, agent_id, project,"
        " started_at, updated_at, turn_count)",
        rows,
        "ON CONFLICT(session_id) DO UPDATE SET"
        " started_at = CASE WHEN sessions.started_at = 0 OR excluded.started_at < sessions.started_at"
        "   THEN excluded.started_at ELSE sessions.started_at END,"
        " updated_at = max(sessions.updated_at, excluded.updated_at),"
        " turn_count = sessions.turn_count + excluded.turn_count,"
        " agent_id = CASE WHEN sessions.agent_id = '' THEN excluded.agent_id ELSE sessions.agent_id END,"
        " project = CASE WHEN sessions.project = '' THEN excluded.project ELSE sessions.project END,"
        " source_path = CASE WHEN sessions.source_path = '' THEN excluded.source_path ELSE sessions.source_path END,"
        " title = CASE WHEN excluded.title != '' AND "
        + _rank_sql("excluded.title_source")
        + " > "
        + _rank_sql("sessions.title_source")
        + " THEN excluded.title ELSE sessions.title END,"
        " title_source = CASE WHEN excluded.title != '' AND "
        + _rank_sql("excluded.title_source")
        + " > "
        + _rank_sql("sessions.title_source")
        + " THEN excluded.title_source ELSE sessions.title_source END",
    )


def _rank_sql(col: str) -> str:
    whens = " ".join(f"WHEN '{k}' THEN {v}" for k, v in TITLE_RANK.items() if k)
    return f"(CASE {col} {whens} ELSE 0 END)"


def set_title(conn: sqlite3.Connection, session_id: str, title: str, source: str) -> bool:
    """Give a session a title unless it already has one from a better source; True if set."""
    title = shorten(redact(title), TITLE_CHARS)
    if not title:
        return False
    row = conn.execute(
        "SELECT title_source FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO sessions(session_id, source, title, title_source) VALUES (?, '', ?, ?)",
            (session_id, title, source),
        )
        return True
    if TITLE_RANK.get(source, 0) < TITLE_RANK.get(row[0], 0):
        return False
    conn.execute(
        "UPDATE sessions SET title = ?, title_source = ? WHERE session_id = ?",
        (title, source, session_id),
    )
    return True


def summary_due(turn_count: int, summary_upto: int) -> bool:
    """Whether a session that grew to `turn_count` turns needs its summary rebuilt."""
    step = max(SUMMARY_MIN_STEP, min(SUMMARY_MAX_STEP, summary_upto // 4))
    return turn_count - summary_upto >= step


_DUE = (
    "summary_kind != 'llm' AND turn_count - summary_upto"
    f" >= max({SUMMARY_MIN_STEP}, min({SUMMARY_MAX_STEP}, summary_upto / 4))"
)


def summaries_due(conn: sqlite3.Connection) -> int:
    """How many sessions wait for their summary to be rebuilt (`summary_due`, in SQL)."""
    return int(conn.execute(f"SELECT count(*) FROM sessions WHERE {_DUE}").fetchone()[0])


def due_sessions(conn: sqlite3.Connection, limit: int) -> list[str]:
    """Sessions whose summary is due, e.g. left behind by a crash before a bulk load ended."""
    return [
        r[0]
        for r in conn.execute(f"SELECT session_id FROM sessions WHERE {_DUE} LIMIT ?", (limit,))
    ]


def refresh_summary(
    conn: sqlite3.Connection, session_id: str, *, now: float, force: bool = False
) -> bool:
    """Rebuild the extractive summary when the session grew enough; an LLM summary is kept."""
    row = conn.execute(
        "SELECT turn_count, summary_upto, summary_kind FROM sessions WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if row is None or row[2] == "llm":
        return False
    if not force and not summary_due(row[0], row[1]):
        return False
    text = summarize(session_turns_for_summary(conn, session_id, row[0]))
    conn.execute(
        "UPDATE sessions SET summary = ?, summary_kind = 'extractive', summary_at = ?, summary_upto = ?"
        " WHERE session_id = ?",
        (text, now, row[0], session_id),
    )
    return True


def session_turns_for_summary(
    conn: sqlite3.Connection, session_id: str, count: int
) -> list[tuple[str, str]]:
    """The `(role, text)` turns a summary is built from: the start and the latest of a long session."""
    q = "SELECT role, text FROM turns WHERE session_id = ? ORDER BY ts, id"
    if count <= SUMMARY_HEAD_TURNS + SUMMARY_TAIL_TURNS:
        return [(r[0], r[1]) for r in conn.execute(q, (session_id,))]
    head = conn.execute(q + " LIMIT ?", (session_id, SUMMARY_HEAD_TURNS)).fetchall()
    tail = conn.execute(
        "SELECT role, text FROM (SELECT role, text, ts, id FROM turns WHERE session_id = ?"
        " ORDER BY ts DESC, id DESC LIMIT ?) ORDER BY ts, id",
        (session_id, SUMMARY_TAIL_TURNS),
    ).fetchall()
    return [(r[0], r[1]) for r in (*head, *tail)]
