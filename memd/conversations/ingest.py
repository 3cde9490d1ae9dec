"""Store conversation turns: sessions, turns, split-message parts, titles and summaries.

Every function here runs inside one writer transaction (`store.w.run(lambda c: ...)`), so the
turns of a batch, their sessions and the log checkpoint that produced them commit together.
Turns are keyed by `(session_id, turn_id)`: writing the same turn again changes nothing, which
is what makes re-reading a log (after a crash, a truncation or a replaced file) harmless; a
turn forgotten on purpose (`forgotten_key`) is never written again. Texts, and the names,
projects, agents and titles that come with them, are redacted (secrets, `<private>` spans)
before they reach a table.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memd.conversations import repo
from memd.conversations.repo import TITLE_RANK
from memd.conversations.summary import summarize
from memd.core.models import Turn
from memd.core.redact import redact
from memd.core.text import shorten
from memd.db import Connection

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


@functools.lru_cache(maxsize=4096)
def _clean_field(value: str) -> str:
    # The same few names, projects and agents come with every turn of a log.
    return redact(value)


def clean_turn(t: Turn) -> Turn:
    """A turn as it is stored: its text (`clean_text`) and its name, project, agent and title
    redacted."""
    text = clean_text(t.text)
    speaker, project, agent, title = (
        _clean_field(v) if v else v for v in (t.speaker, t.project, t.agent_id, t.session_title)
    )
    if (text, speaker, project, agent, title) == (t.text, t.speaker, t.project, t.agent_id,
                                                  t.session_title):  # fmt: skip
        return t
    return dataclasses.replace(
        t, text=text, speaker=speaker, project=project, agent_id=agent, session_title=title
    )


def prepare(turns: Sequence[Turn]) -> list[Turn]:
    """Turns as they are stored (`clean_turn`), so the redaction can run off the writer thread."""
    return [clean_turn(t) for t in turns]


def forgotten_key(session_id: str, turn_id: str) -> str:
    """How a forgotten turn is remembered: a hash of its key, not the ids themselves."""
    return hashlib.sha256(f"{session_id}\0{turn_id}".encode("utf-8", "surrogatepass")).hexdigest()[
        :32
    ]


def write_turns(
    conn: Connection,
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
        if not prepared:
            t = clean_turn(t)
        key = (t.session_id, t.turn_id)
        p = batch.get(key)
        if p is None:
            p = batch[key] = _Pending(t if t.ts else dataclasses.replace(t, ts=now), "")
        if t.part_id:
            p.parts.append((t.line, t.part_id, t.text))
        else:
            p.text = t.text
    _drop_forgotten(conn, batch)
    if not batch:
        return rep
    existing = repo.existing_texts(conn, batch.keys())
    part_rows = [
        (part_id, sid, tid, seq, text)
        for (sid, tid), p in batch.items()
        for seq, part_id, text in p.parts
    ]
    if part_rows:
        repo.add_parts(conn, part_rows)
    inserts: list[tuple[Any, ...]] = []
    updates: list[tuple[str, str, str]] = []
    for key, p in batch.items():
        if p.parts:
            if key in existing:
                texts = repo.part_texts(conn, *key)
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
        repo.insert_turns(conn, inserts)
    if updates:
        repo.update_texts(conn, updates)
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


def _drop_forgotten(conn: Connection, batch: dict[tuple[str, str], _Pending]) -> None:
    if not batch or not repo.any_forgotten(conn):
        return
    keys = {forgotten_key(*k): k for k in batch}
    for key in repo.forgotten_among(conn, list(keys)):
        del batch[keys[key]]


def refresh_summaries(
    conn: Connection, session_ids: Iterable[str], *, now: float | None = None
) -> int:
    """`refresh_summary` for several sessions; returns how many were rebuilt."""
    now = time.time() if now is None else now
    return sum(refresh_summary(conn, sid, now=now) for sid in session_ids)


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


def _upsert_sessions(conn: Connection, pending: list[_Pending], added: dict[str, int]) -> None:
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
    repo.upsert_sessions(conn, rows)


def set_title(conn: Connection, session_id: str, title: str, source: str) -> bool:
    """Give a session a title unless it already has one from a better source; True if set."""
    title = shorten(redact(title), TITLE_CHARS)
    if not title:
        return False
    current = repo.title_source(conn, session_id)
    if current is None:
        repo.add_titled_session(conn, session_id, title, source)
        return True
    if TITLE_RANK.get(source, 0) < TITLE_RANK.get(current, 0):
        return False
    repo.set_title(conn, session_id, title, source)
    return True


def summary_due(turn_count: int, summary_upto: int) -> bool:
    """Whether a session that grew to `turn_count` turns needs its summary rebuilt."""
    step = max(SUMMARY_MIN_STEP, min(SUMMARY_MAX_STEP, summary_upto // 4))
    return turn_count - summary_upto >= step


def summaries_due(conn: Connection) -> int:
    """How many sessions wait for their summary to be rebuilt (`summary_due`, in SQL)."""
    return repo.count_due(conn, SUMMARY_MIN_STEP, SUMMARY_MAX_STEP)


def due_sessions(conn: Connection, limit: int) -> list[str]:
    """Sessions whose summary is due, e.g. left behind by a crash before a bulk load ended."""
    return repo.due(conn, limit, SUMMARY_MIN_STEP, SUMMARY_MAX_STEP)


def refresh_summary(conn: Connection, session_id: str, *, now: float, force: bool = False) -> bool:
    """Rebuild the extractive summary when the session grew enough; an LLM summary is kept."""
    state = repo.summary_state(conn, session_id)
    if state is None or state[2] == "llm":
        return False
    count, upto, _ = state
    if not force and not summary_due(count, upto):
        return False
    text = summarize(session_turns_for_summary(conn, session_id, count))
    repo.set_extractive_summary(conn, session_id, text, now, count)
    return True


def session_turns_for_summary(
    conn: Connection, session_id: str, count: int
) -> list[tuple[str, str]]:
    """The `(role, text)` turns a summary is built from: the start and the latest of a long session."""
    return repo.summary_turns(conn, session_id, count, SUMMARY_HEAD_TURNS, SUMMARY_TAIL_TURNS)
