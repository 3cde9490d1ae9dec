"""Search over conversation turns: the terms of a topic, full-text ranking with neighbours and
boosts, and its fusion with turn vectors when recall by meaning is on.

`search_turns` is the full-text path (FTS5 bm25 over turns, plus part of the neighbours'
scores, boosted by the dates and speakers a query names); `fused_turns` runs it on the query as
typed and bridged and fuses the lists with the nearest turn vectors, then searches again with
the words of the best turns of that fusion (`feedback_terms`, `with_feedback`) and fuses once
more; `find_turns` is what `memd.conversations.ranking` puts on `search`'s page.
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

from memd.api import messages as msg
from memd.conversations import repo
from memd.conversations.dates import asks_when, date_windows, says_when
from memd.conversations.repo import EVERY_TURN, TurnScope
from memd.core.models import Hit
from memd.core.text import cjk_bigrams, snippet, terms
from memd.db import Connection
from memd.semantic.fusion import Ranked, Script, dominant_script
from memd.semantic.recipe import DEPTH, FTS_FEEDBACK, VECTOR, Plan, Weights, all_on_common
from memd.semantic.service import SemanticRecall

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


def fmt_time(ts: float) -> str:
    """A turn's local date and time, as shown to people and models."""
    if not ts:
        return ""
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


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
    cosine: float | None = None  # and its vector's cosine with the query's, when ranked by it
    bound: float | None = None  # the vector list's last cosine (a bound where it did not reach)

    @property
    def judged_cosine(self) -> float | None:
        """Its cosine, or for a turn the vector list did not reach, the list's last."""
        return self.cosine if self.cosine is not None else self.bound

    def to_hit(self, query_terms: list[str]) -> Hit:
        return Hit(
            kind="turn", path=self.source_path, heading=self.session_title or self.session_id,
            start_line=self.line, end_line=self.line, score=round(self.score, 4),
            snippet=snippet(self.text, query_terms), text=self.text, session_id=self.session_id,
            turn_id=self.turn_id, ts=self.ts, session_title=self.session_title, role=self.role,
            found_by=list(self.found_by), source=self.source,
        )  # fmt: skip

    def recalled(self) -> msg.RecalledTurn:
        """The turn as `recall` shows it."""
        return msg.RecalledTurn(
            session_id=self.session_id, turn_id=self.turn_id, role=self.role,
            speaker=self.speaker, text=self.text, ts=self.ts, date=fmt_time(self.ts),
            score=round(self.score, 4), source=self.source, source_path=self.source_path,
            line=self.line, session_title=self.session_title,
            found_by=list(self.found_by) if self.found_by else msg.UNSET,
        )  # fmt: skip


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
# After fusion: the vector list knows nothing of who spoke, which session a turn is in, what
# its neighbours say or whether it says when. Each LoCoMo fold's training conversations choose
# these (`bench/locomo_tune.py`, docs/retrieval.md); what ships is a value both folds' curves
# accept (within one standard error of each fold's best), so the held-out figures of both
# folds stand for it: a speaker boost of 1.5, a "when" boost of 2.0, the session's share 1.5
# and a date the question names 2.0. The neighbours' share (0.0 on one fold, 0.1-0.2 on the
# other) stays off.
FUSED_SPEAKER_BOOST = 1.5
SESSION_WEIGHT = 1.5
"""Every turn gains this times its session's share of the fused scores (relative to the best
session's): the evidence of a question is often several turns of one session."""
FUSED_NEIGHBOUR_WEIGHT = 0.0
"""Of the better fused score of a turn's two neighbours in its session, added to its own."""
WHEN_BOOST = 2.0
"""For a question asking when (`dates.asks_when`), a turn that places what it tells in time
(`dates.says_when`) gains this share of its score."""
FUSED_DATE_BOOST = 2.0
"""For a question naming a date ("on 13 October 2023", "2023年10月13日"), a turn of that time
(`dates.date_windows`) gains this share of its fused score: full text boosts the turns it
finds itself (`DATE_BOOST`), but a Chinese question's own words find no English turn, and
the vector and bridged lists know nothing of dates."""
TURN_WEIGHTS = Weights(vector=1.0, cross_vector=1.5)
"""The recipe's fusion weights over turns (`fuse_turns`): the vector list counts as much as the
full-text list of the question as typed, and 1.5 times for a turn in another script than the
question's (a Chinese question over English turns). Both LoCoMo folds' curves accept these
(`bench/locomo_tune.py`); sections keep `memd.semantic.recipe`'s own weights, chosen on the
ranking set. The feedback list's weight (`with_feedback`) stays 0: one fold accepts 0.25-0.5,
the other 1.0, none accepts 0 — no value both accept."""
BRIDGED_WORDS_DECAY = 0.0
"""The bridged list's weight is divided by the number of words the bridge translated to this
power: every translated word brings all its senses ("参加": participate, take, part), so a
long question's bridged search matches on more stray senses than a short one's."""


