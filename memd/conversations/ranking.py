"""One ranking for `search` over memory and conversations: where text came from, one scale.

Memory sections (`memd.memory.search.find_sections`) and conversation turns
(`memd.conversations.turn_search.find_turns`) are each ranked by their own ranker; this module
puts them on one page:

- **Tiers.** A section of `_core/`, `topics/`, `projects/`, an agent's file or a note is
  *curated* (a person or memd wrote it as memory); the journal, the archive and conversation
  turns are tiers of their own. Each tier has a prior (`PRIORS`): a curated memory outranks the
  journal line or the turn that says the same thing as well.
- **One scale.** A hit's score is ``prior × anchor × own``: `own` is its ranker's score over
  the best of its tier in the same list (the ranker's order within a tier is kept), `anchor` how
  well the best hits of its tier match the query at all, in [0, 1] — the share of the query's
  words the hit holds (`coverage`), or its vector's cosine placed on the calibrated scale of
  `memd.semantic.recipe` — so a note's 0.8 and a turn's 0.6 mean the same thing.
- **Duplicates collapse.** A journal line whose exchange is among the turn hits is folded into
  that turn; a turn or journal line that repeats a curated memory (its source by the memory's
  `src`, or the memory's words said again) is folded into it, and so is the other turn of that
  turn's exchange where it says the same in other words: the question whose answer repeats the
  memory, either turn of an exchange the memory's `src` names; a question left is folded into
  its answer. What was folded is listed as the hit's `sources`; the hit keeps the best score.
- **The matching items.** A section hit names the list items that matched (`items`), shown
  instead of the whole section.

Ties are broken by the tier, then the place in the ranker's list, then the hit's path and id,
so the same index and query give the same page every time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from memd.conversations import unheard
from memd.conversations.match_words import coverage, query_words, spelled, text_words
from memd.conversations.repo import EVERY_TURN, TurnScope, exchange_partners
from memd.conversations.turn_search import TurnHit, find_turns, turn_texts
from memd.conversations.turn_search import searched_text as turn_text
from memd.core.models import Hit, HitSource
from memd.core.text import file_words, plain_text, short_id, snippet
from memd.db import Connection
from memd.memory.parse import split_item
from memd.memory.search import FusedSection, find_sections, section_lists
from memd.memory.search import searched_text as section_text
from memd.semantic.fusion import Script, dominant_script
from memd.semantic.recipe import VECTOR, Plan, all_on_common, one_sense_too_far, similarity
from memd.semantic.service import SemanticRecall

CURATED = "curated"
ARCHIVE = "archive"
JOURNAL = "journal"
TURN = "conversation"
TIER_ORDER = (CURATED, ARCHIVE, TURN, JOURNAL)
_CURATED_KINDS = frozenset({"core", "topic", "project", "agent", "note"})

PRIORS: Mapping[str, float] = {CURATED: 1.0, ARCHIVE: 0.6, TURN: 0.8, JOURNAL: 0.6}
"""A tier's weight on the one scale: a turn or journal line that repeats a curated memory is
folded into it (`collapse`); of the rest, a curated memory outranks a turn matching as much of
the query, not one that answers all of it when the memory holds a word of it. Chosen with
`OWN_MATCH` on the ranking set's folds A-E, each also left out (`bench/ranking.py --tiers`)."""
ANCHOR_TOP = 3
"""A tier's anchor is the best match among its first this many hits."""
BESIDE_SECTIONS = "turn beside sections"
OWN_MATCH: Mapping[str, float] = {"section": 0.5, "turn": 0.0, BESIDE_SECTIONS: 0.5}
"""How much of a hit's score is its own match rather than its tier's anchor times its place in
its ranker's list, by kind of hit: a section's list items say plainly whether they are what
the query asks (a whole section's bm25 does not). Turns alone on a page keep their ranker's
order (its neighbour, date and speaker evidence; LoCoMo's folds, `bench/locomo_tune.py`);
beside sections a turn's own words count too (`BESIDE_SECTIONS`, chosen with `PRIORS`)."""
DEPTH = 2
"""Each ranker is asked for this many times the hits a page shows (at least `MIN_DEPTH`): the
duplicates folded away and the tiers mixed need more than a page of each."""
MIN_DEPTH = 20
REPEAT_SHARE = 0.5
"""A turn or journal line repeats a memory when it holds this share of the memory's words (two
at least), or its whole text: said in other words, about half (ranking set A-E: 0.4-0.55)."""
ITEMS_SHOWN = 3


