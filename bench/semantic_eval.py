"""LoCoMo retrieval with embeddings: full-text, vectors, and their fusion, on held-out folds.

    python -m bench.semantic_eval [--data ../shared/bench-data/locomo-dev.json]
        [--zh ../shared/bench-data/locomo-dev-zh.json] [--embedder packaged] [--threads 2]
        [--no-memd] [--out docs/benchmarks.md] [--no-write]

Phase 1 of recall by meaning: vectors are not in memd's index yet, so this runs in-process.

1. Each LoCoMo turn is a document. Full text: the README's plain FTS5 table (unicode61,
   "speaker: text", query = OR of the question's non-stopword terms, bm25()), top 50.
   Vectors: "speaker: text (shared a photo: caption)" embedded as passages, the question
   as a query, exact cosine top 50 over that conversation's turns.
2. Fusion: `memd.semantic.fusion.fuse` (RRF with the cross-script and common-terms rules);
   each query term's document share comes from the same FTS5 table.
3. Honest split: fusion parameters are chosen by grid search on conversations 0-2 and
   reported on 3-4 (fold A), then the reverse (fold B). English questions choose k, the
   weights and the common-terms rule; Chinese questions (locomo-dev-zh.json, same evidence)
   then choose the cross-script weight, on the same training conversations.
4. Unless --no-memd, the same is done with memd's own search (a real daemon over its socket,
   as in bench/locomo.py) as the full-text ranker: what phase 2 would ship.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
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
from bench.semantic_candidates import build
from memd.core.text import terms
from memd.semantic.base import Embedder
from memd.semantic.fusion import FusionParams, Script, dominant_script, fuse
from memd.semantic.vectors import top_k

BLOCK = "semantic-eval"
DEFAULT_ZH = DEFAULT_DATA.with_name("locomo-dev-zh.json")
DEPTH = 50
FOLDS = {"A": ((0, 1, 2), (3, 4)), "B": ((3, 4), (0, 1, 2))}
GRID = {
    "k": (5.0, 10.0, 20.0, 30.0, 60.0, 100.0),
    "vector_weight": (0.5, 0.75, 1.0, 1.25, 1.5, 2.0),
    "common_share": (0.05, 0.1, 0.2, 0.35, 2.0),  # 2.0: the rule never fires
    "common_fts_weight": (0.0, 0.25, 0.5),
}
CROSS_GRID = (0.0, 0.25, 0.5, 1.0)


@dataclass
class Question:
    conv: int
    text: str
    evidence: list[str]
    script: Script
    fts: list[str] = field(default_factory=list)
    vector: list[str] = field(default_factory=list)
    memd: list[str] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)


@dataclass
class Conversation:
    ids: list[str]
    fts_texts: list[str]
    vec_texts: list[str]
    scripts: dict[str, Script]
    matrix: npt.NDArray[np.float32] | None = None


# -- data ------------------------------------------------------------------------------------
def conversations(samples: list[dict[str, Any]]) -> list[Conversation]:
    out = []
    for sample in samples:
        turns = [t for _, _, ts in sessions_of(sample["conversation"]) for t in ts]
        vec = [f"{t['speaker']}: {turn_text(t, captions=True)}" for t in turns]
        out.append(Conversation(
            ids=[t["dia_id"] for t in turns],
            fts_texts=[f"{t['speaker']}: {turn_text(t, captions=False)}" for t in turns],
            vec_texts=vec,
            scripts={t["dia_id"]: dominant_script(v) for t, v in zip(turns, vec, strict=True)},
        ))  # fmt: skip
    return out


def chinese_questions(
    samples: list[dict[str, Any]], path: Path
) -> list[tuple[int, str, list[str]]]:
    """(conversation, Chinese question, evidence) for the translated category 1-4 questions."""
    by_id = {s.get("sample_id", i): i for i, s in enumerate(samples)}
    out = []
    for e in json.loads(path.read_text(encoding="utf-8")):
        ci = by_id[e["sample_id"]]
        known = {t["dia_id"] for _, _, ts in sessions_of(samples[ci]["conversation"]) for t in ts}
        ev = normalise_evidence(e["evidence"], known)
        if ev:
            out.append((ci, str(e["question_zh"]), ev))
    return out


# -- rankers ---------------------------------------------------------------------------------
class FullText:
    """The README's plain FTS5 baseline, read to depth 50, plus each term's document share."""

    def __init__(self, convs: list[Conversation]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.sizes = [len(c.ids) for c in convs]
        for ci, c in enumerate(convs):
            self.db.execute(
                f"CREATE VIRTUAL TABLE c{ci} USING fts5(dia_id UNINDEXED, text, tokenize='unicode61')"
            )
            self.db.executemany(
                f"INSERT INTO c{ci} VALUES (?, ?)", zip(c.ids, c.fts_texts, strict=True)
            )
        self._df: dict[tuple[int, str], int] = {}

    @staticmethod
    def _quote(term: str) -> str:
        return '"' + term.replace('"', '""') + '"'

    def rank(self, ci: int, question: str) -> list[str]:
        q = " OR ".join(self._quote(t) for t in terms(question))
        if not q:
            return []
        sql = f"SELECT dia_id FROM c{ci} WHERE c{ci} MATCH ? ORDER BY bm25(c{ci}) LIMIT {DEPTH}"
        return [r[0] for r in self.db.execute(sql, (q,))]

    def shares(self, ci: int, question: str) -> list[float]:
        out = []
        for t in terms(question):
            if (ci, t) not in self._df:
                row = self.db.execute(
                    f"SELECT count(*) FROM c{ci} WHERE c{ci} MATCH ?", (self._quote(t),)
                )
                self._df[ci, t] = int(row.fetchone()[0])
            out.append(self._df[ci, t] / self.sizes[ci])
        return out


def embed_conversations(embedder: Embedder, convs: list[Conversation], cache: Path | None) -> float:
    """Fill each conversation's matrix (from the cache when the same model saw the same texts)."""
    t0 = time.perf_counter()
    for c in convs:
        key = hashlib.sha256(("\n".join([embedder.model_id, *c.vec_texts])).encode()).hexdigest()[
            :24
        ]
        path = cache / f"{key}.npy" if cache else None
        if path and path.exists():
            c.matrix = np.load(path)
            continue
        c.matrix = embedder.embed(c.vec_texts, kind="passage")
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, c.matrix)
    return time.perf_counter() - t0


