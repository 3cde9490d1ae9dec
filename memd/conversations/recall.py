"""Recall past conversations (seed 003): the four scenarios, trigger detection, turn search.

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
its session's title.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memd.conversations import repo
from memd.conversations.journal import short_id
from memd.core.errors import InvalidParams, NotFound
from memd.core.models import Hit
from memd.core.text import cjk_bigrams, shorten, snippet, terms
from memd.db import Connection
from memd.memory.context import Candidate, ContextRequest
from memd.semantic.fusion import Ranked
from memd.semantic.recipe import DEPTH, VECTOR, Plan
from memd.semantic.service import SemanticRecall

MODES = ("sessions", "topic", "session", "within")
RECALL_KEYWORDS = (
    "之前", "聊过", "记得", "提过", "找找", "曾经", "谈论过", "上次", "以前", "讨论过", "说过",
    "last time", "remember when", "did we talk about", "previously", "earlier we",
    "do you remember", "we talked about", "we discussed", "you told me",
)  # fmt: skip
# Words that ask for a recall but say nothing about its topic.
_FILLER = frozenset(
    """talk talked talking discuss discussed discussion chat chatted conversation conversations
    mention mentioned said say earlier before previously remember recall last time ago
    聊 讨论 谈论 谈过 说
    我们 咱们 有没有 没有 什么 一下 那个 这个 那次 时候 关于 过 吗 呢 吧 的 了""".split()
)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
# Characters that never start or end a Chinese search term on their own.
_CJK_STOP = re.compile(r"[的了吗呢吧啊是我你他她它们在有和与就都也还这那么过么呀哦嗯]+")
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


def topic_terms(query: str) -> list[str]:
    """Search terms of a recall topic: no stopwords, no recall filler; Chinese runs are cut at
    function characters (的, 了, 吗 …) so "的数据库迁移" looks for "数据库迁移"."""
    out: list[str] = []
    for t in terms(query):
        if t in _FILLER:
            continue
        if _CJK_RUN.fullmatch(t):
            for piece in _CJK_STOP.split(t):
                if piece and piece not in _FILLER and piece not in out:
                    out.append(piece)
        elif t not in out:
            out.append(t)
    return out


# -- turn search ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TurnHit:
    """A stored turn found by a search, with its session's title."""

    rowid: int
    session_id: str
    turn_id: str
    role: str
    text: str
    ts: float
    score: float
    source: str
    source_path: str
    line: int
    session_title: str
    speaker: str = ""
    found_by: tuple[str, ...] = ()  # with recall by meaning on: the rankings that found it

    def to_hit(self, query_terms: list[str]) -> Hit:
        return Hit(
            kind="turn", path=self.source_path, heading=self.session_title or self.session_id,
            start_line=self.line, end_line=self.line, score=round(self.score, 4),
            snippet=snippet(self.text, query_terms), text=self.text, session_id=self.session_id,
            turn_id=self.turn_id, ts=self.ts, session_title=self.session_title, role=self.role,
            found_by=self.found_by,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        out = {
            "session_id": self.session_id, "turn_id": self.turn_id, "role": self.role,
            "speaker": self.speaker, "text": self.text, "ts": self.ts, "date": fmt_time(self.ts),
            "score": round(self.score, 4), "source": self.source, "source_path": self.source_path,
            "line": self.line, "session_title": self.session_title,
        }  # fmt: skip
        if self.found_by:
            out["found_by"] = list(self.found_by)
        return out


# "At least k of these n terms" is written as an OR of the ANDs of every k-term subset; past this
# many subsets the expression costs more than it saves, and the plain OR is used.
MAX_TERM_SUBSETS = 6


def _fts_match(ts: Sequence[str], min_terms: int = 1) -> str:
    """The MATCH expression for the terms: any of them, or at least `min_terms` of them.

    Every term appears in the same number of subsets, so bm25 ranks the matching turns as
    it would for the plain OR; only turns with fewer terms are left out (and not ranked).
    """
    groups = [g for g in (_fts_terms([t]) for t in dict.fromkeys(ts)) if g]
    if not groups:
        return ""
    k = min(max(1, min_terms), len(groups))
    if k == 1 or math.comb(len(groups), k) > MAX_TERM_SUBSETS:
        return " OR ".join(_fts_terms(ts))
    alt = [g[0] if len(g) == 1 else "(" + " OR ".join(g) + ")" for g in groups]
    return " OR ".join("(" + " AND ".join(c) + ")" for c in itertools.combinations(alt, k))


def _fts_terms(ts: Sequence[str]) -> list[str]:
    """FTS5 expressions for the terms; a long Chinese term also matches by its bigrams."""
    out: list[str] = []
    for t in ts:
        if _CJK_RUN.fullmatch(t):
            out.extend(f'"{g}"' for g in cjk_bigrams(t))
        else:
            parts = [p for p in re.split(r"[-'’]", t) if p]
            out.append('"' + " ".join(p.replace('"', '""') for p in parts) + '"')
    return list(dict.fromkeys(out))


_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = "|".join(_MONTHS)
_EN_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?({_MONTH})(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?)?"
    rf"(?:,?\s+(\d{{4}}))?\b|\b((?:19|20)\d\d)\b",
    re.I,
)
_ZH_DATE = re.compile(r"(?:(\d{4})\s*年)?\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?|(\d{4})\s*年")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_RELATIVE = {
    "today": (0, 1), "yesterday": (1, 1), "last week": (7, 7), "last month": (31, 31),
    "今天": (0, 1), "昨天": (1, 1), "上周": (7, 7), "上个月": (31, 31), "上星期": (7, 7),
}  # fmt: skip
# A month or a day named in a question also covers the days after it, when it was talked about.
DAY_SLACK = (2, 3)
MONTH_SLACK_DAYS = 21


