"""Fusion of a full-text ranking and a vector ranking: pure functions, no numpy.

Reciprocal-rank fusion (RRF): a document at 1-based rank r of a list scores
``weight / (k + r)`` from that list, and the fused order sorts by the sum. It needs no score
calibration between bm25 and cosine, which live on unrelated scales.

Two rules decide how much the full-text list is trusted for a query:

- **cross-script**: a Chinese question can only match an English memory by the few Latin
  words it carries (names, acronyms), and the reverse; for a document whose dominant script
  differs from the query's, the full-text contribution is weighted by
  `FusionParams.cross_script_fts_weight`.
- **common-terms**: when every query term the full-text index matched is present in at least
  `FusionParams.common_share` of the documents in scope (the two speakers' names in a
  conversation, say), bm25's order is noise; the full-text list is weighted by
  `FusionParams.common_fts_weight`.

With both weights at 0 the fused order is the vector list's. With an empty vector list
(semantic recall off) it is the full-text list's, unchanged. Every hit records which rankers
found it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, Literal, TypeVar

K = TypeVar("K", bound=Hashable)
Provenance = Literal["fts", "vector", "both"]
Script = Literal["cjk", "latin", "other", ""]

# kana, CJK ideographs (with extension A and the compatibility block), hangul
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\d_]+")
_LATIN_END = "\u0250"  # Basic Latin through Latin Extended-B
_ASCII_LETTER = re.compile("[A-Za-z]")
SCRIPT_MEMO = 4096
"""Texts of other than ASCII whose script is remembered: a request judges the script of every
document its lists found (~100 sections), and the same sections come back query after query."""


@dataclass(frozen=True, slots=True)
class FusionParams:
    """The knobs of `fuse`. Defaults are the ones `bench/semantic_eval.py` selected on held-out folds."""

    k: float = 60.0
    """RRF constant: larger flattens the difference between top and lower ranks."""
    fts_weight: float = 1.0
    vector_weight: float = 1.0
    depth: int = 50
    """How many entries of each list are read."""
    cross_script_fts_weight: float = 0.0
    """Full-text weight for a document whose dominant script differs from the query's."""
    common_share: float = 0.2
    """A term found in at least this share of the scope's documents is common."""
    common_fts_weight: float = 0.0
    """Full-text weight when every matched query term is common."""


@dataclass(frozen=True, slots=True)
class FusedHit(Generic[K]):
    """One fused result: its key, fused score, provenance and 1-based rank in each list."""

    key: K
    score: float
    provenance: Provenance
    fts_rank: int | None
    vector_rank: int | None


@dataclass(frozen=True, slots=True)
class Fusion(Generic[K]):
    """The fused hits, best first, and the rules that changed the full-text weight."""

    hits: list[FusedHit[K]]
    rules: tuple[str, ...]

    def keys(self) -> list[K]:
        """The fused order as keys."""
        return [h.key for h in self.hits]


def dominant_script(text: str) -> Script:
    """The script most of `text` is written in: "cjk", "latin", "other" or "" (no letters).

    A CJK character is counted like a Latin word (each carries about one morpheme), so
    "Caroline是什么时候去参加LGBTQ互助小组的" is CJK and "I like 记忆 systems" is Latin.
    """
    if text.isascii():  # most memory: no regex over the whole text
        return "latin" if _ASCII_LETTER.search(text) else ""
    return _counted_script(text)


@lru_cache(maxsize=SCRIPT_MEMO)
def _counted_script(text: str) -> Script:
    cjk = len(_CJK.findall(text))
    latin = other = 0
    for word in _WORD.findall(_CJK.sub(" ", text) if cjk else text):
        if word[0] < _LATIN_END:
            latin += 1
        else:
            other += 1
    best = max(cjk, latin, other)
    if best == 0:
        return ""
    if cjk == best:
        return "cjk"
    return "latin" if latin == best else "other"


def common_terms_only(term_shares: Sequence[float], common_share: float) -> bool:
    """True when every matched term is common: each share (documents containing the term ÷
    documents in scope) is at least `common_share`. Terms that match nothing are left out by
    the caller; no matched term at all is not "common only"."""
    matched = [s for s in term_shares if s > 0]
    return bool(matched) and all(s >= common_share for s in matched)


def fts_weights(
    fts: Sequence[K],
    *,
    query_script: Script,
    doc_scripts: Mapping[K, Script] | None,
    term_shares: Sequence[float] | None,
    params: FusionParams,
) -> tuple[dict[K, float], tuple[str, ...]]:
    """Per-document full-text weights for one query, and the rules that fired."""
    rules: list[str] = []
    base = params.fts_weight
    if term_shares is not None and common_terms_only(term_shares, params.common_share):
        base *= params.common_fts_weight
        rules.append("common-terms")
    weights: dict[K, float] = {}
    crossed = False
    for key in fts[: params.depth]:
        w = base
        script = doc_scripts.get(key, "") if doc_scripts is not None else ""
        if query_script and script and script != query_script:
            w *= params.cross_script_fts_weight
            crossed = True
        weights[key] = w
    if crossed:
        rules.append("cross-script")
    return weights, tuple(rules)


