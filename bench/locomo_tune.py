"""LoCoMo, in-process over a home `bench/locomo.py --semantic --home DIR` kept: what `search`
(`scope: conversations`, the conversation as `project`) ranks under other constants, tuned on
one fold's conversations and reported on the other's.

    python -m bench.locomo_tune --home DIR [--data ...] [--zh ...] [--report]

Every question's rankings (memd's full-text search as typed and bridged, the turn vectors)
are computed once with the daemon's own functions (`memd.conversations.turn_search.turn_lists`)
and then fused and ranked again for each setting (`fuse_turns`, `memd.conversations.ranking`),
so a setting is measured exactly as the daemon would answer with it. The settings are the
recipe's fusion weights, the vector floors (in standard deviations above the mean cosine of
unrelated pairs: `memd.semantic.recipe.FLOOR_SD` alone, `SUPPORTED_SD` next to full-text
evidence), how much of a turn's score is
its own match (`memd.conversations.ranking.OWN_MATCH`), what a named speaker and a turn's
session, a turn's neighbours, a "when" question and a date the question names add after
fusion (`memd.conversations.turn_search.FUSED_SPEAKER_BOOST`, `SESSION_WEIGHT`,
`FUSED_NEIGHBOUR_WEIGHT`, `WHEN_BOOST`, `FUSED_DATE_BOOST`), and how the bridged list's
weight shrinks with the number of words the bridge translated (`BRIDGED_WORDS_DECAY`), and
the weight of the feedback list (`TURN_WEIGHTS.feedback`: full-text search with
the words of the first fusion's best turns, computed once per question under the shipped
constants, as the daemon's first fusion runs).

Each fold's training conversations choose every constant (fold A trains on 0-2, fold B on
3-4; a coordinate search from the shipped constants). "Agreed" turns the two choices into
one value per constant by each fold's own curve: around its choice, the values of the
constant whose mean recall@10 (English and Chinese) is within one standard error of the
paired per-question difference from the curve's best are the ones that fold accepts; of the
values both folds accept, the one nearest the shipped value ships; where they accept none in
common, the shipped value stays. Each fold alone would accept the value shipped, which is
what lets both folds' held-out figures stand for it. Without --report only the training conversations are scored;
--report adds each fold's held-out figures for the shipped, agreed and chosen settings, per
category, English and Chinese, recall@1/5/10, and a table of recall@10.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from bench.daemon import bench_env
from bench.locomo import (
    DEFAULT_DATA,
    DEFAULT_ZH,
    chinese_questions,
    questions,
)
from memd.semantic.recipe import FTS_FEEDBACK

TRAIN = {"A": (0, 1, 2), "B": (3, 4)}
HELD = {"A": (3, 4), "B": (0, 1, 2)}
KS = (1, 5, 10)
Question = tuple[int, str, int, list[str]]


@dataclass(frozen=True)
class Setting:
    vector: float
    cross_vector: float
    bridged: float
    floor_k: float
    supported_k: float
    own_turn: float
    speaker: float
    session: float
    neighbour: float
    when: float
    date: float
    bridged_decay: float
    feedback: float


GRID = {
    "vector": (0.25, 0.5, 0.75, 1.0),
    "cross_vector": (0.5, 0.75, 1.0, 1.5),
    "bridged": (0.5, 1.0, 1.5),
    "floor_k": (0.0, 1.0, 2.0, 3.0, 3.5),
    "supported_k": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
    "own_turn": (0.0, 0.25, 0.5),
    "speaker": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
    "session": (0.0, 0.5, 1.0, 1.5, 2.0),
    "neighbour": (0.0, 0.1, 0.2, 0.3, 0.5),
    "when": (0.0, 0.25, 0.5, 1.0, 2.0),
    "date": (0.0, 0.5, 1.0, 2.0, 4.0),
    "bridged_decay": (0.0, 0.25, 0.5, 1.0),
    "feedback": (0.0, 0.25, 0.5, 1.0, 1.5),
}


# Chosen elsewhere: the vector-only floor is the ranking set's (its queries with no answer must
# get nothing back; every LoCoMo question has its answer in scope), so LoCoMo never moves it.
NOT_FROM_LOCOMO = frozenset({"floor_k"})


def lists(home: Path, qs: dict[str, list[Question]], cache: Path | None) -> dict[Any, Any]:
    """(language, conversation, question) -> (plan, turn lists), computed once; the lists
    include the feedback list (`memd.conversations.turn_search.with_feedback`) of the first
    fusion under the shipped constants, as the daemon runs it."""
    if cache is not None and cache.exists():
        with cache.open("rb") as f:
            out: dict[Any, Any] = pickle.load(f)
        if all(FTS_FEEDBACK in t.lists or not t.hits for _, t in out.values()):
            return out
    else:
        out = {}
    from memd.cli.offline import readonly_engine
    from memd.conversations.repo import TurnScope
    from memd.conversations.turn_search import feedback_terms, fuse_turns, turn_lists, with_feedback
    from memd.core import settings

    st = settings.load(env=bench_env(home, MEMD_SEMANTIC_KIND="packaged"))
    with readonly_engine(st) as eng:
        rec, conn = eng.semantic.recall, eng.store.read()
        for lang, items in qs.items():
            for ci, q, _, _ in items:
                scope = TurnScope(project=f"locomo-{ci}")
                if (lang, ci, q) not in out:
                    p = rec.plan(q)
                    assert p is not None, "recall by meaning is not on in this home"
                    out[(lang, ci, q)] = (p, turn_lists(conn, p, rec, scope=scope))
                p, t = out[(lang, ci, q)]
                first = fuse_turns(p, t, rec, limit=40)
                if first:
                    out[(lang, ci, q)] = (
                        p,
                        with_feedback(conn, t, feedback_terms(p, first), scope=scope),
                    )
    if cache is not None:
        with cache.open("wb") as f:
            pickle.dump(out, f)
    return out


def ranker(found: dict[Any, Any], stats: dict[Any, tuple[float, float]]) -> Callable[..., Any]:
    """A function (setting, language, conversation, question) -> turn ids, best first."""
    from memd.conversations import ranking
    from memd.conversations.turn_search import AfterFusion, fuse_turns
    from memd.semantic import recipe
    from memd.semantic.service import SemanticRecall

    sem = SemanticRecall()

    def rank(s: Setting, lang: str, ci: int, q: str) -> list[str]:
        recipe.VECTOR_SCALE = {k: (mu + s.floor_k * sd, mu + (s.floor_k + 1) * sd)
                               for k, (mu, sd) in stats.items()}  # fmt: skip
        recipe.SUPPORTED_SD = s.supported_k
        p, t = found[(lang, ci, q)]
        w = recipe.Weights(
            vector=s.vector, cross_vector=s.cross_vector, bridged=s.bridged, feedback=s.feedback
        )
        after = AfterFusion(s.speaker, s.session, s.neighbour, s.when, s.date, s.bridged_decay)
        turns = fuse_turns(p, t, sem, limit=40, weights=w, after=after)
        f = ranking.Found(ranking.Query.of(q, p), [], [], turns, [])
        own = {**ranking.OWN_MATCH, "turn": s.own_turn}
        return [h.turn_id for h in ranking.rank(f, 20, ranking.PRIORS, own)]

    return rank


def recall(qs: Sequence[Question], ranked: Callable[[int, str], list[str]]) -> dict[Any, Any]:
    """recall@k overall (category 0) and per category."""
    per: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ci, q, cat, ev in qs:
        got = ranked(ci, q)
        for k in KS:
            r = len(set(got[:k]) & set(ev)) / len(ev)
            per[0][k].append(r)
            per[cat][k].append(r)
    return {c: {k: statistics.fmean(v) for k, v in ks.items()} | {"n": len(ks[1])}
            for c, ks in per.items()}  # fmt: skip


def settings_grid() -> Iterator[Setting]:
    for values in itertools.product(*GRID.values()):
        yield Setting(*values)


class Curves:
    """Each question's recall@10 under a setting, per language, over some conversations
    (memoised: the coordinate search and the agreement rule ask for the same settings)."""

    def __init__(
        self, qs: dict[str, list[Question]], convs: Sequence[int], rank: Callable[..., Any]
    ):
        self.qs = {lang: [x for x in items if x[0] in convs] for lang, items in qs.items()}
        self.rank = rank
        self.memo: dict[Setting, dict[str, list[float]]] = {}

    def per_question(self, s: Setting) -> dict[str, list[float]]:
        if s not in self.memo:
            self.memo[s] = {
                lang: [len(set(self.rank(s, lang, ci, q)[:10]) & set(ev)) / len(ev)
                       for ci, q, _, ev in items]
                for lang, items in self.qs.items()
            }  # fmt: skip
        return self.memo[s]

    def objective(self, s: Setting) -> float:
        """The mean of English and Chinese recall@10."""
        return statistics.fmean(statistics.fmean(v) for v in self.per_question(s).values())

    def noise(self, a: Setting, b: Setting) -> float:
        """The standard error of `objective(a) - objective(b)`, from the questions' paired
        differences."""
        pa, pb = self.per_question(a), self.per_question(b)
        var = 0.0
        for lang in pa:
            d = [x - y for x, y in zip(pa[lang], pb[lang], strict=True)]
            var += statistics.variance(d) / len(d) if len(d) > 1 else 0.0
        return float(var**0.5) / len(pa)

    def accepted(self, best: Setting, name: str) -> set[float]:
        """The values of constant `name` (the others as in `best`) whose objective is within
        one standard error of the paired difference from the best of them."""
        options = {v: replace(best, **{name: v}) for v in GRID[name]}
        top = max(options.values(), key=self.objective)
        return {v for v, o in options.items()
                if self.objective(top) - self.objective(o) <= self.noise(top, o) + 1e-12}  # fmt: skip


def choose(curves: Curves, base: Setting) -> Setting:
    """The setting best on the mean of English and Chinese recall@10 over the curves'
    conversations, one constant at a time (coordinate search, twice over; `NOT_FROM_LOCOMO`
    stay as in `base`)."""
    best = base
    for _ in range(2):
        for name, values in GRID.items():
            if name in NOT_FROM_LOCOMO:
                continue
            options = [replace(best, **{name: v}) for v in values]
            scores = [curves.objective(o) for o in options]
            top = max(scores)
            tied = [o for o, v in zip(options, scores, strict=True) if v >= top - 1e-9]
            best = tied[len(tied) // 2]
    return best


def agreed(
    a: Setting, b: Setting, shipped: Setting, ca: Curves, cb: Curves
) -> tuple[Setting, dict[str, Any]]:
    """Each constant at a value both folds' training conversations accept: within one standard
    error (of the paired per-question difference) of the best value on each fold's own curve
    around its own choice (`Curves.accepted`). Of the values both accept, the one nearest the
    shipped value (the smaller of two as near); the shipped one where they accept none in
    common. Which values each fold accepted is returned with it."""
    keep: dict[str, float] = {}
    why: dict[str, Any] = {}
    for n in GRID:
        if n in NOT_FROM_LOCOMO:
            continue
        both = ca.accepted(a, n) & cb.accepted(b, n)
        was: float = getattr(shipped, n)
        why[n] = {"A": sorted(ca.accepted(a, n)), "B": sorted(cb.accepted(b, n))}
        if both:
            keep[n] = min(sorted(both), key=lambda v: abs(v - was))
    return replace(shipped, **keep), why


def scored(
    qs: dict[str, list[Question]],
    rank: Callable[..., Any],
    s: Setting,
    fold: str,
    parts: Sequence[str],
) -> dict[str, Any]:
    """`s`'s recall on a fold's training (and held-out) conversations, per language."""
    out: dict[str, Any] = {}
    for lang, items in qs.items():
        for part in parts:
            cs = TRAIN[fold] if part == "train" else HELD[fold]
            out[f"{lang} {part}"] = recall(
                [x for x in items if x[0] in cs],
                lambda ci, q, lang=lang: rank(s, lang, ci, q),  # type: ignore[misc]
            )
    return out


def summary(out: dict[str, Any], parts: Sequence[str]) -> str:
    """A Markdown table of recall@10 (English / Chinese) per setting and fold."""
    head = [f"fold {f} {p} ({'-'.join(map(str, (TRAIN if p == 'train' else HELD)[f]))})"
            for f in TRAIN for p in parts]  # fmt: skip
    rows = ["| setting | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for name in ("shipped", "agreed", "chosen A", "chosen B"):
        cells = [f"{out[name][f][f'en {p}'][0][10]:.3f} / {out[name][f][f'zh {p}'][0][10]:.3f}"
                 for f in TRAIN for p in parts]  # fmt: skip
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from memd.semantic import recipe

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--home", type=Path, required=True, help="a home bench.locomo --semantic kept")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--zh", type=Path, default=DEFAULT_ZH)
    ap.add_argument("--cache", type=Path, help="keep the computed rankings in this file")
    ap.add_argument("--report", action="store_true", help="also score the held-out folds")
    args = ap.parse_args(argv)
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    qs = {"en": questions(samples), "zh": chinese_questions(samples, args.zh)}
    rank = ranker(lists(args.home, qs, args.cache), dict(recipe.COSINE_STATS))
    shipped = shipped_setting()
    parts = ("train", "held") if args.report else ("train",)
    curves = {fold: Curves(qs, TRAIN[fold], rank) for fold in TRAIN}
    chosen = {fold: choose(curves[fold], shipped) for fold in TRAIN}
    both, accepted = agreed(chosen["A"], chosen["B"], shipped, curves["A"], curves["B"])
    settings = {"shipped": shipped, "agreed": both}
    settings |= {f"chosen {fold}": s for fold, s in chosen.items()}
    out: dict[str, Any] = {
        name: {"setting": s.__dict__} | {f: scored(qs, rank, s, f, parts) for f in TRAIN}
        for name, s in settings.items()
    }
    out["accepted"] = accepted
    print(json.dumps(out, indent=1, default=str))
    print(summary(out, parts))
    return 0


def shipped_setting() -> Setting:
    from memd.conversations import ranking, turn_search
    from memd.semantic import recipe

    w = turn_search.TURN_WEIGHTS
    return Setting(w.vector, w.cross_vector, w.bridged,
                   recipe.FLOOR_SD, recipe.SUPPORTED_SD, ranking.OWN_MATCH["turn"],
                   turn_search.FUSED_SPEAKER_BOOST, turn_search.SESSION_WEIGHT,
                   turn_search.FUSED_NEIGHBOUR_WEIGHT, turn_search.WHEN_BOOST,
                   turn_search.FUSED_DATE_BOOST, turn_search.BRIDGED_WORDS_DECAY,
                   w.feedback)  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
