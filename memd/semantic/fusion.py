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
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

K = TypeVar("K", bound=Hashable)
Provenance = Literal["fts", "vector", "both"]
Script = Literal["cjk", "latin", "other", ""]

# kana, CJK ideographs (with extension A and the compatibility block), hangul
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\d_]+")
_LATIN_END = "\u0250"  # Basic Latin through Latin Extended-B


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