def rank_all(
    qs: list[Question], convs: list[Conversation], fts: FullText, embedder: Embedder
) -> list[float]:
    """Fill each question's full-text and vector lists; returns query-embedding times (s)."""
    times = []
    for q in qs:
        q.fts = fts.rank(q.conv, q.text)
        q.shares = fts.shares(q.conv, q.text)
        t0 = time.perf_counter()
        vec = embedder.embed([q.text], kind="query")[0]
        times.append(time.perf_counter() - t0)
        matrix = convs[q.conv].matrix
        assert matrix is not None
        idx, _ = top_k(matrix, vec, DEPTH)
        q.vector = [convs[q.conv].ids[i] for i in idx]
    return times


# -- scoring and tuning ----------------------------------------------------------------------
Ranker = Callable[[Question], Sequence[str]]


def recall(qs: Sequence[Question], ranker: Ranker) -> dict[int, float]:
    got: dict[int, list[float]] = {k: [] for k in KS}
    for q in qs:
        ranked = list(ranker(q))
        for k in KS:
            got[k].append(len(set(ranked[:k]) & set(q.evidence)) / len(q.evidence))
    return {k: statistics.fmean(v) if v else float("nan") for k, v in got.items()}


def fused_ranker(params: FusionParams, source: str, convs: list[Conversation]) -> Ranker:
    def rank(q: Question) -> list[str]:
        lexical = q.memd if source == "memd" else q.fts
        return fuse(lexical, q.vector, query_script=q.script, doc_scripts=convs[q.conv].scripts,
                    term_shares=q.shares, params=params, limit=20).keys()  # fmt: skip

    return rank


def _key(r: dict[int, float]) -> tuple[float, float, float]:
    return (round(r[10], 6), round(r[5], 6), round(r[20], 6))


