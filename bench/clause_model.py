"""Train the offline extractor's learned layer (memd/extraction/rules/learned.py) and choose its
thresholds on held-out folds.

    python -m bench.clause_model [--select] [--write]

The labelled cases are those of the development sets: ../shared/bench-data/extraction-dev.jsonl
and every own set, tests/extraction/extraction_own*.jsonl (a set in
`bench.extraction_eval.HELD_OUT_SETS` is never read here). The shipped data file was trained
on every development set, own set 19 included since its measurement, on the labels of cd63018
(a team's or a system's tool is the project's: 2,189 clauses), while own set 20 was held out;
since its measurement (round 20) own set 20 is development data too, and own set 21 since round
21's, so `--write` now trains on them as well and gives other weights (round 21 did not ship
them: own set 11 fell below its floor).
Every user turn is cut into clauses as the extractor cuts them (its own words,
sentences, `units`, `learned.cut`); a clause is labelled:

- a statement of the type of the expected fact whose keyword it holds (the old value of a
  supersession case too, with the type of the case's first fact);
- not a statement when it is a clause of a negative case (weight 1), or of a positive case and
  holds no expected keyword (weight `WEAK`: it may be a statement nobody listed).

The gate is a logistic regression and the type classifier a softmax regression over
`learned.features`, trained by AdaGrad with L2 (pure Python, a few seconds). Features seen in
fewer than `MIN_COUNT` training clauses are dropped.

The data file also holds five numbers: the gate's threshold for a clause that names the user
(`--threshold`), the one for a clause that does not (`--bare`), the least score of a pair the
generic supersession links (`--overlap`), what a pair scores when each is the only memory of
its type on its side of the change (`--alone`) and the classifier's least probability of
"decision" to make a reader's memory of a tool a decision (`--retype`, 0.75 since round 20: from
0.7 to 0.85 the same facts on fold C, one more than 0.9, and 0.9 no longer keeps the unit test's
"我们团队定了，日志统一用 Loki" a decision; above 1 it never does; `--retypes` scores several). They were chosen by this rule: the most facts on
fold C (then the most supersessions, then the fewest false positives) among the settings whose
false positives stay at or under 1 in 10 negatives on fold C, on fold B (trained on A and C) and
on own set 17 (trained on every other set: `--leave-out own17-`), which the readers were never
written against; and every existing test green (a looser `--bare`, 0.7, kept two of the unit
tests' made-up negatives, "The 3rd test fails on CI" and "The file is called config.yaml").

Protocol: `--select` trains on folds A and B of every development set and scores fold C by
running `extract_rules` (the readers with the learned layer behind them) once for each gate
threshold (`--grid`) and supersession overlap (`--overlaps`), with `--bare` and `--alone` as
given; then the same with folds A and C against fold B, as a cross-check. The figures printed are facts, negatives
with a false positive, false positives and supersessions, as extraction-dev.md scores them on
the extractor's output (placement's deduplication is not applied: bench/extraction_eval.py gives
the real figures). `--write` retrains on every development case and writes
memd/extraction/rules/data/clause_model.json.gz with the five numbers given.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.extraction_eval import (
    DEFAULT_DATA,
    HELD_OUT_SETS,
    START,
    TURN_GAP_S,
    Case,
    Memory,
    load_cases,
    score,
    totals,
)
from bench.report import REPO
from memd.core.models import ExtractedMemory, Turn
from memd.core.redact import redact
from memd.extraction.rules import extract, learned
from memd.extraction.rules.common import SENTENCE_RE, is_question
from memd.extraction.rules.learned import TYPES, Model, cut, features, kept, lead_of
from memd.extraction.rules.message import own_words
from memd.extraction.rules.units import units

OWN_DIR = REPO / "tests" / "extraction"
WEAK = 1.0
MIN_COUNT = 2
EPOCHS = 12
L2 = 1e-4
RATE = 0.3
SEED = 17


# -- data ----------------------------------------------------------------------------------------
def dev_cases() -> list[Case]:
    """Every case of the development sets: the dev set and every own set not held out (a set in
    `HELD_OUT_SETS` is skipped by name, unread)."""
    paths = [DEFAULT_DATA, *sorted(OWN_DIR.glob("extraction_own*.jsonl"))]
    out: list[Case] = []
    for path in paths:
        if path.name in HELD_OUT_SETS:
            continue
        out += load_cases(path)
    return out


@dataclass(frozen=True, slots=True)
class Sample:
    feats: tuple[str, ...]
    statement: bool
    type: str
    weight: float


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _holds(text: str, key: str) -> bool:
    k = _norm(key)
    if k.isascii() and len(k) <= 3:
        return re.search(r"(?<![a-z0-9])" + re.escape(k) + r"(?![a-z0-9])", text) is not None
    return k in text


def clauses_of(text: str) -> Iterator[tuple[str, int, int, bool, str]]:
    """The clauses of a user turn as the extractor cuts them: (clause, position, count, asks)."""
    words = own_words(redact(text))
    for s in SENTENCE_RE.findall(words):
        if not s.strip():
            continue
        for u in units(s):
            clauses = cut(u.text)
            asks = is_question(u.text)
            lead = lead_of(u.text)
            for i, c in enumerate(clauses):
                yield c, i, len(clauses), asks, lead


def samples(cases: Iterable[Case]) -> list[Sample]:
    out: list[Sample] = []
    for case in cases:
        wanted = [(e.type, e.keys) for e in case.expect]
        if case.superseded and case.expect:
            wanted += [(case.expect[0].type, keys) for keys in case.superseded]
        for turn in case.turns:
            for clause, i, n, asks, lead in clauses_of(turn):
                if not kept(clause):
                    continue
                feats = tuple(features(clause, i, n, asks, lead))
                text = _norm(clause)
                type_ = next((t for t, keys in wanted if any(_holds(text, k) for k in keys)), "")
                if type_:
                    out.append(Sample(feats, True, type_, 1.0))
                else:
                    out.append(Sample(feats, False, "", 1.0 if case.expect_none else WEAK))
    return out


# -- training ------------------------------------------------------------------------------------
def _kept_features(data: Sequence[Sample]) -> set[str]:
    counts = Counter(f for s in data for f in set(s.feats))
    return {f for f, n in counts.items() if n >= MIN_COUNT}


def train(data: Sequence[Sample]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The gate's weights and the type classifier's (one vector per type)."""
    keep = _kept_features(data)
    rows = [(tuple(f for f in s.feats if f in keep), s) for s in data]
    rng = random.Random(SEED)
    gate: dict[str, float] = {}
    g2: dict[str, float] = {}
    types: dict[str, dict[str, float]] = {t: {} for t in TYPES}
    t2: dict[str, dict[str, float]] = {t: {} for t in TYPES}
    order = list(range(len(rows)))
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for k in order:
            feats, s = rows[k]
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, sum(gate.get(f, 0.0) for f in feats)))))
            grad = (p - (1.0 if s.statement else 0.0)) * s.weight
            for f in feats:
                g = grad + L2 * gate.get(f, 0.0)
                g2[f] = g2.get(f, 0.0) + g * g
                gate[f] = gate.get(f, 0.0) - RATE * g / math.sqrt(g2[f] + 1e-8)
            if not s.statement:
                continue
            z = {t: sum(types[t].get(f, 0.0) for f in feats) for t in TYPES}
            top = max(z.values())
            e = {t: math.exp(v - top) for t, v in z.items()}
            total = sum(e.values())
            for t in TYPES:
                grad_t = e[t] / total - (1.0 if t == s.type else 0.0)
                w, acc = types[t], t2[t]
                for f in feats:
                    g = grad_t + L2 * w.get(f, 0.0)
                    acc[f] = acc.get(f, 0.0) + g * g
                    w[f] = w.get(f, 0.0) - RATE * g / math.sqrt(acc[f] + 1e-8)
    return _compact(gate), {t: _compact(w) for t, w in types.items()}


