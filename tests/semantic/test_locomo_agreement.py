"""How `bench/locomo_tune.py` turns two folds' choices into one shipped value: a value both
folds' curves accept within their noise (one standard error of the paired per-question
difference from each curve's best), the one nearest the shipped value; else the shipped one."""

from __future__ import annotations

import dataclasses
from typing import Any

from bench import locomo_tune as lt

SHIPPED = lt.Setting(vector=0.5, cross_vector=0.75, bridged=1.0, floor_k=3.5, supported_k=0.5,
                     own_turn=0.0, speaker=1.5, session=0.0, neighbour=0.0, when=2.0, date=0.0,
                     bridged_decay=0.0, feedback=0.0)  # fmt: skip


def _curves(hits_at: dict[float, range], n: int = 40) -> lt.Curves:
    """A fold of `n` English and `n` Chinese questions with one evidence turn each, of which
    those numbered in `hits_at[v]` are found in the first ten when the feedback weight is `v`
    (every other constant changes nothing)."""
    qs: dict[str, list[lt.Question]] = {
        lang: [(0, f"{lang}{i}", 1, [f"e{i}"]) for i in range(n)] for lang in ("en", "zh")
    }

    def rank(s: lt.Setting, lang: str, ci: int, q: str) -> list[str]:
        i = int(q[2:])
        return [f"e{i}"] if i in hits_at.get(s.feedback, range(0)) else ["other"]

    return lt.Curves(qs, (0,), rank)


def _at(**kw: Any) -> lt.Setting:
    return dataclasses.replace(SHIPPED, **kw)


def test_a_value_both_folds_accept_within_their_noise_ships() -> None:
    # Fold A is best at 1.0 and cannot tell 1.5 from it (one question more of 40, three that
    # differ); fold B the reverse; neither accepts 0.0 (shipped) or 0.25. Under "the same
    # value on both folds" nothing would have shipped.
    a = _curves({0.0: range(10), 0.25: range(12), 0.5: range(20), 1.0: range(30),
                 1.5: range(2, 31)})  # fmt: skip
    b = _curves({0.0: range(10), 0.25: range(11), 0.5: range(15), 1.0: range(2, 31),
                 1.5: range(30)})  # fmt: skip
    assert a.accepted(_at(feedback=1.0), "feedback") == {1.0, 1.5}
    assert b.accepted(_at(feedback=1.5), "feedback") == {1.0, 1.5}
    both, why = lt.agreed(_at(feedback=1.0), _at(feedback=1.5), SHIPPED, a, b)
    assert both.feedback == 1.0  # of the two both accept, the nearer to the shipped 0.0
    assert why["feedback"] == {"A": [1.0, 1.5], "B": [1.0, 1.5]}


def test_no_value_both_folds_accept_keeps_the_shipped_one() -> None:
    a = _curves({0.0: range(10), 0.25: range(30), 0.5: range(12)})
    b = _curves({0.0: range(10), 0.5: range(12), 1.0: range(30)})
    both, _ = lt.agreed(_at(feedback=0.25), _at(feedback=1.0), SHIPPED, a, b)
    assert both.feedback == SHIPPED.feedback


def test_the_shipped_value_stays_when_both_folds_accept_it() -> None:
    # A gain within the noise of both folds (a question won, two lost and three won) does not
    # move a constant.
    a = _curves({0.0: range(20), 0.25: range(2, 23), 0.5: range(1, 22), 1.0: range(20),
                 1.5: range(20)})  # fmt: skip
    b = _curves({0.0: range(20), 0.25: range(20), 0.5: range(2, 23), 1.0: range(1, 22),
                 1.5: range(20)})  # fmt: skip
    both, _ = lt.agreed(_at(feedback=0.25), _at(feedback=0.5), SHIPPED, a, b)
    assert both.feedback == 0.0
