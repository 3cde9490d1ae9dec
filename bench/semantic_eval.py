"""LoCoMo retrieval with embeddings and query bridging, every variant on held-out folds.

    python -m bench.semantic_eval [--data ../shared/bench-data/locomo-dev.json]
        [--zh ../shared/bench-data/locomo-dev-zh.json] [--threads 2] [--no-memd]
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
   (`memd.semantic.bridge.to_english`: CC-CEDICT) and the English terms are searched
   (FTS5 and memd) and embedded as a second query.
3. Every fused variant's parameters are chosen by grid search on conversations 0-2 and
   reported on 3-4 (fold A), then the reverse (fold B). Baselines are computed in the same run.

recall@k = |evidence ∩ top-k| / |evidence|, averaged over questions of categories 1-4.
"""

from __future__ import annotations

import argparse
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
from typing import Any

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
from memd.semantic.base import Embedder
from memd.semantic.bridge import Dictionary, Segmenter, to_english
from memd.semantic.fusion import Ranked, fuse_lists, neighbour_smooth
from memd.semantic.passages import Turn, turn_passages
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


@dataclass
class Conversation:
    ids: list[str]
    session: list[int]
    fts_texts: list[str]
    passages: dict[str, list[str]]
    matrix: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)


# -- data ------------------------------------------------------------------------------------
def conversations(samples: list[dict[str, Any]]) -> list[Conversation]:
    out = []
    for sample in samples:
        ids: list[str] = []
        session: list[int] = []
        fts_texts: list[str] = []
        passages: dict[str, list[str]] = {name: [] for name in PASSAGES}
        for num, _, ts in sessions_of(sample["conversation"]):
            ids += [t["dia_id"] for t in ts]
            session += [num] * len(ts)
            fts_texts += [f"{t['speaker']}: {turn_text(t, captions=False)}" for t in ts]
            turns = [Turn(t["speaker"], turn_text(t, captions=True)) for t in ts]
            for name, (before, after) in PASSAGES.items():
                passages[name] += turn_passages(turns, before=before, after=after)
        out.append(Conversation(ids, session, fts_texts, passages))
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
                                     lambda t=texts: embedder.embed(t, kind="passage"))  # fmt: skip
    return time.perf_counter() - t0


def embed_queries(
    embedder: Embedder, texts: Sequence[str], cache: Path | None
) -> tuple[dict[str, npt.NDArray[np.float32]], list[float], list[float]]:
    """Query vectors by text; (wall, CPU) seconds of each uncached call (one query per call)."""
    out: dict[str, npt.NDArray[np.float32]] = {}
    wall: list[float] = []
    cpu: list[float] = []
    for text in dict.fromkeys(texts):

        def one(t: str = text) -> npt.NDArray[np.float32]:
            w, c = time.perf_counter(), time.process_time()
            v = embedder.embed([t], kind="query")[0]
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
            return v

        out[text] = _cached(cache, [embedder.model_id, "query", text], one)
    return out, wall, cpu


def vector_ranking(c: Conversation, passage: str, vec: npt.NDArray[np.float32]) -> Ranked[str]:
    idx, scores = top_k(c.matrix[passage], vec, DEPTH)
    return Ranked([c.ids[i] for i in idx], [float(s) for s in scores])


def smoothed_ranking(
    c: Conversation, passage: str, vec: npt.NDArray[np.float32], weights: tuple[float, float]
) -> Ranked[str]:
    scores = c.matrix[passage] @ vec
    sm = neighbour_smooth([float(s) for s in scores], c.session, weights)
    order = sorted(range(len(sm)), key=lambda i: (-sm[i], i))[:DEPTH]
    return Ranked([c.ids[i] for i in order], [sm[i] for i in order])


def _jieba() -> Segmenter | None:
    """jieba's segmenter when it is installed (``pip install jieba``): measured against the
    dictionary's own longest-word segmentation, which memd uses."""
    try:
        import jieba  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return None
    jieba.setLogLevel(60)
    tok = jieba.Tokenizer()
    tok.initialize()
    return tok  # type: ignore[no-any-return]


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


@dataclass(frozen=True)
class Variant:
    """A named ranker: lists to fuse (first one unweighted), how, and its parameter grid."""

    name: str
    lists: tuple[str, ...]
    method: str = "rrf"  # "rrf" | "score" | "single"

    def grid(self) -> list[dict[str, Any]]:
        if self.method == "single":
            return [{}]
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
        weights = {self.lists[0]: 1.0, **params["weights"]}

        def rank(q: Question) -> list[str]:
            named = {n: q.lists[n] for n in self.lists}
            return fuse_lists(named, weights=weights, method=self.method,
                              k=params.get("k", 60.0), depth=DEPTH, limit=20).keys()  # fmt: skip

        return rank

    def tune(self, train: Sequence[Question]) -> dict[str, Any]:
        best: dict[str, Any] = {}
        best_key = (-1.0, -1.0, -1.0)
        for p in self.grid():
            key = _key(recall(train, self.ranker(p)))
            if key > best_key:
                best, best_key = p, key
        return best