@dataclass(frozen=True, slots=True)
class AfterFusion:
    """The evidence put on the fused scores (defaults: the module's constants)."""

    speaker: float = FUSED_SPEAKER_BOOST
    session: float = SESSION_WEIGHT
    neighbour: float = FUSED_NEIGHBOUR_WEIGHT
    when: float = WHEN_BOOST
    date: float = FUSED_DATE_BOOST
    bridged_decay: float = BRIDGED_WORDS_DECAY
    """Not put on the fused scores but on the bridged list before fusion (`bridged_share`)."""


def _name_in(name: str, low_query: str) -> bool:
    """Whether a speaker's name is in the (lower-cased) query as a name of its own: not inside
    a longer Latin word, whatever is around it ("Caroline是什么时候…" names Caroline: a Chinese
    character is a word character to `\\b`, so a word boundary would not see it)."""
    name = name.lower()
    if _CJK_RUN.search(name):
        return name in low_query
    return re.search(_NOT_LATIN_BEFORE + re.escape(name) + _NOT_LATIN_AFTER, low_query) is not None


_NOT_LATIN_BEFORE = (
    r"(?<![^\W\d_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"
)
_NOT_LATIN_AFTER = r"(?![^\W\d_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])"


def search_turns(
    conn: Connection,
    query: str,
    *,
    limit: int = 10,
    scope: TurnScope = EVERY_TURN,
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
    speaker is named in the query. Only turns in `scope` (`TurnScope`).
    """
    qt = query_terms if query_terms is not None else topic_terms(query)
    match = _fts_match(qt, min_terms)
    if not match:
        return []
    base = repo.match_turns(
        conn, match, limit=max(limit, RECENT_CANDIDATES if recent else CANDIDATES),
        scope=scope, recent=recent,
    )  # fmt: skip
    if not base:
        return []
    ids = set(base) | {i + d for i in base for d in (-2, -1, 1, 2)}
    meta = repo.turn_refs(conn, ids)
    windows = date_windows(query, now=time.time() if now is None else now)
    low = query.lower()
    named: dict[str, bool] = {}
    # (-score, ±id): sorted as they are, best first, ties by id (newest first with `recent`).
    scored: list[tuple[float, int]] = []
    order = -1 if recent else 1
    steps = tuple(enumerate(NEIGHBOUR_WEIGHTS, 1))
    every = not (scope.project or scope.agent_id or scope.source)  # `holds` is always true
    for i, (_, sid, ts, speaker, proj, agent, src) in meta.items():
        own = base.get(i)
        score = own[1] if own is not None else 0.0
        for dist, w in steps:
            lo, hi = base.get(i - dist), base.get(i + dist)
            x = lo[1] if lo is not None and lo[0] == sid else None
            y = hi[1] if hi is not None and hi[0] == sid else None
            near = x if y is None else y if x is None else max(x, y)  # the better of the two
            if near is not None:
                score += w * near
        # A neighbour shares its candidate's session, so only the per-turn filters are left to check.
        if score <= 0 or not (every or scope.holds(proj, agent, src)):
            continue
        if windows and any(a <= ts < b for a, b in windows):
            score *= 1 + DATE_BOOST
        if speaker:
            if speaker not in named:
                named[speaker] = _name_in(speaker, low)
            if named[speaker]:
                score *= 1 + SPEAKER_BOOST
        scored.append((-score, order * i))
    scored.sort()
    top = {order * k: -neg for neg, k in scored[:limit]}
    if not top:
        return []
    hits = [
        TurnHit(r.id, r.session_id, r.turn_id, r.role, r.text, r.ts, top[r.id], r.source,
                r.source_path, r.line, r.session_title, r.speaker)
        for r in repo.found_turns(conn, top)
    ]  # fmt: skip
    hits.sort(key=lambda h: (-h.score, -h.rowid if recent else h.rowid))
    return hits


@dataclass(frozen=True, slots=True)
class TurnLists:
    """The rankings the recipe fuses for one query over turns: every turn any of them found,
    the lists by name, each turn's script and its vector's cosine."""

    hits: dict[int, TurnHit]
    lists: dict[str, Ranked[int]]
    scripts: dict[int, Script]
    cosines: dict[int, float]


@dataclass(frozen=True, slots=True)
class TurnTexts:
    """The half of `turn_lists` that needs no vector: the full-text rankings of one query's plan
    over turns (as typed and bridged) and the turns they found."""

    plan: Plan
    hits: dict[int, TurnHit]
    lists: dict[str, Ranked[int]]


def turn_texts(
    conn: Connection,
    p: Plan,
    semantic: SemanticRecall,
    *,
    scope: TurnScope = EVERY_TURN,
    now: float | None = None,
) -> TurnTexts:
    """`search_turns` with the query as typed and bridged (`DEPTH` each, its date and speaker
    boosts inside its own scores), the query's vector asked for first so that it is embedded
    meanwhile."""
    semantic.prefetch(p)
    hits: dict[int, TurnHit] = {}
    lists: dict[str, Ranked[int]] = {}
    for name, text in p.full_text.items():
        found = search_turns(conn, text, limit=DEPTH, scope=scope, now=now)
        for h in found:
            hits.setdefault(h.rowid, h)
        lists[name] = Ranked([h.rowid for h in found], [h.score for h in found])
    return TurnTexts(p, hits, lists)


def turn_lists(
    conn: Connection,
    p: Plan,
    semantic: SemanticRecall,
    *,
    scope: TurnScope = EVERY_TURN,
    now: float | None = None,
    text: TurnTexts | None = None,
) -> TurnLists:
    """`turn_texts` (or `text` when the caller ran it already with the same scope) and the
    nearest turn vectors of the same scope."""
    if text is None:
        text = turn_texts(conn, p, semantic, scope=scope, now=now)
    hits = dict(text.hits)
    lists = dict(text.lists)
    near = semantic.turns(p, session_id=scope.session_id, project=scope.project,
                          agent_id=scope.agent_id, exclude_session=scope.exclude_session,
                          source=scope.source)  # fmt: skip
    if near.docs:
        for r in repo.found_turns(conn, [d for d in near.docs if d not in hits]):
            hits[r.id] = TurnHit(r.id, r.session_id, r.turn_id, r.role, r.text, r.ts, 0.0,
                                 r.source, r.source_path, r.line, r.session_title, r.speaker)  # fmt: skip
        keep = [(d, c) for d, c in zip(near.docs, near.cosines, strict=True) if d in hits]
        lists[VECTOR] = Ranked([d for d, _ in keep], [c for _, c in keep])
    scripts = semantic.scripts(near, {i: h.text for i, h in hits.items()}, hits)
    return TurnLists(hits, lists, scripts, dict(zip(near.docs, near.cosines, strict=True)))


def fuse_turns(
    p: Plan,
    t: TurnLists,
    semantic: SemanticRecall,
    *,
    limit: int,
    gate: bool = True,
    weights: Weights | None = None,
    after: AfterFusion | None = None,
    now: float | None = None,
) -> list[TurnHit]:
    """The recipe's fusion of `turn_lists` (`memd.semantic.recipe.fuse`, the bridged list's
    weight shared out by `bridged_share`), each hit naming the rankings that found it; with
    `gate`, a turn found by its vector alone only when its cosine reaches the calibrated
    floor (`memd.semantic.recipe.close_enough`). Then the evidence of `after` (`AfterFusion`,
    `_after_fusion`; `now` places the dates a query names)."""
    a = after or AfterFusion()
    w = weights or TURN_WEIGHTS
    w = dataclasses.replace(w, bridged=w.bridged * bridged_share(p, a.bridged_decay))
    fused = semantic.fuse(p, t.lists, t.scripts, None, w, lambda k: searched_text(t.hits[k]))
    said = {t.hits[h.key].session_id for h in fused.hits if h.found_by != (VECTOR,)}
    # A turn a full vector list did not reach is no closer than the list's last one.
    bound = min(t.cosines.values()) if len(t.cosines) >= DEPTH else None
    common = gate and all_on_common(
        p, ((h.found_by, searched_text(t.hits[h.key])) for h in fused.hits)
    )
    kept = [h for h in fused.hits if not gate or semantic.kept(
        p, h.found_by, t.cosines.get(h.key, bound), t.scripts[h.key],
        t.hits[h.key].session_id in said, common and h.found_by != (VECTOR,))]  # fmt: skip
    hits = [dataclasses.replace(t.hits[h.key], score=h.score, found_by=h.found_by,
                                cosine=t.cosines.get(h.key), bound=bound) for h in kept]  # fmt: skip
    return _after_fusion(hits, p.query, a, now)[:limit]


def searched_text(h: TurnHit) -> str:
    """What full text searches of a turn: its speaker and text."""
    return f"{h.speaker} {h.text}"


def bridged_share(p: Plan, decay: float) -> float:
    """What the bridged list's weight is multiplied by for `p`: 1 over the number of words
    its bridge translated, to the power `decay` (1 without a bridge or a decay)."""
    n = len(p.bridged.words) if p.bridged is not None else 0
    return 1.0 if n <= 1 or decay <= 0 else float(n) ** -decay


def _after_fusion(
    hits: list[TurnHit], query: str, a: AfterFusion, now: float | None = None
) -> list[TurnHit]:
    """The evidence the vector list cannot carry, put on the fused scores: a turn whose speaker
    the query names gains `a.speaker` of its score, and one in a time the query names (`now`
    placing "last week") `a.date` of it; then a turn gains `a.neighbour` of the
    better of its two neighbours' scores in its session (a reply's answer is often the turn
    next to the one the query's words are in); for a question asking when, a turn that says
    when gains `a.when` of its score; last every turn gains `a.session` times its session's
    share of the scores (relative to the best session's)."""
    if not hits or not (
        a.speaker > 0 or a.session > 0 or a.neighbour > 0 or a.when > 0 or a.date > 0
    ):
        return hits
    scores = _named_speaker(hits, query, a.speaker) if a.speaker > 0 else [h.score for h in hits]
    if a.date > 0:
        scores = _in_named_time(hits, scores, query, a.date, now)
    if a.neighbour > 0:
        scores = _with_neighbours(hits, scores, a.neighbour)
    if a.when > 0 and asks_when(query):
        scores = [sc * (1 + a.when) if says_when(h.text) else sc
                  for h, sc in zip(hits, scores, strict=True)]  # fmt: skip
    if a.session > 0:
        total: dict[str, float] = {}
        for h, sc in zip(hits, scores, strict=True):
            total[h.session_id] = total.get(h.session_id, 0.0) + sc
        best = max(total.values()) or 1.0
        scores = [sc * (1 + a.session * total[h.session_id] / best)
                  for h, sc in zip(hits, scores, strict=True)]  # fmt: skip
    out = [dataclasses.replace(h, score=sc) for h, sc in zip(hits, scores, strict=True)]
    out.sort(key=lambda h: (-h.score, h.rowid))
    return out


def _named_speaker(hits: list[TurnHit], query: str, boost: float) -> list[float]:
    """The hits' scores, each times ``1 + boost`` when the query names its speaker."""
    low = query.lower()
    named: dict[str, bool] = {}
    out = []
    for h in hits:
        if h.speaker and h.speaker not in named:
            named[h.speaker] = _name_in(h.speaker, low)
        out.append(h.score * (1 + boost) if h.speaker and named[h.speaker] else h.score)
    return out


def _in_named_time(
    hits: list[TurnHit], scores: list[float], query: str, boost: float, now: float | None
) -> list[float]:
    """The scores, each times ``1 + boost`` when its turn falls in a time window the query
    names (`dates.date_windows`)."""
    windows = date_windows(query, now=time.time() if now is None else now)
    if not windows:
        return scores
    return [sc * (1 + boost) if any(lo <= h.ts < hi for lo, hi in windows) else sc
            for h, sc in zip(hits, scores, strict=True)]  # fmt: skip


def _with_neighbours(hits: list[TurnHit], scores: list[float], weight: float) -> list[float]:
    """Each score plus `weight` times the better of its turn's neighbours' (the turns just
    before and after it in its session, when they are hits too; their scores before this)."""
    at = {h.rowid: (h.session_id, sc) for h, sc in zip(hits, scores, strict=True)}
    out = []
    for h, sc in zip(hits, scores, strict=True):
        near = [v for sid, v in (at.get(h.rowid - 1, ("", 0.0)), at.get(h.rowid + 1, ("", 0.0)))
                if sid == h.session_id]  # fmt: skip
        out.append(sc + weight * max(near) if near else sc)
    return out


def fused_turns(
    conn: Connection,
    p: Plan,
    semantic: SemanticRecall,
    *,
    limit: int,
    scope: TurnScope = EVERY_TURN,
    now: float | None = None,
    gate: bool = True,
    text: TurnTexts | None = None,
) -> list[TurnHit]:
    """The recipe over turns: `turn_lists` fused by `fuse_turns`."""
    t = turn_lists(conn, p, semantic, scope=scope, now=now, text=text)
    hits = fuse_turns(p, t, semantic, limit=limit, gate=gate, now=now)
    if TURN_WEIGHTS.feedback <= 0 or not hits:
        return hits
    t = with_feedback(conn, t, feedback_terms(p, hits), scope=scope, now=now)
    return fuse_turns(p, t, semantic, limit=limit, gate=gate, now=now)


FEEDBACK_TURNS = 3
"""The best turns of the first fusion whose words make the feedback search."""
FEEDBACK_WORDS = 20
"""At most this many of their words (beside the query's own) are searched."""


def feedback_terms(
    p: Plan, hits: Sequence[TurnHit], turns: int = FEEDBACK_TURNS, most: int = FEEDBACK_WORDS
) -> list[str]:
    """The terms of the feedback search (pseudo-relevance feedback): the query's own terms,
    as typed and bridged, in a script the best `turns` hits are written in, then up to `most`
    of those hits' words the query does not hold, by the number of them that hold the word,
    then by the rank of the first. The evidence of a question spread over several turns
    shares words with the turns that answer it best more often than with the question ("What
    do Melanie's kids like?" ← the dinosaur exhibit, then the dinosaurs at the museum), and a
    Chinese question's best turns, found by their vectors, say in English what it asks.
    Speakers' names are left out: every turn of a conversation is one of its speakers'."""
    top = list(hits[:turns])
    own = topic_terms(" ".join(p.full_text.values()))
    scripts = {dominant_script(h.text) for h in top}
    names = {h.speaker.lower() for h in hits if h.speaker}
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for rank, h in enumerate(top):
        for w in dict.fromkeys(topic_terms(h.text)):
            if w in own or w in names or len(w) < 3 or w.isdigit():
                continue
            counts[w] = counts.get(w, 0) + 1
            first.setdefault(w, rank)
    more = sorted(counts, key=lambda w: (-counts[w], first[w]))[:most]
    return [w for w in own if dominant_script(w) in scripts] + more


def with_feedback(
    conn: Connection,
    t: TurnLists,
    words: Sequence[str],
    *,
    scope: TurnScope = EVERY_TURN,
    now: float | None = None,
) -> TurnLists:
    """`t` with the feedback list (``fts:feedback``): `search_turns` over `words`, `DEPTH`
    deep, in the same scope; the turns it adds come with their scripts."""
    if not words:
        return t
    found = search_turns(conn, " ".join(words), limit=DEPTH, scope=scope, now=now,
                         query_terms=list(words))  # fmt: skip
    hits, scripts = dict(t.hits), dict(t.scripts)
    for h in found:
        if h.rowid not in hits:
            hits[h.rowid] = h
            scripts[h.rowid] = dominant_script(h.text)
    lists = {**t.lists, FTS_FEEDBACK: Ranked([h.rowid for h in found], [h.score for h in found])}
    return TurnLists(hits, lists, scripts, t.cosines)


def ranked_turns(
    conn: Connection,
    query: str,
    *,
    limit: int,
    semantic: SemanticRecall | None = None,
    query_terms: list[str] | None = None,
    scope: TurnScope = EVERY_TURN,
) -> list[TurnHit]:
    """`fused_turns` when recall by meaning is on, else `search_turns` (as without it)."""
    p = semantic.plan(query) if semantic is not None else None
    if semantic is not None and p is not None:
        return fused_turns(conn, p, semantic, limit=limit, scope=scope)
    return search_turns(conn, query, limit=limit, query_terms=query_terms, scope=scope)


def find_turns(
    conn: Connection,
    query: str,
    *,
    limit: int,
    scope: TurnScope = EVERY_TURN,
    semantic: SemanticRecall | None = None,
    text: TurnTexts | None = None,
) -> tuple[list[TurnHit], list[str]]:
    """Turns matching `query`, best first, and the terms they were matched on (the query's,
    and with recall by meaning its bridge's): `fused_turns` when recall by meaning is on (a
    turn found by its vector alone only when it is close enough), else `search_turns`."""
    p = text.plan if text is not None else semantic.plan(query) if semantic is not None else None
    if semantic is not None and p is not None:
        hits = fused_turns(conn, p, semantic, limit=limit, scope=scope, text=text)
        return hits, topic_terms(" ".join(p.full_text.values()))
    qt = topic_terms(query)
    hits = search_turns(conn, query, limit=limit, query_terms=qt, scope=scope)
    return hits, qt
