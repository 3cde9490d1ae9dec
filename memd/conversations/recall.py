"""Recall past conversations (seed 003): the four scenarios, trigger detection, context's tier.

Scenarios (`recall(mode=…)`):

- ``sessions``: every session's summary, newest first ("what did we talk about before?");
- ``topic``: a topic across sessions, the best 5 turns of each session, grouped by session
  ("did we talk about Vue?");
- ``session``: one session's summary and turns ("what else did we say that time?");
- ``within``: a topic inside one session.

`context` calls `conversation_candidates`: the current session's summary whenever a
`session_id` is given, and recall results when the query starts with ``/recall`` or holds a
recall keyword ("之前", "聊过", "last time", "did we talk about", …) — or, without a
keyword, turns that match most of the query's terms. Every turn is shown with its date and
its session's title. The turn search they stand on is `memd.conversations.turn_search`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import msgspec
from msgspec import UnsetType

from memd.api import messages as msg
from memd.conversations import repo
from memd.conversations.repo import TurnScope
from memd.conversations.sources import BY_NAME, assistant_title
from memd.conversations.turn_search import (
    CANDIDATES,
    RECENT_CANDIDATES,
    TurnHit,
    fmt_time,
    fused_turns,
    ranked_turns,
    search_turns,
    topic_terms,
)
from memd.core.errors import InvalidParams, NotFound
from memd.core.text import short_id, shorten
from memd.db import Connection
from memd.memory.context import Candidate, ContextRequest
from memd.semantic.recipe import VECTOR, Plan
from memd.semantic.service import SemanticRecall

MODES = ("sessions", "topic", "session", "within")
RECALL_KEYWORDS = (
    "之前", "聊过", "记得", "提过", "找找", "曾经", "谈论过", "上次", "以前", "讨论过", "说过",
    "last time", "remember when", "did we talk about", "previously", "earlier we",
    "do you remember", "we talked about", "we discussed", "you told me",
)  # fmt: skip
PER_SESSION = 5
TURN_CHARS = 300


@dataclass(frozen=True, slots=True)
class RecallIntent:
    """A request to recall: forced by `/recall`, or a keyword; `topic` is what to look for."""

    forced: bool
    keyword: str
    topic: str


def detect_recall(query: str) -> RecallIntent | None:
    """The recall intent of a user message, or None when it does not ask to recall."""
    q = query.strip()
    if q.lower().startswith("/recall"):
        return RecallIntent(True, "/recall", q[len("/recall") :].strip())
    low = q.lower()
    for kw in RECALL_KEYWORDS:
        if kw in low:
            return RecallIntent(False, kw, _strip_keywords(q))
    return None


def _strip_keywords(q: str) -> str:
    out = q
    for kw in sorted(RECALL_KEYWORDS, key=len, reverse=True):
        out = re.sub(re.escape(kw), " ", out, flags=re.I)
    return " ".join(out.split())


# -- the four scenarios -----------------------------------------------------------------------
def _session_of(r: repo.SessionRow) -> msg.RecalledSession:
    return msg.RecalledSession(
        session_id=r.session_id, title=r.title, summary=r.summary,
        summary_kind=r.summary_kind, source=r.source, source_path=r.source_path,
        agent_id=r.agent_id, project=r.project, started_at=r.started_at,
        updated_at=r.updated_at, date=fmt_time(r.started_at)[:10], turn_count=r.turn_count,
    )  # fmt: skip


def _turns(s: msg.RecalledSession) -> list[msg.RecalledTurn]:
    return s.turns if isinstance(s.turns, list) else []


def _found_by(t: msg.RecalledTurn) -> list[str]:
    return t.found_by if isinstance(t.found_by, list) else []


SHORT_ID = re.compile(r"[^\s]{8}-[0-9a-f]{4}")
MIN_PREFIX = 4


def resolve_session(conn: Connection, given: str) -> str:
    """The id of the session `given` names: its whole id, the short id the journal prints in its
    headings, or the start of an id that only one session has. NotFound when none does,
    InvalidParams when several do."""
    if repo.title_source(conn, given) is not None:
        return given
    matches: list[str] = []
    if SHORT_ID.fullmatch(given):
        matches = [c for c in repo.session_ids_from(conn, given[:8], 1000) if short_id(c) == given]
    if not matches and len(given) >= MIN_PREFIX:
        matches = repo.session_ids_from(conn, given, 6)
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
        raise InvalidParams(f"session {given!r} is ambiguous: {shown}; give more of its id")
    raise NotFound(f"no session {given!r}")


def _session_row(conn: Connection, session_id: str) -> repo.SessionRow:
    row = repo.session(conn, session_id)
    if row is None:
        raise NotFound(f"no session {session_id!r}")
    return row


def session_summary(conn: Connection, session_id: str) -> str:
    """The stored summary of a session; before the first one is made (it needs two turns), the
    opening of the session."""
    summary = repo.stored_summary(conn, session_id)
    if summary is None:
        return ""
    if summary:
        return summary
    first = repo.first_turn(conn, session_id)
    if first is None:
        return ""
    return ("Asked: " if first[0] == "user" else "") + shorten(first[1], TURN_CHARS)


def recall(
    conn: Connection,
    *,
    mode: str = "",
    query: str = "",
    session_id: str = "",
    limit: int = 20,
    per_session: int = PER_SESSION,
    project: str = "",
    agent_id: str = "",
    exclude_session: str = "",
    min_terms: int = 1,
    recent: bool = False,
    semantic: SemanticRecall | None = None,
    source: str = "",
) -> msg.RecallResult:
    """Answer one of the four recall scenarios; without `mode` it is picked from the arguments.

    Topic mode: `min_terms` recalls only turns holding that many of the query's terms, and
    `recent` takes the newest matching turns rather than the best ranked (see `search_turns`).
    With `semantic` (recall by meaning on), topic and within rank by `fused_turns` (and
    `min_terms` and `recent` do not apply). `source` keeps the sessions and turns of one
    assistant's logs.

    Each session of the answer has its title, date, summary and (for topic, session and within)
    its `turns`.
    """
    if not mode:
        mode = (
            ("within" if query.strip() else "session")
            if session_id
            else ("topic" if query.strip() else "sessions")
        )
    if mode not in MODES:
        raise InvalidParams(f"mode must be one of {', '.join(MODES)}")
    if mode in ("session", "within") and not session_id:
        raise InvalidParams(f"mode {mode!r} needs a session_id")
    if mode in ("topic", "within") and not query.strip():
        raise InvalidParams(f"mode {mode!r} needs a query")
    if mode in ("session", "within"):
        session_id = resolve_session(conn, session_id)
    sessions: list[msg.RecalledSession] = []
    qt = topic_terms(query)
    if mode == "sessions":
        for r in repo.recent_sessions(conn, limit=limit, project=project, agent_id=agent_id,
                                      source=source):  # fmt: skip
            d = _session_of(r)
            d.summary = d.summary or session_summary(conn, r.session_id)
            sessions.append(d)
    elif mode == "topic":
        p = semantic.plan(query) if semantic is not None else None
        scope = TurnScope(project=project, agent_id=agent_id, source=source,
                          exclude_session=exclude_session)  # fmt: skip
        if semantic is not None and p is not None:
            hits = fused_turns(conn, p, semantic, limit=CANDIDATES, scope=scope)
        else:
            hits = search_turns(conn, query, limit=RECENT_CANDIDATES if recent else CANDIDATES,
                                scope=scope, query_terms=qt, min_terms=min_terms,
                                recent=recent)  # fmt: skip
        groups: dict[str, list[TurnHit]] = {}
        for h in hits:
            g = groups.setdefault(h.session_id, [])
            if len(g) < per_session:
                g.append(h)
        ranked = sorted(groups.items(), key=lambda kv: -sum(h.score for h in kv[1]))[:limit]
        for sid, g in ranked:
            d = _session_of(_session_row(conn, sid))
            d.score = round(sum(h.score for h in g), 4)
            d.turns = [h.recalled() for h in sorted(g, key=lambda h: (h.ts, h.rowid))]
            sessions.append(d)
    elif mode == "session":
        d = _session_of(_session_row(conn, session_id))
        d.summary = d.summary or session_summary(conn, session_id)
        d.turns = [
            TurnHit(t.id, session_id, t.turn_id, t.role, t.text, t.ts, 0.0, t.source,
                    t.source_path, t.line, d.title).recalled()
            for t in repo.opening_turns(conn, session_id, max(limit, 1) * 10)
        ]  # fmt: skip
        sessions.append(d)
    else:
        d = _session_of(_session_row(conn, session_id))
        hits = ranked_turns(conn, query, limit=limit, semantic=semantic, query_terms=qt,
                            scope=TurnScope(session_id))  # fmt: skip
        d.turns = [h.recalled() for h in hits]
        sessions.append(d)
    out = msg.RecallResult(
        mode=mode, query=query, session_id=session_id, terms=qt, sessions=sessions, text=""
    )
    out.text = render_recall(out)
    return out


def render_recall(result: msg.RecallResult) -> str:
    """Recall results as Markdown: one heading per session with its date, then its turns."""
    blocks = []
    for s in result.sessions:
        head = f"## {s.title or s.session_id} — {s.date or 'undated'}"
        lines = [
            head,
            f"(session {s.session_id}, {s.turn_count} turns, {assistant_title(s.source)})",
        ]
        if s.summary and result.mode in ("sessions", "session"):
            lines.append(f"Summary: {s.summary}")
        for t in _turns(s):
            lines.append(f"- [{t.date}] {t.role}: {shorten(t.text, TURN_CHARS)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "Nothing recalled."


# -- context ----------------------------------------------------------------------------------
# Without a recall keyword, past turns join the context only when they match most of the query.
SIMILAR_MIN_TERMS = 2
SIMILAR_COVERAGE = 0.6
CONTEXT_SESSIONS = 3


def _coverage(text: str, qt: list[str]) -> float:
    low = text.lower()
    return sum(1 for t in qt if t in low) / len(qt) if qt else 0.0


def conversation_candidates(conn: Connection, req: ContextRequest) -> list[Candidate]:
    """The conversation tier of `context`: this session's summary, then recalled turns."""
    out: list[Candidate] = []
    if req.session_id:
        row = repo.title_and_start(conn, req.session_id)
        summary = session_summary(conn, req.session_id) if row else ""
        if row and summary:
            title = (
                f"This conversation so far: {row[0] or req.session_id} ({fmt_time(row[1])[:10]})"
            )
            out.append(Candidate("conversation", "conversation", title, summary,
                                 msg.Provenance(session_id=req.session_id, kind="session-summary"), 1.0,
                                 "summary of the current session"))  # fmt: skip
    intent = detect_recall(req.query) if req.query else None
    topic = intent.topic if intent is not None else req.query
    qt = topic_terms(topic)
    if intent is not None and not qt:
        res = recall(conn, mode="sessions", limit=CONTEXT_SESSIONS + 1,
                     exclude_session=req.session_id, source=req.source)  # fmt: skip
        for s in res.sessions:
            if s.session_id == req.session_id or not s.summary:
                continue
            out.append(
                _session_candidate(s, f"recall ({intent.keyword}): recent sessions", s.summary)
            )
        return out[: CONTEXT_SESSIONS + (1 if req.session_id else 0)]
    # Recall by meaning adds, without a recall intent, past turns whose vector is close to
    # the query's (`SemanticRecall.is_close`), in sessions of their own or beside the turns
    # that matched its words; asked to recall, the whole history is ranked by fusion.
    p = req.semantic.plan(req.query) if req.semantic is not None and intent is None else None
    close = _close_sessions(conn, req, p) if req.semantic is not None and p is not None else {}
    if not qt or (intent is None and len(qt) < SIMILAR_MIN_TERMS):
        return out + _close_candidates(close, CONTEXT_SESSIONS)
    # Without a recall intent only turns covering most of the query are shown: ask the index
    # for those alone, newest first, instead of ranking every turn that shares a word with the
    # query (on 100,000 turns of common words that ranking alone took ~50 ms of a `context`).
    # Asked to recall ("之前", "last time"), the whole history is ranked.
    need = 1 if intent is not None else math.ceil(SIMILAR_COVERAGE * len(qt) - 1e-9)
    res = recall(conn, mode="topic", query=topic, limit=CONTEXT_SESSIONS, exclude_session=req.session_id,
                 min_terms=need, recent=intent is None,
                 semantic=req.semantic if intent is not None else None, source=req.source)  # fmt: skip
    shown = 0
    for s in res.sessions:
        turns = _turns(s)
        if intent is None:
            turns = [t for t in turns if _coverage(t.text, qt) >= SIMILAR_COVERAGE]
            if not turns:
                continue
            if p is not None:
                near = close.pop(s.session_id, None)
                turns = _merge_turns([msgspec.structs.replace(t, found_by=["fts"]) for t in turns],
                                     _turns(near) if near is not None else [])  # fmt: skip
        body = "\n".join(f"- [{t.date}] {t.role}: {shorten(t.text, TURN_CHARS)}" for t in turns)
        why = (
            f"recall ({intent.keyword}): matches '{' '.join(qt)}'"
            if intent
            else "past turns match the query"
        )
        c = _session_candidate(s, why, body, score=_score(s))
        _note_found_by(c, turns)
        out.append(c)
        shown += 1
    return out + _close_candidates(close, CONTEXT_SESSIONS - shown)