def _compact(weights: dict[str, float]) -> dict[str, float]:
    return {f: round(w, 3) for f, w in sorted(weights.items()) if abs(w) >= 0.005}


# -- scoring on held-out folds ---------------------------------------------------------------------
def _turns(case: Case) -> list[Turn]:
    return [
        Turn("ingest", case.id, f"t{i + 1}", "user", text, START + i * TURN_GAP_S)
        for i, text in enumerate(case.turns)
    ]


def _memories(found: Sequence[ExtractedMemory]) -> list[Memory]:
    """The extractor's memories as the scorer reads them: an earlier one sharing its key with a
    later one is superseded."""
    out = []
    for i, m in enumerate(found):
        gone = bool(m.subject) and any(n.subject == m.subject for n in found[i + 1 :])
        out.append(Memory(m.content, m.type, gone, ""))
    return out


def evaluate(
    cases: Sequence[Case],
    model: Model,
    thresholds: Sequence[float],
    overlaps: Sequence[float],
    retypes: Sequence[float] = (1.01,),
) -> dict[tuple[float, float, float], tuple[int, int, int, int, int]]:
    """(threshold, overlap, retype) → (facts, all facts, negatives with FP, FP, supersessions)."""
    out = {}
    for overlap, threshold, retype in itertools.product(overlaps, thresholds, retypes):
        trial = Model(model.gate, model.types, threshold, model.bare, overlap, model.alone, retype)
        learned.model = _constant(trial)  # type: ignore[assignment]
        try:
            scores = [score(c, _memories(extract.extract_rules(_turns(c), tz=None))) for c in cases]
        finally:
            learned.model = _MODEL_FN
        t = totals(scores)
        out[(threshold, overlap, retype)] = (
            t.facts_matched,
            t.facts,
            t.negatives_with_fp,
            t.false_positives,
            t.passed_by_kind["supersession"],
        )
    return out


