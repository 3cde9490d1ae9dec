"""What the backfill's savings cost in recall: turn caps and one byte per dimension, on LoCoMo.

    python -m bench.semantic_savings [--caps 96 128] [--memd-results FILE.json]
        [--cache DIR] [--out docs/benchmarks.md] [--no-write]

The recipe as shipped (`memd.semantic.recipe`: memd's search as typed and bridged, fused with
the passage vectors) is scored on LoCoMo dev with the passages as the backfill embeds them
(`memd.semantic.texts.turn_passage`: the turn after the one before it), for

- each cap of a turn's own text in estimated tokens (`--caps`; `texts.TURN_TOKENS` is the
  shipped one), against no cap (the passages before caps: the turn whole, the turn before it
  cut to 300 characters, as `bench/semantic_eval.py` embeds them);
- the vectors as float32, and as stored since m100 (int8 with a scale per vector,
  `memd.semantic.vectors.encode`), read back.

A cap is chosen on the training conversations of a fold (the largest saving whose recall@10
there is within `TOLERANCE` of no cap, English and Chinese questions alike) and reported on
the held-out ones: fold A trains on conversations 0-2 and reports 3-4, fold B the reverse.
Also printed: the share of passages each cap shortens and the estimated tokens it saves.
memd's search lists come from a real daemon (bench/semantic_eval.py's `memd_lists`, kept in
--memd-results); passage vectors are cached in --cache by text.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import numpy.typing as npt

from bench.locomo import DEFAULT_DATA, questions, sessions_of, turn_text
from bench.report import REPO, machine_line, publish, table
from bench.semantic_eval import (
    DEFAULT_ZH,
    DEPTH,
    FOLDS,
    Question,
    bridge_all,
    chinese_questions,
    memd_lists,
    recall,
)
from memd.core.text import estimate_tokens
from memd.semantic import recipe
from memd.semantic.bridge import Dictionary
from memd.semantic.fusion import Ranked, Script, dominant_script
from memd.semantic.recipe import FTS, FTS_BRIDGED, VECTOR
from memd.semantic.texts import TURN_TOKENS, turn_passage
from memd.semantic.vectors import decode, encode, top_k

BLOCK = "semantic-savings"
TOLERANCE = 0.005
Vectors = npt.NDArray[np.float32]


class Conv:
    """One LoCoMo conversation: its turn ids, scripts and, per variant, the passage texts."""

    def __init__(self, sample: dict[str, Any], caps: Sequence[int]) -> None:
        self.ids: list[str] = []
        self.scripts: dict[str, Script] = {}
        self.passages: dict[str, list[str]] = {"none": []}
        for cap in caps:
            self.passages[str(cap)] = []
        for _, _, ts in sessions_of(sample["conversation"]):
            prev: tuple[str, str] = ("", "")
            for t in ts:
                text = turn_text(t, captions=True)
                self.ids.append(t["dia_id"])
                self.scripts[t["dia_id"]] = dominant_script(t["text"])
                self.passages["none"].append(_uncapped(t["speaker"], text, *prev))
                for cap in caps:
                    self.passages[str(cap)].append(_capped(t["speaker"], text, prev, cap))
                prev = (t["speaker"], text)


def _uncapped(label: str, text: str, prev_label: str, prev_text: str) -> str:
    from memd.semantic.passages import Turn, turn_passages

    turns = [Turn(prev_label, prev_text), Turn(label, text)] if prev_text else [Turn(label, text)]
    return turn_passages(turns, before=recipe.PASSAGE_BEFORE, after=recipe.PASSAGE_AFTER)[-1]


def _capped(label: str, text: str, prev: tuple[str, str], cap: int) -> str:
    from memd.semantic import texts

    saved = texts.TURN_TOKENS
    texts.TURN_TOKENS = cap
    try:
        return turn_passage(label, text, *prev)
    finally:
        texts.TURN_TOKENS = saved


def embed_all(texts: list[str], cache: Path, threads: int) -> dict[str, Vectors]:
    """Each distinct text's passage vector (from the cache when there)."""
    from memd.semantic.packaged import PackagedEmbedder

    out: dict[str, Vectors] = {}
    missing: list[str] = []
    cache.mkdir(parents=True, exist_ok=True)
    for t in dict.fromkeys(texts):
        path = cache / (hashlib.sha256(t.encode()).hexdigest()[:24] + ".npy")
        if path.exists():
            out[t] = np.load(path)
        else:
            missing.append(t)
    print(f"{len(out)} passages cached, {len(missing)} to embed", flush=True)
    if missing:
        model = PackagedEmbedder(threads=threads)
        for i in range(0, len(missing), 32):
            part = missing[i : i + 32]
            for t, v in zip(part, model.embed(part), strict=True):
                out[t] = v
                np.save(cache / (hashlib.sha256(t.encode()).hexdigest()[:24] + ".npy"), v)
            if i % 320 == 0:
                print(f"  {i + len(part)}/{len(missing)}", flush=True)
    return out


def int8(m: Vectors) -> Vectors:
    q, scale = decode(encode(m), m.shape[1])
    out: Vectors = q.astype(np.float32) * scale[:, None]
    return out


