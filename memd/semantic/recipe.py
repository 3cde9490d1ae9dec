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

Stored per turn: the vector of `passage_texts` (the turn after the turn before it, in its
session) under the model id; per document its `dominant_script`, for the rule.

Pure Python: numpy is needed only where the vectors are searched.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from memd.core.text import estimate_tokens, shorten
from memd.semantic.bridge import Bridged, Dictionary, bridge
from memd.semantic.fusion import ListFusion, Ranked, Script, dominant_script, fuse_lists
from memd.semantic.passages import Turn, turn_passages

K = TypeVar("K", bound=Hashable)

FTS = "fts"
FTS_BRIDGED = "fts:bridged"
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
DEPTH = 50
"""Entries read from each list."""
QUERY_EMBED_TOKENS = 64
"""A query's vector is computed from at most its first this many (estimated) tokens. The
model's cost grows with the text (on a 2-core machine ~20 ms CPU for 8 words, ~270 ms for
128, over a second for 400: docs/benchmarks.md, `latency-semantic`), and `context` is asked
with whole prompts, on the path of the assistant's hook. Every LoCoMo and bench query is
shorter than this; the full-text lists always get the whole query."""


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


class _Rule(Generic[K]):
    """Per-document list weights: each full-text list counts only for documents in its own
    query's script; vectors get `cross_vector` for documents in another script than the query's."""

    def __init__(self, p: Plan, scripts: Mapping[K, Script], w: Weights) -> None:
        self.scripts = scripts
        self.own = {FTS: p.script, FTS_BRIDGED: p.bridged.target if p.bridged else ""}
        self.query_script = p.script
        self.w = w

    def __call__(self, name: str, key: K) -> float:
        doc = self.scripts.get(key, "")
        if name == VECTOR:
            crossed = bool(doc and self.query_script and doc != self.query_script)
            return self.w.cross_vector / self.w.vector if crossed else 1.0
        want = self.own.get(name, "")
        return 0.0 if want and doc and doc != want else 1.0


def fuse(
    p: Plan,
    lists: Mapping[str, Ranked[K]],
    scripts: Mapping[K, Script],
    *,
    weights: Weights | None = None,
    limit: int | None = None,
) -> ListFusion[K]:
    """Fuse the rankings `p` asked for (missing or empty lists are fine: without vectors the
    result is the full-text order) into one, best first, with each hit's provenance.

    Each list needs its scores (higher is better: memd's search score, the cosine); a list
    without them is scored by position. `scripts` maps each document in any list to its `dominant_script` ("" when unknown: the
    rule then never applies to it).
    """
    w = weights or Weights()
    list_weights = {FTS: 1.0, FTS_BRIDGED: w.bridged, VECTOR: w.vector}
    present = {n: lists[n] for n in (FTS, FTS_BRIDGED, VECTOR) if n in lists}
    return fuse_lists(
        present,
        weights=list_weights,
        method="score",
        depth=w.depth,
        limit=limit,
        doc_weight=_Rule(p, scripts, w),
    )