def _score(s: msg.RecalledSession) -> float:
    return 0.0 if isinstance(s.score, UnsetType) else s.score


def _close_sessions(
    conn: Connection, req: ContextRequest, p: Plan
) -> dict[str, msg.RecalledSession]:
    """Sessions (as `recall` shows them) holding past turns close in meaning to the query."""
    assert req.semantic is not None
    near = req.semantic.turns(p, exclude_session=req.session_id, k=CONTEXT_SESSIONS * PER_SESSION,
                              z=True, source=req.source)  # fmt: skip
    cos = {d: c for d, c, z in zip(near.docs, near.cosines, near.z, strict=True)
           if req.semantic.is_close(p, z, near.scripts.get(d, ""))}  # fmt: skip
    groups: dict[str, list[TurnHit]] = {}
    for r in sorted(repo.found_turns(conn, list(cos)), key=lambda r: -cos[r.id]):
        groups.setdefault(r.session_id, []).append(
            TurnHit(r.id, r.session_id, r.turn_id, r.role, r.text, r.ts, cos[r.id], r.source,
                    r.source_path, r.line, r.session_title, r.speaker, (VECTOR,))
        )  # fmt: skip
    out: dict[str, msg.RecalledSession] = {}
    for sid, hits in list(groups.items())[:CONTEXT_SESSIONS]:
        d = _session_of(_session_row(conn, sid))
        d.score = round(max(h.score for h in hits), 4)
        d.turns = [h.recalled() for h in sorted(hits[:PER_SESSION], key=lambda h: (h.ts, h.rowid))]
        out[sid] = d
    return out