def scorer(
    convs: list[Conv], variant: str, store: str, vecs: dict[str, Vectors], qv: dict[str, Vectors]
) -> Callable[[Question], list[str]]:
    """The recipe's top 20 for a question, with that variant's passage vectors."""
    mats = []
    for c in convs:
        m = np.stack([vecs[p] for p in c.passages[variant]]).astype(np.float32)
        mats.append(int8(m) if store == "int8" else m)
    d = Dictionary.load()
    plans: dict[str, recipe.Plan] = {}

    def rank(q: Question) -> list[str]:
        c = convs[q.conv]
        idx, sc = top_k(mats[q.conv], qv[q.text], DEPTH)
        vec = Ranked([c.ids[i] for i in idx], [float(s) for s in sc])
        p = plans.get(q.text) or plans.setdefault(q.text, recipe.plan(q.text, d))
        lists = {FTS: q.lists["memd"], FTS_BRIDGED: q.lists["memd:bridged"], VECTOR: vec}
        return recipe.fuse(p, lists, c.scripts, limit=20).keys()

    return rank


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--zh", type=Path, default=DEFAULT_ZH)
    ap.add_argument("--caps", type=int, nargs="+", default=[96, TURN_TOKENS])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/memd-semantic-savings"))
    ap.add_argument("--memd-results", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    import json

    samples = json.loads(args.data.read_text(encoding="utf-8"))
    caps = sorted(set(args.caps), reverse=True)
    convs = [Conv(s, caps) for s in samples]
    en = [Question(ci, q, ev) for ci, q, _cat, ev in questions(samples)]
    zh = chinese_questions(samples, args.zh)
    for q in en + zh:
        q.asks[""] = q.text
    bridge_all(en, zh)
    memd_lists(args, samples, en + zh)
    every = [p for c in convs for ps in c.passages.values() for p in ps]
    vecs = embed_all(every, args.cache, args.threads)
    from memd.semantic.packaged import PackagedEmbedder

    model = PackagedEmbedder(threads=args.threads)
    qv = {q.text: model.embed([q.text], kind="query")[0] for q in en + zh}
    results: dict[tuple[str, str, str, str], dict[int, float]] = {}
    for variant in ["none", *map(str, caps)]:
        for store in ("float32", "int8"):
            rank = scorer(convs, variant, store, vecs, qv)
            for lang, qs in (("en", en), ("zh", zh)):
                for name, (train, test) in FOLDS.items():
                    results[variant, store, lang, f"{name}-train"] = recall(
                        [q for q in qs if q.conv in train], rank)  # fmt: skip
                    results[variant, store, lang, name] = recall(
                        [q for q in qs if q.conv in test], rank)  # fmt: skip
    publish(args, BLOCK, render(args, convs, caps, results))


def _choice(caps: Sequence[int], results: dict[Any, dict[int, float]], fold: str) -> str:
    """The smallest cap whose training recall@10 (both languages, int8) is within TOLERANCE."""
    best = "none"
    for cap in sorted(caps, reverse=True):
        ok = all(results[str(cap), "int8", lang, f"{fold}-train"][10]
                 >= results["none", "float32", lang, f"{fold}-train"][10] - TOLERANCE
                 for lang in ("en", "zh"))  # fmt: skip
        if not ok:
            break
        best = str(cap)
    return best


def render(args: argparse.Namespace, convs: list[Conv], caps: Sequence[int],
           results: dict[Any, dict[int, float]]) -> str:  # fmt: skip
    rows = []
    for variant in ["none", *map(str, caps)]:
        base = [estimate_tokens(p) for c in convs for p in c.passages["none"]]
        mine = [estimate_tokens(p) for c in convs for p in c.passages[variant]]
        cut = sum(a != b for a, b in zip(base, mine, strict=True)) / len(base)
        for store in ("float32", "int8"):
            cells = []
            for lang in ("en", "zh"):
                for fold in FOLDS:
                    r = results[variant, store, lang, fold]
                    cells.append(f"{r[5]:.3f} / {r[10]:.3f}")
            label = "no cap" if variant == "none" else f"turn ≤ {variant} tokens"
            rows.append([label, store, f"{cut:.0%}", f"{statistics.fmean(mine):.0f}", *cells])
    chosen = "; ".join(f"fold {f} (trained on conversations {', '.join(map(str, FOLDS[f][0]))}):"
                       f" {_choice(caps, results, f)}" for f in FOLDS)  # fmt: skip
    return "\n".join([
        "### Recall by meaning: what the backfill's savings cost in recall (`bench/semantic_savings.py`)",
        "",
        "The recipe as shipped (memd's search as typed and bridged, fused with the passage"
        " vectors) on LoCoMo dev, held-out folds (A: conversations 3-4, B: 0-2), recall@5 /"
        " recall@10. Rows: a cap on a turn's own text in estimated tokens (the turn before it is"
        " cut to 300 characters in every row), and the vectors as float32 or as stored (int8"
        " with a scale per vector, read back). Also: the share of passages the cap shortens and"
        " their mean estimated tokens.",
        "",
        table(["passages", "vectors", "shortened", "mean tokens", "EN fold A", "EN fold B",
               "ZH fold A", "ZH fold B"], rows),  # fmt: skip
        "",
        f"The cap each fold's training conversations choose (the smallest within {TOLERANCE} of"
        f" no cap in recall@10, English and Chinese, int8): {chosen}. Shipped:"
        f" `texts.TURN_TOKENS` = {TURN_TOKENS}.",
        "",
        machine_line(),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