def tune(
    en: list[Question], zh: list[Question], source: str, convs: list[Conversation]
) -> FusionParams:
    """Grid search on training questions: English first, then the cross-script weight on Chinese."""
    best, best_key = FusionParams(depth=DEPTH), (-1.0, -1.0, -1.0)
    for values in itertools.product(*GRID.values()):
        p = FusionParams(depth=DEPTH, **dict(zip(GRID, values, strict=True)))
        if p.common_share > 1 and p.common_fts_weight != GRID["common_fts_weight"][0]:
            continue  # the rule never fires: its weight is irrelevant
        key = _key(recall(en, fused_ranker(p, source, convs)))
        if key > best_key:
            best, best_key = p, key
    best_zh, zh_key = best, (-1.0, -1.0, -1.0)
    for w in CROSS_GRID:
        p = replace(best, cross_script_fts_weight=w)
        key = _key(recall(zh, fused_ranker(p, source, convs)))
        if key > zh_key:
            best_zh, zh_key = p, key
    return best_zh


# -- memd over its socket --------------------------------------------------------------------
def memd_rankings(samples: list[dict[str, Any]], all_qs: list[Question]) -> float:
    """Fill `memd` lists from a real daemon's `search`; returns ingest seconds."""
    from bench.daemon import Daemon
    from memd.api.client import Client

    with tempfile.TemporaryDirectory(prefix="memd-sem-", dir="/tmp") as tmp:
        home = Path(tmp)
        n = write_logs(samples, home / "logs", captions=True)
        env = {"MEMD_LOGS_SOURCES": json.dumps([{"path": str(home / "logs"), "format": "jsonl"}])}
        with Daemon(home, **env) as daemon:
            daemon.wait_ready()
            ingest_s = wait_ingested(daemon, n)
            client = Client(daemon.sock, timeout=30).connect()
            try:
                for q in all_qs:
                    res = client.call("search", {"query": q.text, "scope": "conversations",
                                                 "project": f"locomo-{q.conv}", "limit": DEPTH})  # fmt: skip
                    q.memd = [h["turn_id"] for h in res["hits"]]
            finally:
                client.close()
    return ingest_s


# -- report ----------------------------------------------------------------------------------
def _fmt(r: dict[int, float]) -> list[str]:
    return [f"{r[k]:.3f}" for k in KS]