def _params(p: Mapping[str, Any]) -> str:
    if not p:
        return "—"
    parts = [f"k={p['k']:g}"] if "k" in p else []
    parts += [f"{n} × {w:g}" for n, w in p["weights"].items()]
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
            if p:
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


def prepare(args: argparse.Namespace) -> Prepared:
    """Embed, bridge and rank every question with every ranker (vectors and memd results
    come from the caches when they hold them)."""
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

    t0, c0 = time.perf_counter(), time.process_time()
    dictionary = Dictionary.load()
    dict_s, dict_cpu = time.perf_counter() - t0, time.process_time() - c0
    jieba = _jieba()
    bridged: dict[str, str] = {}
    bridged_jieba: dict[str, str] = {}
    b_wall: list[float] = []
    for q in zh:
        t = time.perf_counter()
        bridged[q.text] = to_english(q.text, dictionary).text
        b_wall.append(time.perf_counter() - t)
        if jieba is not None:
            bridged_jieba[q.text] = to_english(q.text, dictionary, jieba).text
    vecs, qv_wall, qv_cpu = embed_queries(
        embedder, [q.text for q in en + zh] + list(bridged.values()), cache
    )
    print(f"dictionary loaded in {dict_s:.2f} s; queries embedded")

    fts = FullText(convs)
    for q in en + zh:
        c = convs[q.conv]
        q.lists["fts"] = fts.rank(q.conv, q.text)
        for name in PASSAGES:
            q.lists[f"vec:{name}"] = vector_ranking(c, name, vecs[q.text])
        for w in SMOOTH_GRID[1:]:
            q.lists[f"vec:turn~{w:g}"] = smoothed_ranking(c, "turn", vecs[q.text], (w, w / 2))
    for q in zh:
        b = bridged[q.text]
        q.lists["fts:bridged"] = fts.rank(q.conv, b)
        if jieba is not None:
            q.lists["fts:bridged-jieba"] = fts.rank(q.conv, bridged_jieba[q.text])
        for name in PASSAGES:
            q.lists[f"vec:{name}:bridged"] = vector_ranking(convs[q.conv], name, vecs[b])

    ingest_s = None
    search_ms: dict[str, float] = {}
    if not args.no_memd:
        asks = [(q.conv, q.text) for q in en + zh] + [(q.conv, bridged[q.text]) for q in zh]
        asks += [(q.conv, b) for q in zh if (b := bridged_jieba.get(q.text))]
        if args.memd_results and args.memd_results.exists():
            saved = json.loads(args.memd_results.read_text(encoding="utf-8"))
            got = {(ci, t): Ranked(k, s) for ci, t, k, s in saved["results"]}
            ingest_s, s_times = saved["ingest_s"], saved["times"]
        else:
            got, ingest_s, s_times = memd_rankings(samples, asks)
            if args.memd_results:
                results = [[ci, t, list(r.keys), list(r.scores)] for (ci, t), r in got.items()]
                args.memd_results.write_text(json.dumps(
                    {"results": results, "ingest_s": ingest_s, "times": s_times}), encoding="utf-8")  # fmt: skip
        search_ms = summary_ms(s_times)
        for q in en + zh:
            q.lists["memd"] = got[q.conv, q.text]
        for q in zh:
            q.lists["memd:bridged"] = got[q.conv, bridged[q.text]]
            if q.text in bridged_jieba:
                q.lists["memd:bridged-jieba"] = got[q.conv, bridged_jieba[q.text]]

    costs = {"cpu0": cpu0, "load_s": load_s, "embed_s": embed_s, "dict_s": dict_s,
             "dict_cpu": dict_cpu, "b_wall": b_wall, "qv_wall": qv_wall, "qv_cpu": qv_cpu,
             "ingest_s": ingest_s, "search_ms": search_ms}  # fmt: skip
    return Prepared(convs, en, zh, embedder.model_id, vecs, bridged, costs)


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
    ap.add_argument("--no-memd", action="store_true", help="skip memd's own search over a daemon")
    ap.add_argument("--memd-results", type=Path, default=None,
                    help="JSON file of memd search results: read when present, else written"
                         " (for trying fusion variants without re-running the daemon)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
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
    lexical = "memd" if not args.no_memd else "fts"
    en_variants = [
        Variant("FTS5 only", ("fts",), "single"),
        *([Variant("memd search only", ("memd",), "single")] if lexical == "memd" else []),
        *[Variant(f"vectors only ({n})", (f"vec:{n}",), "single") for n in PASSAGES],
        *[Variant(f"{lexical} + vectors ({n}), RRF", (lexical, f"vec:{n}")) for n in PASSAGES],
        *[
            Variant(
                f"{lexical} + vectors (turn, neighbour-smoothed {w:g}), RRF",
                (lexical, f"vec:turn~{w:g}"),
            )
            for w in SMOOTH_GRID[1:]
        ],  # fmt: skip
        Variant(
            f"{lexical} + vectors (turn) + vectors (prev+turn), RRF",
            (lexical, "vec:turn", "vec:prev+turn"),
        ),  # fmt: skip
        *[
            Variant(f"{lexical} + vectors ({n}), score fusion", (lexical, f"vec:{n}"), "score")
            for n in ("turn", "prev+turn")
        ],  # fmt: skip
    ]
    zh_variants = [
        Variant("FTS5 only", ("fts",), "single"),
        *([Variant("memd search only", ("memd",), "single")] if lexical == "memd" else []),
        Variant("FTS5, bridged query", ("fts:bridged",), "single"),
        Variant("FTS5, bridged query (segmented by jieba)", ("fts:bridged-jieba",), "single"),
        Variant("memd search, bridged query", ("memd:bridged",), "single"),
        Variant(
            "memd search, bridged query (segmented by jieba)", ("memd:bridged-jieba",), "single"
        ),
        *[Variant(f"vectors only ({n})", (f"vec:{n}",), "single") for n in PASSAGES],
        Variant("vectors only (turn), bridged query", ("vec:turn:bridged",), "single"),
        Variant("vectors (turn): Chinese + bridged queries, RRF", ("vec:turn", "vec:turn:bridged")),
        *[
            Variant(f"{lexical} bridged + vectors ({n}), RRF", (f"{lexical}:bridged", f"vec:{n}"))
            for n in PASSAGES
        ],  # fmt: skip
        *[
            Variant(
                f"{lexical} bridged + vectors ({n}) + vectors ({n}, bridged), RRF",
                (f"{lexical}:bridged", f"vec:{n}", f"vec:{n}:bridged"),
            )
            for n in PASSAGES
        ],  # fmt: skip
        Variant(
            f"{lexical} bridged + vectors (turn), score fusion",
            (f"{lexical}:bridged", "vec:turn"),
            "score",
        ),  # fmt: skip
    ]
    # Variants whose lists were not computed (--passages, --no-memd) are left out.
    en_variants = [v for v in en_variants if all(n in en[0].lists for n in v.lists)]
    zh_variants = [v for v in zh_variants if all(n in zh[0].lists for n in v.lists)]
    rows_en, chosen_en, _ = run_folds(en, en_variants)
    print("English done")
    rows_zh, chosen_zh, _ = run_folds(zh, zh_variants)
    print("Chinese done")

    three = Variant("timing", (lexical, "vec:turn", "vec:turn~0.5"))
    fuse_t = []
    for q in en[:200]:
        t = time.perf_counter()
        three.ranker({"k": 10.0, "weights": {"vec:turn": 0.5, "vec:turn~0.5": 0.5}})(q)
        fuse_t.append(time.perf_counter() - t)
    head = ["ranker", *(f"A R@{k}" for k in KS), *(f"B R@{k}" for k in KS)]
    qw, qc, bw, fu = summary_ms(qv_wall), summary_ms(qv_cpu), summary_ms(b_wall), summary_ms(fuse_t)
    body = "\n".join([
        f"## Recall by meaning: LoCoMo with embeddings and query bridging (`bench/semantic_eval.py`, {p.model_id})",
        "",
        f"{len(convs)} conversations, {sum(len(c.ids) for c in convs)} turns, {len(en)} English questions"
        f" of categories 1-4 and their {len(zh)} Chinese translations (same evidence). Fold A: parameters"
        " chosen on conversations 0-2, recall reported on 3-4; fold B: the reverse. Vectors are"
        " in memory (exact cosine) and fused in the bench with `memd.semantic.fusion.fuse_lists`."
        + ("" if ingest_s is None else
           f" \"memd search\" is a real daemon's `search` over its socket (logs ingested in {ingest_s:.2f} s,"
           f" search p50 {search_ms['p50']:.1f} ms)."),
        "",
        "English questions over the English conversations (held-out recall):",
        "",
        table(head, rows_en),
        "",
        "Chinese questions over the English conversations (held-out recall); \"bridged\" = the"
        " question's English terms from `memd.semantic.bridge.to_english` (CC-CEDICT; jieba segmentation where named):",
        "",
        table(head, rows_zh),
        "",
        "Parameters chosen on the training conversations (weights relative to the first list):",
        "",
        *[f"- {c}" for c in chosen_en + chosen_zh],
        "",
        f"Query embedding ({args.threads} threads, one query per call, uncached):"
        f" p50 {qw['p50']:.1f} ms wall / {qc['p50']:.1f} ms CPU, p95 {qw['p95']:.1f} ms wall"
        f" / {qc['p95']:.1f} ms CPU ({qw['n']} queries; 0 when all came from the vector cache)."
        f" Bridging one Chinese question: p50 {bw['p50']:.2f} ms, p95 {bw['p95']:.2f} ms; loading"
        f" the dictionary (CC-CEDICT) {dict_s:.2f} s wall / {dict_cpu:.2f} s CPU."
        f" Fusing three 50-entry lists: p50 {fu['p50'] * 1000:.0f} µs. Model load {load_s:.2f} s."
        f" CPU time of the whole run: {time.process_time() - cpu0:.0f} s.",
        "",
        machine_line(),
    ])  # fmt: skip
    publish(args, BLOCK, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