def _merge_turns(a: list[msg.RecalledTurn], b: list[msg.RecalledTurn]) -> list[msg.RecalledTurn]:
    """Two lists of one session's turns as one, in time order, each turn once (with every
    ranking that found it)."""
    by_id: dict[str, msg.RecalledTurn] = {}
    for t in (*a, *b):
        seen = by_id.get(t.turn_id)
        if seen is None:
            by_id[t.turn_id] = msgspec.structs.replace(t)
        else:
            seen.found_by = list(dict.fromkeys([*_found_by(seen), *_found_by(t)]))
    return sorted(by_id.values(), key=lambda t: t.ts)


def _close_candidates(close: dict[str, msg.RecalledSession], room: int) -> list[Candidate]:
    out = []
    for s in list(close.values())[: max(0, room)]:
        turns = _turns(s)
        body = "\n".join(f"- [{t.date}] {t.role}: {shorten(t.text, TURN_CHARS)}" for t in turns)
        c = _session_candidate(s, "past turns close in meaning to the query", body, _score(s))
        _note_found_by(c, turns)
        out.append(c)
    return out


def _note_found_by(c: Candidate, turns: list[msg.RecalledTurn]) -> None:
    found = list(dict.fromkeys(f for t in turns for f in _found_by(t)))
    if found:
        c.provenance.found_by = found


def _session_candidate(
    s: msg.RecalledSession, why: str, body: str, score: float = 0.0
) -> Candidate:
    title = f"{s.title or s.session_id} — {s.date or 'undated'}"
    if s.source in BY_NAME:  # the assistant it was said with: maybe not the one asking
        title += f", {assistant_title(s.source)}"
    prov = msg.Provenance(session_id=s.session_id, source_path=s.source_path,
                          turn_ids=[t.turn_id for t in _turns(s)])  # fmt: skip
    return Candidate("conversation", "conversation", title, body, prov, score, why,
                     said_with=s.source)  # fmt: skip
