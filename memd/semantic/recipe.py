"""The retrieval recipe for recall by meaning: what to embed, which rankings to run, how to fuse.

Chosen by `bench/semantic_eval.py` on LoCoMo (held-out folds; docs/retrieval.md has every
variant measured and the figures). For one query:

1. `plan` decides the rankings to run: full-text search with the query as typed (``fts``),
   full-text search with the query carried into the other language (``fts:bridged``,
   `memd.semantic.bridge`) when a dictionary is given, and exact cosine over stored passage
   vectors with the query's vector (``vector``).
2. The caller runs them (memd's own ranking for the two full-text lists, 50 deep, with
   their scores; cosine for the vectors) and `fuse` combines them by weighted score fusion
   (each list's scores min-max normalised over its 50 entries, then summed with the
   weights below), with one rule: a full-text list only counts for documents written in its
   query's script (a Chinese query's own words can only match a Chinese memory by the Latin
   names it carries, and its English bridge only an English one). Every hit names the
   lists that found it.
3. Over conversation turns, a second full-text search with the words of the best turns of
   that fusion (``fts:feedback``, `memd.conversations.turn_search.with_feedback`) is fused
   with the others once more: evidence spread over several turns shares words with the turns
   that answer best more often than with the question.

Stored per turn: the vector of `passage_texts` (the turn after the turn before it, in its
session) under the model id; per document its `dominant_script`, for the rule.

Pure Python: numpy is needed only where the vectors are searched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from memd.core.text import estimate_tokens, expand_cjk, shorten
from memd.core.text import terms as text_terms
from memd.semantic.bridge import Bridged, Dictionary, bridge
from memd.semantic.common_words import is_common, matched, root
from memd.semantic.fusion import ListFusion, Ranked, Script, dominant_script, fuse_lists
from memd.semantic.passages import Turn, turn_passages

K = TypeVar("K", bound=Hashable)

FTS = "fts"
FTS_BRIDGED = "fts:bridged"
FTS_FEEDBACK = "fts:feedback"
VECTOR = "vector"

# -- what is embedded ---------------------------------------------------------------------------
PASSAGE_BEFORE = 1
"""Turns of the same session embedded before each turn (the question a reply answers)."""
PASSAGE_AFTER = 0
"""Turns embedded after it."""

# -- how the rankings are fused -----------------------------------------------------------------
# Score fusion, not reciprocal-rank fusion: on held-out LoCoMo folds it chose the same vector
# weight on both training sets and kept both folds above memd's search alone, where RRF's
# choice on conversations 0-2 did not carry over (docs/retrieval.md, bench/semantic_eval.py).
VECTOR_WEIGHT = 0.5
"""Weight of the vector list against the full-text list of a query in the memory's language.
Chosen on LoCoMo dev conversations 0-2 and, separately, on 3-4: both chose 0.5."""
BRIDGED_WEIGHT = 1.0
"""Weight of the bridged full-text list (for documents in the bridged query's script): the
reference the cross-script vector weight is chosen against."""
CROSS_VECTOR_WEIGHT = 0.75
"""Weight of the vector list for documents in another script than the query's (a Chinese
question over an English memory): only the bridge and the vectors can find those. Chosen on
Chinese questions over LoCoMo dev conversations 0-2 (0.75) and 3-4 (1.0); on all five, 0.75."""
FEEDBACK_WEIGHT = 0.0
"""Weight of the feedback list (``fts:feedback``: full-text search with the words of the best
turns of the first fusion, `memd.conversations.turn_search.feedback_terms`)."""
DEPTH = 50
"""Entries read from each list."""
COSINE_STATS: Mapping[tuple[Script, Script], tuple[float, float]] = {
    ("latin", "latin"): (0.7917, 0.0257),
    ("latin", "cjk"): (0.7653, 0.0240),
    ("cjk", "latin"): (0.7729, 0.0309),
    ("cjk", "cjk"): (0.8329, 0.0199),
}
"""multilingual-e5-small's cosines between queries and the memory they are not about: the mean
and standard deviation, by (the query's script, the document's), over the ranking set's fold A
(44 queries against every section and turn of `bench/ranking_set`: 5,852 pairs, nearly all
unrelated; `bench/ranking.py --tune A`). Unrelated texts of one language score 0.75-0.85,
Chinese ones higher: a cosine means something only against these."""
FLOOR_SD = 3.5
"""A document found by its vector alone is shown by `search` and `recall` when its cosine stands
this many standard deviations above the mean of unrelated pairs of its scripts (chosen on the
ranking set's fold A with the LoCoMo training conversations checked; docs/retrieval.md)."""
FULL_SD = 4.5
"""A cosine this many standard deviations above that mean counts as a complete match."""
SUPPORTED_SD = 0.5
"""The floor, in the same standard deviations, for a document found by its vector alone next
to full-text evidence: a turn of a session, or a section of a file, that full text found too.
Chosen on each LoCoMo fold's training conversations (`bench/locomo_tune.py`: both chose 0.5),
where every question has its answer in scope and such turns carry it (the ranking set's
figures are the same at 0.5 as at 1.0); a vector hit with no word of the query anywhere near
it has only `FLOOR_SD` to stand on."""
BRIDGED_ONLY_SD = -0.25
"""A document that full text found only through the query's bridge (``fts:bridged``, not the
query as typed) is not shown by `search` and `recall` when its vector's cosine, where known,
stands below this many standard deviations around the mean of unrelated pairs: the dictionary
carries every sense of a word ("天": day, sky), so one sense matched is weak evidence, and the
vector, which read the whole question, says the text is less like it than an unrelated one is.
Chosen on the ranking set's fold A (`bench/ranking.py --tune A`, the middle of the values
that do best there); LoCoMo's conversations 0-2 checked: the same recall@10 as without it."""
ONE_SENSE_SD = 0.75
"""A document full text found only through the query's bridge that holds one of the two or
more words the bridge translated, and no other ("公司的报销流程是怎样的": a turn saying only
*process*), is shown by `search` only when its vector's cosine stands this many standard
deviations above the mean of unrelated pairs: a question the memory cannot answer shares one
word's sense with a memory about something else more often than an answer holds only one of
its words (`memd.conversations.ranking.Query.shown`). Chosen on the ranking set's folds A-D
read together as development data (in-process, both daemons' top-1 + top-3: the best value,
and no fold lower than without the rule; docs/retrieval.md)."""
COMMON_SD = 2.5
"""When full text found documents for a query only by common words (`all_on_common`: of the
words of the query as typed, or of its bridge, every one any of them holds is one the
dictionary uses in the senses of many headwords, `memd.semantic.common_words`: "day", "time",
"keep", "use"), `search`, `recall` and `context` show one of them only when its vector's
cosine stands this many standard deviations above the mean of unrelated pairs: those words
match notes on every subject, and the query's other words found nothing. First chosen on the
ranking set's fold A with `common_words.COMMON_GLOSSES` (`bench/ranking.py --tune A --only
common`: 3.0); lowered to 2.5 with folds A and B both read as development data: they do best
from 2.5 to 2.75, the gap between the closest hit of a no-answer query resting on common words
(2.35) and the answer of "最近在读什么书" (books: 2.76); LoCoMo checked (`bench/locomo.py
--semantic`)."""
VECTOR_SCALE: Mapping[tuple[Script, Script], tuple[float, float]] = {
    pair: (mu + FLOOR_SD * sd, mu + FULL_SD * sd) for pair, (mu, sd) in COSINE_STATS.items()
}
"""multilingual-e5-small's cosines placed on a scale, by (the query's script, the document's):
(floor, full). Below the floor `search` and `recall` do not show a document found by its
vector alone; a cosine at `full` or above counts as a complete match (`similarity` 1)."""
DEFAULT_SCALE = (-1.0, 1.0)
"""The scale of a pair of scripts `VECTOR_SCALE` does not name."""
QUERY_EMBED_TOKENS = 64
"""A query's vector is computed from at most its first this many (estimated) tokens. The
model's cost grows with the text (on a 2-core machine ~20 ms CPU for 8 words, ~270 ms for
128, over a second for 400: docs/benchmarks.md, `latency-semantic`), and `context` is asked
with whole prompts, on the path of the assistant's hook. Every LoCoMo and bench query is
shorter than this; the full-text lists always get the whole query."""


def close_enough(
    query_script: Script, doc_script: Script, cosine: float, supported: bool = False
) -> bool:
    """Whether a document found by its vector alone is close enough to the query to be shown:
    `VECTOR_SCALE`'s floor, or `SUPPORTED_SD`'s when full text found its session or file."""
    if supported:
        return cosine >= _level(query_script, doc_script, SUPPORTED_SD)
    return cosine >= VECTOR_SCALE.get((query_script, doc_script), DEFAULT_SCALE)[0]


def bridge_too_far(query_script: Script, doc_script: Script, cosine: float) -> bool:
    """Whether a document full text found only through the query's bridge is further from
    the query in meaning than `BRIDGED_ONLY_SD` allows."""
    return cosine < _level(query_script, doc_script, BRIDGED_ONLY_SD)


def one_sense_too_far(
    p: Plan,
    found_by: Sequence[str],
    cosine: float | None,
    doc_script: Script,
    one: Callable[[], bool],
) -> bool:
    """Whether a document full text found only through the query's bridge (`found_by`) that
    holds one of the query's several translated words (`one`, asked only of such a document
    whose cosine is below the level) is further from the query in meaning than `ONE_SENSE_SD`
    allows (its cosine known)."""
    if cosine is None or FTS in found_by or FTS_BRIDGED not in found_by:
        return False
    return cosine < _level(p.script, doc_script, ONE_SENSE_SD) and one()


def common_too_far(query_script: Script, doc_script: Script, cosine: float) -> bool:
    """Whether a document full text found only by common words is further from the query in
    meaning than `COMMON_SD` allows."""
    return cosine < _level(query_script, doc_script, COMMON_SD)


def all_on_common(p: Plan, found: Iterable[tuple[Sequence[str], str]]) -> bool:
    """Whether full text found documents for `p` (`found`: each one's `found_by` and what full
    text searched of it) and none of them holds a word of the query that is not common: the
    query's words that say what it is about found nothing (a document holding none of the
    query's words, as a turn found through its session's, says nothing either way). When one
    did, a document that holds only the query's common words is shown as before: the question
    is one the memory speaks of, and such a document may hold its answer ("what did she do last
    week?"). A list of Chinese terms (a Chinese query as typed, an English query's bridge) is
    never common: the table holds English words only.

    Nor is a query whose names none of them holds (`names_unheard`): what they hold is the
    query's other words, and the thing it asks about is not there ("RabbitMQ 死信队列怎么配置"
    over a memory that never names it)."""
    found = list(found)
    if names_unheard(p, found):
        return True
    seen = False
    for found_by, text in found:
        if FTS not in found_by and FTS_BRIDGED not in found_by:
            continue
        terms = _latin_terms(p, found_by)
        if terms is None:
            return False
        held = matched(terms, text)
        if not all(is_common(t) for t in held):
            return False
        seen = seen or bool(held)
    return seen


def query_names(p: Plan) -> list[tuple[str, ...]]:
    """The names a Chinese query carries — its Latin words, which its bridge keeps as they are
    written (numbers are not names) — each as the roots of its parts (`common_words.root`;
    "node-token": node, token). An English query's names are not told from its other words
    by their script ("ORM", "API" are asked about as things a memory may not name): none."""
    if p.bridged is None or p.script != "cjk":
        return []
    translated = {t for _, ts in p.bridged.words for t in ts}
    out: dict[tuple[str, ...], None] = {}
    for t in p.bridged.terms:
        if t in translated or not t.isascii() or t.isdigit():
            continue
        word = t.lower().replace("’", "'").removesuffix("'s")
        parts = tuple(root(w) for w in _NAME_PART.findall(word))
        if parts:
            out.setdefault(parts, None)
    return list(out)


_NAME_PART = re.compile(r"[a-z0-9]+")


def names_unheard(p: Plan, found: Iterable[tuple[Sequence[str], str]]) -> bool:
    """Whether full text found documents for `p` (`found`: each one's `found_by` and what full
    text searched of it) and none of them holds a name the query carries (`query_names`; a
    name of several parts when it holds every part, in any of its forms: "tab" in "Tabs")."""
    names = query_names(p)
    if not names:
        return False
    seen = False
    for found_by, text in found:
        if FTS not in found_by and FTS_BRIDGED not in found_by:
            continue
        seen = True
        words = {root(w) for w in _NAME_PART.findall(text.lower())}
        if any(all(part in words for part in name) for name in names):
            return False
    return seen


def _latin_terms(p: Plan, found_by: Sequence[str]) -> list[str] | None:
    """The English terms of the full-text lists that found a document, or None when one of
    them searched with Chinese terms."""
    terms: list[str] = []
    if FTS in found_by:
        if p.script != "latin":
            return None
        terms += [t for t in text_terms(p.query) if t.isascii()]
    if FTS_BRIDGED in found_by and p.bridged is not None:
        if p.bridged.target != "latin":
            return None
        terms += [t.lower() for t in p.bridged.terms]
    return terms


def _level(query_script: Script, doc_script: Script, sds: float) -> float:
    """The cosine `sds` standard deviations around the mean of unrelated pairs of these
    scripts (`COSINE_STATS`; -1 for a pair it does not name)."""
    mu, sd = COSINE_STATS.get((query_script, doc_script), (-1.0, 0.0))
    return mu + sds * sd


def similarity(query_script: Script, doc_script: Script, cosine: float) -> float:
    """A cosine on the calibrated scale of its scripts (`VECTOR_SCALE`): 0 at the floor or
    below, 1 at `full` or above, linear between."""
    floor, full = VECTOR_SCALE.get((query_script, doc_script), DEFAULT_SCALE)
    return min(1.0, max(0.0, (cosine - floor) / (full - floor))) if full > floor else 0.0


def passage_texts(turns: Sequence[Turn]) -> list[str]:
    """The text to embed for each turn of one session, in order (see `PASSAGE_BEFORE`)."""
    return turn_passages(turns, before=PASSAGE_BEFORE, after=PASSAGE_AFTER)


@dataclass(frozen=True, slots=True)
class Plan:
    """The rankings to run for one query: full-text queries by list name, and the text whose
    query vector ranks the stored passages."""

    query: str
    script: Script
    bridged: Bridged | None
    full_text: Mapping[str, str]
    embed: str


def plan(query: str, dictionary: Dictionary | None = None) -> Plan:
    """What to run for `query`: itself as typed, its bridge into the other language (with a
    dictionary, when the dictionary translated at least one word), and its vector."""
    script = dominant_script(query)
    bridged = bridge(query, dictionary) if dictionary is not None else None
    full_text = {FTS: query}
    if bridged is not None and bridged.words:
        full_text[FTS_BRIDGED] = bridged.text
    else:
        bridged = None
    return Plan(query, script, bridged, full_text, query_head(query))


def query_head(query: str, limit: int = QUERY_EMBED_TOKENS) -> str:
    """`query` itself when it is within `limit` estimated tokens, else its start within them,
    cut between words (or between Chinese characters)."""
    if estimate_tokens(query) <= limit:
        return query
    lo, hi = 0, len(query)
    while lo < hi:  # the longest prefix within the limit (the estimate grows with the prefix)
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if estimate_tokens(query[:mid]) <= limit else (lo, mid - 1)
    return shorten(query, lo, ellipsis="")


@dataclass(frozen=True, slots=True)
class Weights:
    """The fusion parameters (defaults: the module's constants)."""

    vector: float = VECTOR_WEIGHT
    bridged: float = BRIDGED_WEIGHT
    cross_vector: float = CROSS_VECTOR_WEIGHT
    depth: int = DEPTH
    feedback: float = FEEDBACK_WEIGHT


class _Rule(Generic[K]):
    """Per-document list weights: each full-text list counts only for documents in its own
    query's script, with two exceptions (`_counts`); vectors get
    `cross_vector` for documents in another script than the query's."""

    def __init__(
        self, p: Plan, scripts: Mapping[K, Script], w: Weights, text_of: Callable[[K], str]
    ) -> None:
        self.scripts = scripts
        self.own = {FTS: p.script, FTS_BRIDGED: p.bridged.target if p.bridged else ""}
        self.query_script = p.script
        self.w = w
        self.text_of = text_of
        self.cjk = {name: _cjk_terms(q) for name, q in p.full_text.items()}

    def __call__(self, name: str, key: K) -> float:
        doc = self.scripts.get(key, "")
        if name == VECTOR:
            crossed = bool(doc and self.query_script and doc != self.query_script)
            return self.w.cross_vector / self.w.vector if crossed else 1.0
        want = self.own.get(name, "")
        if not want or not doc or doc == want:
            return 1.0
        return 1.0 if self._counts(name, key, doc) else 0.0

    def _counts(self, name: str, key: K, doc: Script) -> bool:
        """Whether a full-text list counts for a document of another script: when no list
        searches the document's script (the query's words as typed, "git rerere" in a Chinese
        reply, are all the words that can find it), or when the document holds one of the
        list's Chinese terms as written (a Latin document's "(林薇)" is not a name carried
        over, which the other list matches)."""
        if doc not in self.own.values():
            return True
        text = self.text_of(key)
        return bool(text) and any(t in text for t in self.cjk.get(name, ()))


def _no_text(key: object) -> str:
    return ""


def _cjk_terms(query: str) -> tuple[str, ...]:
    """The CJK terms full text searches for `query` (bigrams, or a short run as a phrase)."""
    return tuple(t for t in expand_cjk(text_terms(query)) if not t.isascii())


def fuse(
    p: Plan,
    lists: Mapping[str, Ranked[K]],
    scripts: Mapping[K, Script],
    *,
    weights: Weights | None = None,
    limit: int | None = None,
    text_of: Callable[[K], str] | None = None,
) -> ListFusion[K]:
    """Fuse the rankings `p` asked for (missing or empty lists are fine: without vectors the
    result is the full-text order) into one, best first, with each hit's provenance.

    Each list needs its scores (higher is better: memd's search score, the cosine); a list
    without them is scored by position. `scripts` maps each document in any list to its `dominant_script` ("" when unknown: the
    rule then never applies to it); `text_of` gives what full text searched of one (the rule's
    exceptions, `_Rule._counts`: without it, only the first).
    """
    w = weights or Weights()
    list_weights = {FTS: 1.0, FTS_BRIDGED: w.bridged, VECTOR: w.vector, FTS_FEEDBACK: w.feedback}
    present = {n: lists[n] for n in (FTS, FTS_BRIDGED, VECTOR, FTS_FEEDBACK) if n in lists}
    return fuse_lists(
        present,
        weights=list_weights,
        method="score",
        depth=w.depth,
        limit=limit,
        doc_weight=_Rule(p, scripts, w, text_of or _no_text),
    )