# -- candidates ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Item:
    """A list item of a section: its line, text (metadata comment left out) and metadata."""

    line: int
    text: str
    meta: Mapping[str, str]


@dataclass(slots=True)
class Candidate:
    """A hit on its way to the page."""

    hit: Hit
    tier: str
    position: int  # in its ranker's list
    own: float  # its ranker's score, before normalising within its tier
    match: float  # how well it matches the query, in [0, 1]
    words: frozenset[str]  # a turn's (`collapse` compares them with memories); none for sections
    items: list[Item] = field(default_factory=list)  # matching items (sections)
    entries: list[Item] = field(default_factory=list)  # matching journal entries
    sources: list[Candidate] = field(default_factory=list)
    score: float = 0.0
    excerpt: str = ""  # a section's snippet is made of it and `terms` once it is shown
    terms: list[str] = field(default_factory=list)
    partner: str = ""  # a turn's: the other turn of its exchange (`Found.partners`)

    def shown(self, sources: list[HitSource]) -> Hit:
        """The hit as a page shows it: its score and sources, and a section's snippet and
        matching items as text, made only now (most candidates are never shown)."""
        score = round(self.score, 4)
        if self.hit.kind != "section":
            return msgspec.structs.replace(self.hit, score=score, sources=sources)
        items = [plain_text(it.text) for it in self.items[:ITEMS_SHOWN]]
        return msgspec.structs.replace(self.hit, score=score, sources=sources, items=items,
                                       snippet=snippet(self.excerpt, self.terms))  # fmt: skip

    @property
    def key(self) -> tuple[int, int, str, str]:
        """The order of two hits of equal score: tier, place in their list, path, id."""
        return (TIER_ORDER.index(self.tier), self.position, self.hit.path, self.hit.turn_id)


@dataclass(frozen=True, slots=True)
class Query:
    """What a hit is matched against: the query's words, its bridge's, and its plan."""

    words: list[str]
    bridged: list[str]
    plan: Plan | None
    # Every word of both with how a text spells it (`spelled`), worked out once per query.
    spelled: tuple[tuple[str, str], ...] = ()
    # The bridge's words by the query's word they translate (a name it kept: alone).
    senses: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def of(cls, text: str, plan: Plan | None) -> Query:
        bridged = plan.full_text.get("fts:bridged", "") if plan is not None else ""
        words, also = query_words(text), query_words(bridged)
        senses = _senses(plan) if plan is not None else ()
        return cls(words, also, plan, tuple((w, spelled(w)) for w in (*words, *also)), senses)

    def match(self, held: frozenset[str]) -> float:
        """The share of the query's words a text holds: of the words as typed, or of the words
        its bridge translated (one held sense of a word is the word held: a word of five
        senses is not five words), whichever is more."""
        if not self.senses:
            return max(coverage(self.words, held), coverage(self.bridged, held))
        found = sum(any(map(held.__contains__, ws)) for ws in self.senses)
        return max(coverage(self.words, held), found / len(self.senses))

    def match_with(self, head: frozenset[str], text: str, head_match: float | None = None) -> float:
        """`match(head | text_words(text))`, the text's words read only when one of the query's
        words could be among them: most list items of a section hold none (`head_match`:
        `match(head)`, when the caller already knows it)."""
        low = text.lower().replace("’", "'")
        if any(w not in head and s in low for w, s in self.spelled):
            return self.match(head | text_words(text))
        return self.match(head) if head_match is None else head_match

    def shown(self, found_by: Sequence[str], cosine: float | None, script: Script,
              supported: bool, common: bool = False, text: str = "") -> bool:  # fmt: skip
        """Whether a hit may be shown: found by full text, or close enough by its vector
        (`SemanticRecall.kept`; `common`: full text found its kind of hit for this query only by
        common words, `memd.semantic.recipe.all_on_common`); one found only through the bridge
        that holds (`text`: what full text searched of it) one of several words the bridge
        translated, only when its vector is close enough (`recipe.one_sense_too_far`)."""
        if self.plan is None:
            return True
        common = common and found_by != (VECTOR,)
        if not SemanticRecall.kept(self.plan, found_by, cosine, script, supported, common):
            return False
        return not one_sense_too_far(
            self.plan, found_by, cosine, script, lambda: self.one_sense(text)
        )

    def one_sense(self, text: str) -> bool:
        """Whether `text` holds one (or none) of the query's words its bridge translated, of
        two or more."""
        if len(self.senses) < 2:
            return False
        held = text_words(text)
        return sum(any(map(held.__contains__, ws)) for ws in self.senses) <= 1

    def closeness(self, cosine: float | None, script: Script) -> float:
        if cosine is None or self.plan is None:
            return 0.0
        return similarity(self.plan.script, script, cosine)