def fuse(
    fts: Sequence[K],
    vector: Sequence[K],
    *,
    query_script: Script = "",
    doc_scripts: Mapping[K, Script] | None = None,
    term_shares: Sequence[float] | None = None,
    params: FusionParams | None = None,
    limit: int | None = None,
) -> Fusion[K]:
    """Reciprocal-rank fusion of a full-text and a vector ranking (keys, best first).

    `query_script` is `dominant_script(query)`; `doc_scripts` maps keys of the full-text
    list to their documents' dominant scripts (missing keys are never "cross-script");
    `term_shares` gives, for each query term, the share of documents in scope that contain
    it. A document whose only evidence has weight 0 is dropped: nothing ranked it. Ties are
    broken by the better rank in either list, then by the full-text rank.
    """
    params = params or FusionParams()
    weights, rules = fts_weights(
        fts, query_script=query_script, doc_scripts=doc_scripts, term_shares=term_shares,
        params=params,
    )  # fmt: skip
    score: dict[K, float] = {}
    fts_rank: dict[K, int] = {}
    vec_rank: dict[K, int] = {}
    for r, key in enumerate(fts[: params.depth], start=1):
        if key in fts_rank:
            continue
        fts_rank[key] = r
        score[key] = score.get(key, 0.0) + weights[key] / (params.k + r)
    for r, key in enumerate(vector[: params.depth], start=1):
        if key in vec_rank:
            continue
        vec_rank[key] = r
        score[key] = score.get(key, 0.0) + params.vector_weight / (params.k + r)
    big = len(fts) + len(vector) + 1

    def order(key: K) -> tuple[float, int, int]:
        fr, vr = fts_rank.get(key, big), vec_rank.get(key, big)
        return (-score[key], min(fr, vr), fr)

    hits: list[FusedHit[K]] = []
    for key in sorted((k for k, s in score.items() if s > 0), key=order):
        fr, vr = fts_rank.get(key), vec_rank.get(key)
        prov: Provenance = "both" if fr and vr else ("fts" if fr else "vector")
        hits.append(FusedHit(key, score[key], prov, fr, vr))
        if limit is not None and len(hits) >= limit:
            break
    return Fusion(hits, rules)


# -- any number of named rankings ------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ranked(Generic[K]):
    """One ranker's answer: keys best first, and their scores (higher is better) when known."""

    keys: Sequence[K]
    scores: Sequence[float] = ()


@dataclass(frozen=True, slots=True)
class ListHit(Generic[K]):
    """One hit fused from named lists: its key, fused score, and its 1-based rank in each list
    that found it (the names of those lists are its provenance)."""

    key: K
    score: float
    ranks: Mapping[str, int]

    @property
    def found_by(self) -> tuple[str, ...]:
        """The names of the lists that ranked this hit, in the order they were given."""
        return tuple(self.ranks)


@dataclass(frozen=True, slots=True)
class ListFusion(Generic[K]):
    """The fused hits of `fuse_lists`, best first."""

    hits: list[ListHit[K]]

    def keys(self) -> list[K]:
        """The fused order as keys."""
        return [h.key for h in self.hits]


def _minmax(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi <= lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def fuse_lists(
    lists: Mapping[str, Ranked[K]],
    *,
    weights: Mapping[str, float] | None = None,
    method: Literal["rrf", "score"] = "rrf",
    k: float = 60.0,
    depth: int = 50,
    limit: int | None = None,
    doc_weight: Callable[[str, K], float] | None = None,
) -> ListFusion[K]:
    """Fuse any number of named rankings into one, with provenance.

    ``method="rrf"``: a key at 1-based rank r of list L scores ``weights[L] / (k + r)``.
    ``method="score"``: each list's scores over its first `depth` entries are min-max
    normalised to [0, 1] and a key scores the weighted sum (a list without scores counts
    1 for its top entry down to 0 for its last). Missing weights are 1. `doc_weight(list,
    key)` multiplies one list's weight for one key (the cross-script rule of
    `memd.semantic.recipe`). A list whose weight for a key is 0 did not find it: it is not
    in the key's provenance, and a key no list found with a positive weight is dropped.
    Ties go to the better best rank, then to the order of the lists.
    """
    weights = weights or {}
    score: dict[K, float] = {}
    ranks: dict[K, dict[str, int]] = {}
    for name, ranked in lists.items():
        w = weights.get(name, 1.0)
        keys = list(ranked.keys[:depth])
        if method == "score":
            raw = list(ranked.scores[: len(keys)])
            if len(raw) != len(keys):
                raw = [float(len(keys) - i) for i in range(len(keys))]
            unit = _minmax(raw)
        else:
            unit = [1.0 / (k + r) for r in range(1, len(keys) + 1)]
        for r, (key, u) in enumerate(zip(keys, unit, strict=True), start=1):
            wk = w * doc_weight(name, key) if doc_weight is not None else w
            if wk <= 0 or name in ranks.get(key, {}):
                continue
            ranks.setdefault(key, {})[name] = r
            score[key] = score.get(key, 0.0) + wk * u
    names = list(lists)

    def order(key: K) -> tuple[float, int, int]:
        rk = ranks[key]
        return (-score[key], min(rk.values()), min(names.index(n) for n in rk))

    hits = [ListHit(key, score[key], ranks[key]) for key in sorted(ranks, key=order)]
    return ListFusion(hits[:limit] if limit is not None else hits)


def neighbour_smooth(
    scores: Sequence[float], groups: Sequence[Hashable], weights: Sequence[float] = (0.5, 0.25)
) -> list[float]:
    """Scores of items in document order, each raised by part of its best neighbour's.

    Every score is first taken above the median of all scores (negative parts become 0);
    an item then gains ``weights[d-1]`` times the better of its two neighbours at distance
    d in the same group (the same session). The answer to a question is often the turn
    after the one that shares its words or meaning; this lets that turn rise too.
    """
    n = len(scores)
    if n == 0:
        return []
    med = sorted(scores)[n // 2]
    base = [max(0.0, s - med) for s in scores]
    out = list(base)
    for i in range(n):
        for d, w in enumerate(weights, start=1):
            near = [base[j] for j in (i - d, i + d) if 0 <= j < n and groups[j] == groups[i]]
            if near and w:
                out[i] += w * max(near)
    return out