_MODEL_FN = learned.model


def _constant(model: Model) -> Callable[[], Model]:
    return lambda: model


# -- main ------------------------------------------------------------------------------------------
def _write(model: Model, n_samples: int, path: Path) -> None:
    data = {
        "gate": model.gate,
        "types": model.types,
        "threshold": model.threshold,
        "bare": model.bare,
        "overlap": model.overlap,
        "alone": model.alone,
        "retype": model.retype,
        "trained_on": n_samples,
    }
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    path.write_bytes(gzip.compress(raw.encode("utf-8"), mtime=0))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--select", action="store_true", help="train on two folds, score the third")
    ap.add_argument("--write", action="store_true", help="train on all, write the data file")
    ap.add_argument("--threshold", type=float, default=0.5, help="the gate's, for an own clause")
    ap.add_argument("--bare", type=float, default=0.99, help="the gate's, for another clause")
    ap.add_argument("--overlap", type=float, default=0.5, help="supersession's least score")
    ap.add_argument("--alone", type=float, default=0.5, help="supersession's score when alone")
    ap.add_argument("--retype", type=float, default=1.01, help="the classifier's, over a reader")
    ap.add_argument("--grid", default="0.4,0.5,0.6,0.7,0.8,0.9,1.01")
    ap.add_argument("--retypes", default="1.01", help="--retype values to score")
    ap.add_argument("--overlaps", default="0.5")
    ap.add_argument("--leave-out", default="", help="an id prefix: train on the rest, score it")
    args = ap.parse_args(argv)
    cases = dev_cases()
    grid = [float(x) for x in args.grid.split(",")]
    overlaps = [float(x) for x in args.overlaps.split(",")]
    retypes = [float(x) for x in args.retypes.split(",")]
    if args.select:
        for train_folds, test_fold in (("AB", "C"), ("AC", "B")):
            data = samples(c for c in cases if c.fold in train_folds)
            gate, types = train(data)
            test = [c for c in cases if c.fold == test_fold]
            negs = sum(c.expect_none for c in test)
            sup = sum(bool(c.superseded) for c in test)
            print(f"train {train_folds} ({len(data)} clauses), test fold {test_fold}: "
                  f"{len(test)} cases, {negs} negatives, {sup} supersessions")  # fmt: skip
            res = evaluate(
                test, Model(gate, types, 0.0, args.bare, 0.0, args.alone), grid, overlaps, retypes
            )
            for (th, ov, rt), (f, fa, nfp, fp, s) in sorted(res.items()):
                print(f"  threshold {th:.2f} overlap {ov:.2f} retype {rt:.2f}: facts {f}/{fa} ({f / fa:.1%}), "
                      f"negatives with FP {nfp}/{negs}, FP {fp}, supersessions {s}/{sup}")  # fmt: skip
    if args.leave_out:
        train_cases = [c for c in cases if not c.id.startswith(args.leave_out)]
        test = [c for c in cases if c.id.startswith(args.leave_out)]
        data = samples(train_cases)
        gate, types = train(data)
        negs = sum(c.expect_none for c in test)
        sup = sum(bool(c.superseded) for c in test)
        print(f"train all but {args.leave_out} ({len(data)} clauses): {len(test)} cases, "
              f"{negs} negatives, {sup} supersessions")  # fmt: skip
        res = evaluate(
            test, Model(gate, types, 0.0, args.bare, 0.0, args.alone), grid, overlaps, retypes
        )
        for (th, ov, rt), (f, fa, nfp, fp, s) in sorted(res.items()):
            print(f"  threshold {th:.2f} overlap {ov:.2f} retype {rt:.2f}: facts {f}/{fa} ({f / fa:.1%}), "
                  f"negatives with FP {nfp}/{negs}, FP {fp}, supersessions {s}/{sup}")  # fmt: skip
    if args.write:
        data = samples(cases)
        gate, types = train(data)
        model = Model(gate, types, args.threshold, args.bare, args.overlap, args.alone, args.retype)
        _write(model, len(data), learned.MODEL_PATH)
        size = learned.MODEL_PATH.stat().st_size
        print(f"wrote {learned.MODEL_PATH.relative_to(REPO)}: {len(data)} clauses, "
              f"{len(gate)} gate weights, {size} bytes")  # fmt: skip


if __name__ == "__main__":
    main()