def date_windows(query: str, *, now: float) -> list[tuple[float, float]]:
    """Time windows (epoch seconds) a query names: "in May 2023", "on 3 June", "2023年5月",
    "2024-03-01", "yesterday", "上周". A month without a year stands for that month in each
    of the last ten years."""
    today = dt.datetime.fromtimestamp(now)
    years = list(range(today.year - 9, today.year + 1))
    out: list[tuple[float, float]] = []

    def add(year: int | None, month: int | None, day: int | None) -> None:
        for y in [year] if year else years:
            try:
                if month and day:
                    d = dt.datetime(y, month, day)
                    out.append(
                        (d.timestamp() - DAY_SLACK[0] * 86400, d.timestamp() + DAY_SLACK[1] * 86400)
                    )
                elif month:
                    a = dt.datetime(y, month, 1)
                    b = dt.datetime(y + month // 12, month % 12 + 1, 1) + dt.timedelta(
                        days=MONTH_SLACK_DAYS
                    )
                    out.append((a.timestamp(), b.timestamp()))
                else:
                    out.append(
                        (dt.datetime(y, 1, 1).timestamp(), dt.datetime(y + 1, 1, 31).timestamp())
                    )
            except ValueError:
                continue

    for m in _ISO_DATE.finditer(query):
        add(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    query = _ISO_DATE.sub(" ", query)
    for m in _EN_DATE.finditer(query):
        if m.group(5):
            add(int(m.group(5)), None, None)
        else:
            day = m.group(1) or m.group(3)
            add(
                int(m.group(4)) if m.group(4) else None,
                _MONTHS.index(m.group(2).lower()) + 1,
                int(day) if day else None,
            )
    for m in _ZH_DATE.finditer(query):
        if m.group(4):
            add(int(m.group(4)), None, None)
        else:
            add(
                int(m.group(1)) if m.group(1) else None,
                int(m.group(2)),
                int(m.group(3)) if m.group(3) else None,
            )
    low = query.lower()
    start_of_day = today.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    for word, (back, span) in _RELATIVE.items():
        if word in low:
            a = start_of_day - back * 86400
            out.append((a, a + span * 86400 + (86400 if back == 0 else 0)))
    return out


# Ranking (tuned on nothing but its effect on LoCoMo's dev conversations, see docs/benchmarks.md):
# a turn's own bm25 score, plus part of its neighbours' — the answer to a matching question is
# often the next turn, and the words of a question often come a turn or two before the fact —
# times a boost when it falls in a time window the query names or its speaker is named.
CANDIDATES = 200
# Newest-first candidates (`recent`) serve context's few sessions: a handful of turns each.
RECENT_CANDIDATES = 60
NEIGHBOUR_WEIGHTS = (0.5, 0.3)  # of the best score at distance 1 and 2 in the same session
DATE_BOOST = 1.0
SPEAKER_BOOST = 0.3


def _name_in(name: str, low_query: str) -> bool:
    name = name.lower()
    if _CJK_RUN.search(name):
        return name in low_query
    return re.search(r"\b" + re.escape(name) + r"\b", low_query) is not None


def search_turns(
    conn: Connection,
    query: str,
    *,
    limit: int = 10,
    session_id: str = "",
    project: str = "",
    agent_id: str = "",
    exclude_session: str = "",
    query_terms: list[str] | None = None,
    now: float | None = None,
    min_terms: int = 1,
    recent: bool = False,
) -> list[TurnHit]:
    """Turns matching `query`, best first (with `min_terms`, only turns with that many of its
    terms are candidates; with `recent`, the newest matching turns are the candidates, all
    scored alike before the boosts below, instead of the best by bm25: a bounded amount of
    work however many turns match).

    FTS5 bm25 finds candidates among the turns (speaker names included); each candidate's
    score then gets part of its neighbours' scores (turns at distance 1 and 2 in the same
    session, which can bring in a turn that shares no word with the query), and is boosted
    when its time falls in a window the query names ("in May 2023", "yesterday", "上周") or its
    speaker is named in the query. Optional filters: one session, a project, an agent;
    `exclude_session` leaves one out (the conversation in progress).
    """
    qt = query_terms if query_terms is not None else topic_terms(query)
    match = _fts_match(qt, min_terms)
    if not match:
        return []
    base = repo.match_turns(
        conn, match, limit=max(limit, RECENT_CANDIDATES if recent else CANDIDATES),
        session_id=session_id, project=project, agent_id=agent_id,
        exclude_session=exclude_session, recent=recent,
    )  # fmt: skip
    if not base:
        return []
    ids = set(base) | {i + d for i in base for d in (-2, -1, 1, 2)}
    meta = repo.turn_refs(conn, ids)
    windows = date_windows(query, now=time.time() if now is None else now)
    low = query.lower()
    named: dict[str, bool] = {}
    scored: list[tuple[float, int]] = []
    for i, (_, sid, ts, speaker, proj, agent) in meta.items():
        score = base[i][1] if i in base else 0.0
        for dist, w in enumerate(NEIGHBOUR_WEIGHTS, 1):
            near = [base[j][1] for j in (i - dist, i + dist) if j in base and base[j][0] == sid]
            if near:
                score += w * max(near)
        # A neighbour shares its candidate's session, so only the per-turn filters are left to check.
        if score <= 0 or (project and proj != project) or (agent_id and agent != agent_id):
            continue
        if windows and any(a <= ts < b for a, b in windows):
            score *= 1 + DATE_BOOST
        if speaker:
            if speaker not in named:
                named[speaker] = _name_in(speaker, low)
            if named[speaker]:
                score *= 1 + SPEAKER_BOOST
        scored.append((score, i))
    scored.sort(key=lambda x: (-x[0], -x[1] if recent else x[1]))
    top = dict((i, sc) for sc, i in scored[:limit])
    if not top:
        return []
    hits = [
        TurnHit(r.id, r.session_id, r.turn_id, r.role, r.text, r.ts, top[r.id], r.source,
                r.source_path, r.line, r.session_title, r.speaker)
        for r in repo.found_turns(conn, top)
    ]  # fmt: skip
    hits.sort(key=lambda h: (-h.score, -h.rowid if recent else h.rowid))
    return hits


def fused_turns(
    conn: Connection,
    p: Plan,
    semantic: SemanticRecall,
    *,
    limit: int,
    session_id: str = "",
    project: str = "",
    agent_id: str = "",
    exclude_session: str = "",
    now: float | None = None,
) -> list[TurnHit]:
    """The recipe over turns: `search_turns` with the query as typed and bridged (`DEPTH`
    each, its date and speaker boosts inside its own scores), the nearest turn vectors of the
    same scope, fused (`memd.semantic.recipe.fuse`); each hit names the rankings that found it."""
    semantic.prefetch(p)  # the query is embedded while full-text search runs
    hits: dict[int, TurnHit] = {}
    lists: dict[str, Ranked[int]] = {}
    for name, text in p.full_text.items():
        found = search_turns(conn, text, limit=DEPTH, session_id=session_id, project=project,
                             agent_id=agent_id, exclude_session=exclude_session, now=now)  # fmt: skip
        for h in found:
            hits.setdefault(h.rowid, h)
        lists[name] = Ranked([h.rowid for h in found], [h.score for h in found])
    near = semantic.turns(p, session_id=session_id, project=project, agent_id=agent_id,
                          exclude_session=exclude_session)  # fmt: skip
    if near.docs:
        for r in repo.found_turns(conn, [d for d in near.docs if d not in hits]):
            hits[r.id] = TurnHit(r.id, r.session_id, r.turn_id, r.role, r.text, r.ts, 0.0,
                                 r.source, r.source_path, r.line, r.session_title, r.speaker)  # fmt: skip
        keep = [(d, c) for d, c in zip(near.docs, near.cosines, strict=True) if d in hits]
        lists[VECTOR] = Ranked([d for d, _ in keep], [c for _, c in keep])
    scripts = semantic.scripts(near, {i: h.text for i, h in hits.items()}, hits)
    fused = semantic.fuse(p, lists, scripts, limit)
    return [dataclasses.replace(hits[h.key], score=h.score, found_by=h.found_by)
            for h in fused.hits]  # fmt: skip


def ranked_turns(
    conn: Connection,
    query: str,
    *,
    limit: int,
    semantic: SemanticRecall | None = None,
    query_terms: list[str] | None = None,
    session_id: str = "",
) -> list[TurnHit]:
    """`fused_turns` when recall by meaning is on, else `search_turns` (as without it)."""
    p = semantic.plan(query) if semantic is not None else None
    if semantic is not None and p is not None:
        return fused_turns(conn, p, semantic, limit=limit, session_id=session_id)
    return search_turns(conn, query, limit=limit, query_terms=query_terms, session_id=session_id)


# -- the four scenarios -----------------------------------------------------------------------
def fmt_time(ts: float) -> str:
    """A turn's local date and time, as shown to people and models."""
    if not ts:
        return ""
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _session_dict(r: repo.SessionRow) -> dict[str, Any]:
    return {
        "session_id": r.session_id, "title": r.title, "summary": r.summary,
        "summary_kind": r.summary_kind, "source": r.source, "source_path": r.source_path,
        "agent_id": r.agent_id, "project": r.project, "started_at": r.started_at,
        "updated_at": r.updated_at, "date": fmt_time(r.started_at)[:10], "turn_count": r.turn_count,
    }  # fmt: skip


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
) -> dict[str, Any]:
    """Answer one of the four recall scenarios; without `mode` it is picked from the arguments.

    Topic mode: `min_terms` recalls only turns holding that many of the query's terms, and
    `recent` takes the newest matching turns rather than the best ranked (see `search_turns`).
    With `semantic` (recall by meaning on), topic and within rank by `fused_turns` (and
    `min_terms` and `recent` do not apply).

    Returns ``{"mode", "query", "session_id", "sessions": [...], "text"}``; each session has
    its title, date, summary and (for topic, session and within) its `turns`.
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
    sessions: list[dict[str, Any]] = []
    qt = topic_terms(query)
    if mode == "sessions":
        for r in repo.recent_sessions(conn, limit=limit, project=project, agent_id=agent_id):
            d = _session_dict(r)
            d["summary"] = d["summary"] or session_summary(conn, r.session_id)
            sessions.append(d)
    elif mode == "topic":
        p = semantic.plan(query) if semantic is not None else None
        if semantic is not None and p is not None:
            hits = fused_turns(conn, p, semantic, limit=CANDIDATES, project=project,
                               agent_id=agent_id, exclude_session=exclude_session)  # fmt: skip
        else:
            hits = search_turns(conn, query, limit=RECENT_CANDIDATES if recent else CANDIDATES, project=project,
                                agent_id=agent_id,
                                exclude_session=exclude_session, query_terms=qt, min_terms=min_terms,
                                recent=recent)  # fmt: skip
        groups: dict[str, list[TurnHit]] = {}
        for h in hits:
            g = groups.setdefault(h.session_id, [])
            if len(g) < per_session:
                g.append(h)
        ranked = sorted(groups.items(), key=lambda kv: -sum(h.score for h in kv[1]))[:limit]
        for sid, g in ranked:
            d = _session_dict(_session_row(conn, sid))
            d["score"] = round(sum(h.score for h in g), 4)
            d["turns"] = [h.to_dict() for h in sorted(g, key=lambda h: (h.ts, h.rowid))]
            sessions.append(d)
    elif mode == "session":
        d = _session_dict(_session_row(conn, session_id))
        d["summary"] = d["summary"] or session_summary(conn, session_id)
        d["turns"] = [
            TurnHit(t.id, session_id, t.turn_id, t.role, t.text, t.ts, 0.0, t.source,
                    t.source_path, t.line, d["title"]).to_dict()
            for t in repo.opening_turns(conn, session_id, max(limit, 1) * 10)
        ]  # fmt: skip
        sessions.append(d)
    else:
        d = _session_dict(_session_row(conn, session_id))
        hits = ranked_turns(conn, query, limit=limit, semantic=semantic, query_terms=qt,
                            session_id=session_id)  # fmt: skip
        d["turns"] = [h.to_dict() for h in hits]
        sessions.append(d)
    out = {
        "mode": mode,
        "query": query,
        "session_id": session_id,
        "terms": qt,
        "sessions": sessions,
    }
    out["text"] = render_recall(out)
    return out


def render_recall(result: dict[str, Any]) -> str:
    """Recall results as Markdown: one heading per session with its date, then its turns."""
    blocks = []
    for s in result["sessions"]:
        head = f"## {s['title'] or s['session_id']} — {s['date'] or 'undated'}"
        lines = [
            head,
            f"(session {s['session_id']}, {s['turn_count']} turns, {s['source'] or 'app'})",
        ]
        if s.get("summary") and result["mode"] in ("sessions", "session"):
            lines.append(f"Summary: {s['summary']}")
        for t in s.get("turns", []):
            lines.append(f"- [{t['date']}] {t['role']}: {shorten(t['text'], TURN_CHARS)}")
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
                                 {"session_id": req.session_id, "kind": "session-summary"}, 1.0,
                                 "summary of the current session"))  # fmt: skip
    intent = detect_recall(req.query) if req.query else None
    topic = intent.topic if intent is not None else req.query
    qt = topic_terms(topic)
    if intent is not None and not qt:
        res = recall(
            conn, mode="sessions", limit=CONTEXT_SESSIONS + 1, exclude_session=req.session_id
        )
        for s in res["sessions"]:
            if s["session_id"] == req.session_id or not s["summary"]:
                continue
            out.append(
                _session_candidate(s, f"recall ({intent.keyword}): recent sessions", s["summary"])
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
                 semantic=req.semantic if intent is not None else None)  # fmt: skip
    shown = 0
    for s in res["sessions"]:
        turns = s["turns"]
        if intent is None:
            turns = [t for t in turns if _coverage(t["text"], qt) >= SIMILAR_COVERAGE]
            if not turns:
                continue
            if p is not None:
                turns = _merge_turns([{**t, "found_by": ["fts"]} for t in turns],
                                     close.pop(s["session_id"], {}).get("turns", []))  # fmt: skip
        body = "\n".join(
            f"- [{t['date']}] {t['role']}: {shorten(t['text'], TURN_CHARS)}" for t in turns
        )
        why = (
            f"recall ({intent.keyword}): matches '{' '.join(qt)}'"
            if intent
            else "past turns match the query"
        )
        c = _session_candidate(s, why, body, score=s.get("score", 0.0))
        _note_found_by(c, turns)
        out.append(c)
        shown += 1
    return out + _close_candidates(close, CONTEXT_SESSIONS - shown)


def _close_sessions(conn: Connection, req: ContextRequest, p: Plan) -> dict[str, dict[str, Any]]:
    """Sessions (as `recall` shows them) holding past turns close in meaning to the query."""
    assert req.semantic is not None
    near = req.semantic.turns(
        p, exclude_session=req.session_id, k=CONTEXT_SESSIONS * PER_SESSION, z=True
    )
    cos = {d: c for d, c, z in zip(near.docs, near.cosines, near.z, strict=True)
           if req.semantic.is_close(p, z, near.scripts.get(d, ""))}  # fmt: skip
    groups: dict[str, list[TurnHit]] = {}
    for r in sorted(repo.found_turns(conn, list(cos)), key=lambda r: -cos[r.id]):
        groups.setdefault(r.session_id, []).append(
            TurnHit(r.id, r.session_id, r.turn_id, r.role, r.text, r.ts, cos[r.id], r.source,
                    r.source_path, r.line, r.session_title, r.speaker, (VECTOR,))
        )  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for sid, hits in list(groups.items())[:CONTEXT_SESSIONS]:
        d = _session_dict(_session_row(conn, sid))
        d["score"] = round(max(h.score for h in hits), 4)
        d["turns"] = [
            h.to_dict() for h in sorted(hits[:PER_SESSION], key=lambda h: (h.ts, h.rowid))
        ]
        out[sid] = d
    return out


def _merge_turns(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two lists of one session's turns as one, in time order, each turn once (with every
    ranking that found it)."""
    by_id: dict[str, dict[str, Any]] = {}
    for t in (*a, *b):
        seen = by_id.get(t["turn_id"])
        if seen is None:
            by_id[t["turn_id"]] = dict(t)
        else:
            seen["found_by"] = list(dict.fromkeys([*seen["found_by"], *t["found_by"]]))
    return sorted(by_id.values(), key=lambda t: t["ts"])