def _senses(plan: Plan) -> tuple[tuple[str, ...], ...]:
    """The bridge's words (as `query_words` spells them) grouped by the query's word they
    translate; each term it kept untranslated (a name) a group of its own."""
    b = plan.bridged
    if b is None:
        return ()
    out: list[tuple[str, ...]] = []
    translated: set[str] = set()
    for _, ts in b.words:
        translated.update(ts)
        out.append(tuple(dict.fromkeys(w for t in ts for w in query_words(t))))
    out += [tuple(query_words(f'"{t}"')) for t in b.terms if t not in translated]
    return tuple(g for g in out if g)


def section_items(text: str, start_line: int) -> list[Item]:
    out = []
    for i, line in enumerate(text.split("\n")):
        it = split_item(line)
        if it is not None and it[0]:
            out.append(Item(start_line + i, it[0], it[1]))
    return out


def _items_saying(text: str, start_line: int, spelled: Sequence[str]) -> list[Item] | None:
    """The list items of `text` on lines where one of `spelled` is written (lower-cased, ’ as
    '), in order: those `Query.match_with` can find a word in; None when the text has list
    items but none of them is on such a line, [] when it has none at all."""
    lines = text.split("\n")
    low = text.lower().replace("’", "'").split("\n")
    if len(low) != len(lines):  # lower-casing made a line break (no such letter is known)
        return section_items(text, start_line)
    out = []
    for i, line in enumerate(lines):
        if any(s in low[i] for s in spelled):
            it = split_item(line)
            if it is not None and it[0]:
                out.append(Item(start_line + i, it[0], it[1]))
    if out or not any((it := split_item(line)) is not None and it[0] for line in lines):
        return out
    return None


# Cached apart (joined by a space they are `text_words` of both: no word or CJK run crosses it).
@functools.lru_cache(maxsize=1 << 12)
def _file_head(title: str, rel: str, owner: str) -> frozenset[str]:
    return text_words(file_words(title, rel, owner))


_heading_words = functools.lru_cache(maxsize=1 << 12)(text_words)


def _section(f: FusedSection, position: int, q: Query, qt: list[str]) -> Candidate:
    r = f.row
    tier = (
        CURATED if r.kind in _CURATED_KINDS else JOURNAL if r.kind == JOURNAL else ARCHIVE
    )  # fmt: skip
    head_words = _file_head(r.title, r.rel, r.owner) | _heading_words(r.heading)
    alone = q.match(head_words)
    by_item = bool(f.item) and f.found_by == (VECTOR,)
    if alone or by_item:
        items: list[Item] | None = section_items(r.text, r.start_line)
    else:
        # The head matches nothing: an item on a line none of the query's other words is
        # written on matches nothing either (0), and is neither shown nor best.
        unheard = [sp for w, sp in q.spelled if w not in head_words]
        items = _items_saying(r.text, r.start_line, unheard)
    scored = [(q.match_with(head_words, it.text, alone), it) for it in items or ()]
    matching = [it for m, it in sorted(scored, key=lambda x: -x[0]) if m > 0]
    if by_item and items:
        matching = [it for it in items if it.text == f.item] or matching
    if items is None:  # list items, none matching
        best = alone
    elif scored:
        best = max(m for m, _ in scored)
    else:  # no list items: the section's text as a whole
        best = q.match_with(head_words, r.text, alone)
    match = best if f.cosine is None else max(best, q.closeness(f.cosine, f.cosine_script))
    hit = Hit(
        kind="section", path=r.path, heading=r.heading, start_line=r.start_line,
        end_line=r.end_line, score=0.0, text=r.text, file_kind=r.kind,
        archived=r.kind == "archive", found_by=list(f.found_by), snippet="",
    )  # fmt: skip
    return Candidate(hit, tier, position, f.score, match, frozenset(), matching,
                     matching if tier == JOURNAL else [],
                     excerpt=matching[0].text if matching else r.text or r.heading, terms=qt)  # fmt: skip