def _params(p: FusionParams) -> str:
    common = (
        "off"
        if p.common_share > 1
        else f"share ≥ {p.common_share:g} → fts × {p.common_fts_weight:g}"
    )
    return (f"k={p.k:g}, vector weight {p.vector_weight:g}, common terms: {common},"
            f" cross-script fts × {p.cross_script_fts_weight:g}")  # fmt: skip


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
    ap.add_argument("--embedder", default="packaged", choices=("packaged", "use", "minilm"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path("/tmp/memd-semantic-vectors"),
        help="reuse passage vectors of an earlier run (keyed by model id and texts)",
    )
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--no-memd", action="store_true", help="skip memd's own search over a daemon")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args(argv)

    samples = json.loads(args.data.read_text(encoding="utf-8"))
    convs = conversations(samples)
    en = [Question(ci, q, ev, dominant_script(q)) for ci, q, _cat, ev in questions(samples)]
    zh = [
        Question(ci, q, ev, dominant_script(q)) for ci, q, ev in chinese_questions(samples, args.zh)
    ]
    print(f"{len(convs)} conversations, {sum(len(c.ids) for c in convs)} turns,"
          f" {len(en)} English and {len(zh)} Chinese questions; embedder {args.embedder}")  # fmt: skip

    t0 = time.perf_counter()
    embedder = build(args.embedder, args.threads)
    load_s = time.perf_counter() - t0
    embed_s = embed_conversations(embedder, convs, None if args.no_cache else args.cache)
    print(
        f"model loaded in {load_s:.2f} s; passages embedded (or read from the cache) in {embed_s:.1f} s"
    )
    fts = FullText(convs)
    q_times = rank_all(en + zh, convs, fts, embedder)
    sources = ["fts"]
    ingest_s = None
    if not args.no_memd:
        ingest_s = memd_rankings(samples, en + zh)
        sources.append("memd")

    rows_en, rows_zh, chosen = [], [], []
    for fold, (train, test) in FOLDS.items():
        tr_en = [q for q in en if q.conv in train]
        te_en = [q for q in en if q.conv in test]
        tr_zh = [q for q in zh if q.conv in train]
        te_zh = [q for q in zh if q.conv in test]
        label = f"{fold}: tune on {','.join(map(str, train))}, report on {','.join(map(str, test))}"
        rows_en.append([f"**fold {label}**", "", "", "", ""])
        rows_zh.append([f"**fold {label}**", "", "", "", ""])
        rows_en.append(["FTS5 only", *_fmt(recall(te_en, lambda q: q.fts))])
        rows_en.append(["vectors only", *_fmt(recall(te_en, lambda q: q.vector))])
        rows_zh.append(["FTS5 only", *_fmt(recall(te_zh, lambda q: q.fts))])
        rows_zh.append(["vectors only", *_fmt(recall(te_zh, lambda q: q.vector))])
        for source in sources:
            name = "FTS5" if source == "fts" else "memd search"
            if source == "memd":
                rows_en.append(["memd search only", *_fmt(recall(te_en, lambda q: q.memd))])
                rows_zh.append(["memd search only", *_fmt(recall(te_zh, lambda q: q.memd))])
            default = FusionParams(depth=DEPTH)
            rows_en.append(
                [
                    f"{name} + vectors, RRF defaults",
                    *_fmt(recall(te_en, fused_ranker(default, source, convs))),
                ]
            )
            best = tune(tr_en, tr_zh, source, convs)
            chosen.append(f"fold {fold}, {name}: {_params(best)}")
            rows_en.append(
                [
                    f"{name} + vectors, fused (tuned on train)",
                    *_fmt(recall(te_en, fused_ranker(best, source, convs))),
                ]
            )
            rows_zh.append(
                [
                    f"{name} + vectors, fused (tuned on train)",
                    *_fmt(recall(te_zh, fused_ranker(best, source, convs))),
                ]
            )
        print(f"fold {fold} done")

    fuse_t = []
    for q in en[:200]:
        t = time.perf_counter()
        fused_ranker(FusionParams(depth=DEPTH), "fts", convs)(q)
        fuse_t.append(time.perf_counter() - t)
    qs_ms, fu_ms = summary_ms(q_times), summary_ms(fuse_t)
    head = ["ranker", *(f"recall@{k}" for k in KS)]
    body = "\n".join([
        f"## Recall by meaning: LoCoMo with embeddings (`bench/semantic_eval.py`, {embedder.model_id})",
        "",
        f"{len(convs)} conversations, {sum(len(c.ids) for c in convs)} turns, {len(en)} English questions"
        f" of categories 1-4 and their {len(zh)} Chinese translations (same evidence). Phase 1: runs"
        " in-process over a plain FTS5 table and in-memory vectors (exact cosine); fusion parameters"
        " are chosen on the training conversations of each fold and reported on the others."
        + ("" if ingest_s is None else
           f" \"memd search\" is a real daemon's `search` over its socket (logs ingested in {ingest_s:.2f} s),"
           " fused in the bench with the same vectors."),
        "",
        "English questions over the English conversations:",
        "",
        table(head, rows_en),
        "",
        "Chinese questions over the English conversations:",
        "",
        table(head, rows_zh),
        "",
        "Parameters chosen on the training conversations:",
        "",
        *[f"- {c}" for c in chosen],
        "",
        f"Query embedding ({args.threads} threads, uncached): p50 {qs_ms['p50']:.1f} ms, p95 {qs_ms['p95']:.1f} ms;"
        f" fusion of two 50-entry lists: p50 {fu_ms['p50'] * 1000:.0f} µs. Model load {load_s:.2f} s.",
        "",
        machine_line(),
    ])  # fmt: skip
    publish(args, BLOCK if args.embedder == "packaged" else f"{BLOCK}-{args.embedder}", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