def _close_candidates(close: dict[str, dict[str, Any]], room: int) -> list[Candidate]:
    out = []
    for s in list(close.values())[: max(0, room)]:
        body = "\n".join(
            f"- [{t['date']}] {t['role']}: {shorten(t['text'], TURN_CHARS)}" for t in s["turns"]
        )
        c = _session_candidate(s, "past turns close in meaning to the query", body, s["score"])
        _note_found_by(c, s["turns"])
        out.append(c)
    return out


def _note_found_by(c: Candidate, turns: list[dict[str, Any]]) -> None:
    found = list(dict.fromkeys(f for t in turns for f in t.get("found_by", ())))
    if found:
        c.provenance["found_by"] = found


def _session_candidate(s: dict[str, Any], why: str, body: str, score: float = 0.0) -> Candidate:
    title = f"{s['title'] or s['session_id']} — {s['date'] or 'undated'}"
    prov = {"session_id": s["session_id"], "source": s["source"], "source_path": s["source_path"],
            "turn_ids": [t["turn_id"] for t in s.get("turns", [])]}  # fmt: skip
    return Candidate("conversation", "conversation", title, body, prov, score, why)


def turn_hits(
    conn: Connection,
    query: str,
    limit: int,
    *,
    session_id: str = "",
    project: str = "",
    agent_id: str = "",
    semantic: SemanticRecall | None = None,
) -> list[Hit]:
    """`search` results over conversation turns."""
    qt = topic_terms(query)
    p = semantic.plan(query) if semantic is not None else None
    if semantic is not None and p is not None:
        hits = fused_turns(conn, p, semantic, limit=limit, session_id=session_id,
                           project=project, agent_id=agent_id)  # fmt: skip
        qt = topic_terms(" ".join(p.full_text.values()))
    else:
        hits = search_turns(conn, query, limit=limit, query_terms=qt, session_id=session_id, project=project,
                            agent_id=agent_id)  # fmt: skip
    return [h.to_hit(qt) for h in hits]