def _turn(t: TurnHit, position: int, q: Query, qt: list[str], partner: str = "") -> Candidate:
    words = text_words(f"{t.speaker} {t.text}")
    match = q.match(words)
    if t.cosine is not None:  # the script of a turn's text is read only to place its cosine
        match = max(match, q.closeness(t.cosine, dominant_script(t.text)))
    return Candidate(t.to_hit(qt), TURN, position, t.score, match, words, partner=partner)


# -- one scale ---------------------------------------------------------------------------------
def place(
    cands: list[Candidate],
    priors: Mapping[str, float] = PRIORS,
    own_match: Mapping[str, float] = OWN_MATCH,
) -> None:
    """Give every candidate its score on the one scale (see the module's docstring)."""
    by_tier: dict[str, list[Candidate]] = {}
    for c in cands:
        by_tier.setdefault(c.tier, []).append(c)
    beside = any(c.hit.kind == "section" for c in cands)
    for tier, group in by_tier.items():
        group.sort(key=lambda c: c.position)
        best = max((c.own for c in group), default=0.0)
        anchor = max((c.match for c in group[:ANCHOR_TOP]), default=0.0)
        for c in group:
            kind = BESIDE_SECTIONS if beside and c.hit.kind == "turn" else c.hit.kind
            w = own_match.get(kind, 0.0)
            ranked = anchor * (c.own / best if best > 0 else 0.0)
            c.score = priors.get(tier, 1.0) * (w * c.match + (1 - w) * ranked)


# -- duplicates ------------------------------------------------------------------------------
def _sources_of(items: Iterable[Item]) -> set[tuple[str, str]]:
    """(session, turn) pairs an item's `src` names (``<session>#<turn>,<turn>``)."""
    out: set[tuple[str, str]] = set()
    for it in items:
        sess, _, turns = it.meta.get("src", "").partition("#")
        out.update((sess, t) for t in turns.split(",") if t)
    return out


@functools.lru_cache(maxsize=1 << 12)
def _norm(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", plain_text(text).lower()).split())


_NOT_WORD = re.compile(r"[^\w]+")


def repeats(item: Item, words: frozenset[str], norm: str) -> bool:
    """Whether a text (its `words`, and `norm`: the text as `_norm` spells it) says a memory
    item again: the item's whole text in it, or `REPEAT_SHARE` of the item's words (two at
    least)."""
    return _says(_item_words(item.text), _norm(item.text), words, norm)


def _says(own: tuple[str, ...], said: str, words: frozenset[str], norm: str) -> bool:
    """`repeats` of an item whose words (`_item_words`) and `_norm` text are known."""
    held = sum(map(words.__contains__, own))
    if held >= 2 and held >= REPEAT_SHARE * len(own):
        return True
    return bool(said) and said in norm


@functools.lru_cache(maxsize=1 << 12)
def _item_words(text: str) -> tuple[str, ...]:
    return tuple(query_words(text))


def _entry_turn(entry: Item) -> str:
    return entry.meta.get("turn", "")


def _journal_into_turns(journal: Candidate, turns: list[Candidate]) -> Candidate | None:
    """The turn hit a journal hit's matching entries all record, if every one of them records
    a turn on the page (their exchange). Of the two turns of an exchange, the one that matches
    the query better (the answer saying "rerere" rather than the question "how do I avoid
    it?"), else the better placed."""
    session = journal.hit.heading.rsplit("·", 1)[-1].strip()
    home: Candidate | None = None
    for e in journal.entries or section_items(journal.hit.text, journal.hit.start_line):
        said = [p.strip(" …") for p in re.split(r"\*\*[QA]:\*\*", e.text)[1:] if p.strip(" …")]
        match = None
        for t in turns:
            if short_id(t.hit.session_id) != session and t.hit.session_id != session:
                continue
            if match is not None and t.match <= match.match:
                continue
            flat = " ".join(t.hit.text.split())
            if t.hit.turn_id == _entry_turn(e) or any(" ".join(s.split()) in flat for s in said):
                match = t
        if match is None:
            return None
        home = home or match
    return home


def collapse(cands: list[Candidate]) -> list[Candidate]:
    """The candidates with duplicates folded into the hit they repeat (best score first)."""
    cands = sorted(cands, key=lambda c: (-c.score, c.key))
    turns = [c for c in cands if c.tier == TURN]
    gone: set[int] = set()
    for j in (c for c in cands if c.tier == JOURNAL):
        home = _journal_into_turns(j, turns)
        if home is not None:
            _fold(j, home)
            gone.add(id(j))
    lows = [c for c in cands if c.tier in (TURN, JOURNAL) and id(c) not in gone]
    curated = [(c, _Memory.of(c.items)) for c in cands if lows and c.tier == CURATED and c.items]
    for low in lows:
        said = _Said.of(low)
        for c, memory in curated:
            if said.repeats(memory):
                _fold(low, c)
                gone.add(id(low))
                break
    _fold_exchanges([c for c in lows if id(c) not in gone], [c for c, _ in curated], gone)
    return sorted((c for c in cands if id(c) not in gone), key=lambda c: (-c.score, c.key))


def _fold_exchanges(turns: list[Candidate], curated: list[Candidate], gone: set[int]) -> None:
    """Fold a user's turn into the memory its answer was folded into (the question asked for
    what the answer, and the memory, say), else into its answer where that is on the page: an
    exchange is shown by the answer, the question listed as its source. (Not the other way
    round: a reply to a turn that repeats a memory is shown by its own words, which may say
    more; a memory's `src` naming either turn of an exchange folds both, `_Said.repeats`.)"""
    home = {
        (s.hit.session_id, s.hit.turn_id): c
        for c in curated
        for s in c.sources
        if s.tier == TURN and s.hit.role == "assistant"
    }
    home |= {(t.hit.session_id, t.hit.turn_id): t for t in turns if t.hit.role == "assistant"}
    for t in turns:
        asks = t.tier == TURN and t.partner and t.hit.role == "user"
        c = home.get((t.hit.session_id, t.partner)) if asks else None
        if c is not None:
            _fold(t, c)
            gone.add(id(t))


@dataclass(frozen=True, slots=True)
class _Memory:
    """A curated hit's matching items as `_Said.repeats` compares them, read once per page
    rather than once for every turn or journal line compared with them."""

    said: set[tuple[str, str]]  # the (session, turn) pairs its items' `src` name
    turns: frozenset[str]  # those turns alone
    items: tuple[tuple[tuple[str, ...], str], ...]  # each item's words and `_norm` text

    @classmethod
    def of(cls, items: list[Item]) -> _Memory:
        said = _sources_of(items)
        return cls(said, frozenset(t for _, t in said),
                   tuple((_item_words(it.text), _norm(it.text)) for it in items))  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Said:
    """What a turn or journal hit says, read once for every memory it is compared with."""

    low: Candidate
    norm: str  # its text as `_norm` spells it
    words: frozenset[str]
    turns: frozenset[str]  # the turns a journal hit's entries record

    @classmethod
    def of(cls, low: Candidate) -> _Said:
        if low.tier == TURN:  # the turn of its exchange a memory's `src` names is the turn's
            partner = frozenset((low.partner,)) if low.partner else frozenset()
            return cls(low, _norm(low.hit.text), low.words, partner)
        text = " ".join(e.text for e in low.entries)
        return cls(
            low, _norm(text), text_words(text), frozenset(_entry_turn(e) for e in low.entries)
        )

    def repeats(self, memory: _Memory) -> bool:
        """Whether it says `memory` again."""
        low = self.low
        if low.tier == TURN and (low.hit.session_id, low.hit.turn_id) in memory.said:
            return True
        if self.turns and self.turns & memory.turns:
            return True
        return any(_says(own, said, self.words, self.norm) for own, said in memory.items)


def _fold(low: Candidate, into: Candidate) -> None:
    into.sources.append(low)
    into.sources.extend(low.sources)
    low.sources = []
    into.score = max(into.score, low.score)


# -- the page --------------------------------------------------------------------------------
def _source(c: Candidate) -> HitSource:
    h = c.hit
    return HitSource(
        kind="journal" if c.tier == JOURNAL else h.kind, path=h.path, heading=h.heading,
        start_line=h.start_line, session_id=h.session_id, turn_id=h.turn_id, ts=h.ts,
        role=h.role, snippet=snippet(c.excerpt, c.terms) if h.kind == "section" else h.snippet,
        source=h.source,
    )  # fmt: skip


def page(cands: list[Candidate], limit: int) -> list[Hit]:
    """The first `limit` candidates as hits, with their sources and scores."""
    out = []
    # A hit of score 0 matched nothing the scale counts (a stray bigram, the last of a vector
    # list): no evidence, not shown.
    for c in [c for c in collapse(cands) if c.score > 0][:limit]:
        sources = [_source(s) for s in sorted(c.sources, key=lambda s: (-s.score, s.key))]
        out.append(c.shown(sources))
    return out


def search(
    conn: Connection,
    query: str,
    *,
    limit: int = 10,
    scope: str = "all",
    turns: TurnScope = EVERY_TURN,
    semantic: SemanticRecall | None = None,
) -> list[Hit]:
    """`search`: memory sections and conversation turns on one page, best first (`scope`
    "memory" or "conversations" asks one of them; `turns` filters the turns)."""
    found = gather(conn, query, depth=max(MIN_DEPTH, DEPTH * limit), scope=scope, turns=turns,
                   semantic=semantic)  # fmt: skip
    return rank(found, limit)


@dataclass(frozen=True, slots=True)
class Found:
    """What the two rankers found for one query, before it is put on one page."""

    query: Query
    sections: list[FusedSection]
    section_terms: list[str]
    turns: list[TurnHit]
    turn_terms: list[str]
    partners: Mapping[int, str] = field(default_factory=dict)
    """The other turn of each found turn's exchange, by the found turn's row id
    (`memd.conversations.repo.exchange_partners`)."""
    memory: bool = True
    """Whether memory was asked: a page of turns alone (a conversation's search, LoCoMo's) keeps
    its ranker's order, no query judged unheard (`unheard`)."""


def gather(
    conn: Connection,
    query: str,
    *,
    depth: int,
    scope: str = "all",
    turns: TurnScope = EVERY_TURN,
    semantic: SemanticRecall | None = None,
) -> Found:
    """Ask both rankers for `depth` hits each (one of them with `scope`).

    With recall by meaning, both rankers' full-text searches run first, while the query is
    embedded: the wait for its vector (at most `semantic.query_wait_ms` from the ask) then
    leaves only vector search and fusion behind it, not the second ranker's full text."""
    p = semantic.plan(query) if semantic is not None else None
    memory, talk = scope != "conversations", scope != "memory"
    sections: list[FusedSection] = []
    found: list[TurnHit] = []
    st: list[str] = []
    tt: list[str] = []
    said = heard = None
    if semantic is not None and p is not None:
        said = section_lists(conn, p, semantic) if memory else None
        heard = turn_texts(conn, p, semantic, scope=turns) if talk else None
    if memory:
        sections, st = find_sections(conn, query, limit=depth, semantic=semantic, text=said)
    if talk:
        found, tt = find_turns(conn, query, limit=depth, scope=turns, semantic=semantic,
                               text=heard)  # fmt: skip
    partners = exchange_partners(conn, [t.rowid for t in found]) if found and sections else {}
    return Found(Query.of(query, p), sections, st, found, tt, partners, memory)


def rank(
    found: Found,
    limit: int,
    priors: Mapping[str, float] = PRIORS,
    own_match: Mapping[str, float] = OWN_MATCH,
) -> list[Hit]:
    """What `gather` found on one page of at most `limit` hits."""
    q = found.query
    files = {f.row.path for f in found.sections if f.found_by != (VECTOR,)}
    sessions = {t.session_id for t in found.turns if t.found_by != (VECTOR,)}
    p = q.plan
    sh = [(f.found_by, section_text(f.row)) for f in found.sections]  # what full text searched
    th = [(t.found_by, turn_text(t)) for t in found.turns]
    said, told = p is not None and all_on_common(p, sh), p is not None and all_on_common(p, th)
    cands = [_section(f, i, q, found.section_terms) for i, (f, (_, s)) in enumerate(zip(found.sections, sh, strict=True))
             if p is None or q.shown(f.found_by, f.judged_cosine, f.cosine_script, f.row.path in files, said, s)]  # fmt: skip
    cands += [_turn(t, i, q, found.turn_terms, found.partners.get(t.rowid, ""))
              for i, (t, (_, s)) in enumerate(zip(found.turns, th, strict=True))
              if p is None or q.shown(t.found_by, t.judged_cosine, dominant_script(t.text),
                                      t.session_id in sessions, told, s)]  # fmt: skip
    if found.memory and unheard.share(q.words, p, sh + th) >= unheard.SHARE:
        cands = [c for c in cands if c.match > unheard.MATCH or not unheard.by_own_words(c.hit)]
    place(cands, priors, own_match)
    return page(cands, limit)


__all__ = [
    "PRIORS",
    "Candidate",
    "Found",
    "collapse",
    "gather",
    "place",
    "query_words",
    "rank",
    "search",
    "text_words",
]
