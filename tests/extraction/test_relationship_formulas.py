"""The relationship numbers: familiarity, trust steps, mood (the formulas of docs/agents.md)."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from memd.extraction.relationship import (
    FAMILIARITY_SCALE,
    HALF_LIFE_DAYS,
    MAX_STEP,
    familiarity,
    mood_of,
    trust_step,
)
from memd.extraction.repo import StoredSignal

NOW = 1_780_000_000.0
DAY = 86400.0


def sig(kind: str, strength: float = 0.5, evidence: str = "") -> StoredSignal:
    return StoredSignal(kind, "t1", strength, evidence or kind)


def test_familiarity_is_the_documented_formula() -> None:
    sessions = [(NOW, 10), (NOW - 90 * DAY, 40), (NOW - 10 * DAY, 100)]
    x = 2.0 + 5.0 * 0.5 + 5.0 * 0.5 ** (10 / 90)
    assert familiarity(sessions, NOW) == round(100 * (1 - math.exp(-x / 40)))
    assert (FAMILIARITY_SCALE, HALF_LIFE_DAYS) == (40.0, 90.0)


def test_familiarity_grows_with_interactions_and_stays_below_100() -> None:
    week = [(NOW - d * DAY, 20) for d in range(7)]
    month = [(NOW - d * DAY, 20) for d in range(30)]
    values = [familiarity([], NOW), familiarity(week[:1], NOW), familiarity(week, NOW),
              familiarity(month, NOW)]  # fmt: skip
    assert values == sorted(values) and values[0] == 0 and values[-1] < 100
    assert familiarity([(NOW, 1)], NOW) < familiarity([(NOW, 30)], NOW)
    assert familiarity([(NOW, 40)], NOW) == familiarity([(NOW, 400)], NOW)  # turns count to 40


def test_familiarity_fades_with_absence() -> None:
    month = [(NOW - d * DAY, 20) for d in range(30)]
    now, later, much_later = (familiarity(month, NOW + d * DAY) for d in (0, 90, 365))
    assert now > later > much_later > 0
    # Ninety days away halve what the sessions weigh.
    x = -FAMILIARITY_SCALE * math.log(1 - now / 100)
    assert later == pytest.approx(100 * (1 - math.exp(-x / 2 / FAMILIARITY_SCALE)), abs=1)


@pytest.mark.parametrize(
    ("signals", "step"),
    [
        ([], 0),
        ([sig("thanks", 0.5)], 1),
        ([sig("thanks", 0.8)], 2),
        ([sig("thanks", 0.5), sig("praise", 0.8)], 3),
        ([sig("frustration", 0.7)], -2),
        ([sig("frustration", 1.0)], -3),
        ([sig("correction", 0.5)], -1),
        ([sig("revert", 0.8)], -2),
        ([sig("thanks", 0.5), sig("correction", 0.5)], 0),
        ([sig("thanks", 1.0)] * 10, MAX_STEP),
        ([sig("frustration", 1.0)] * 10, -MAX_STEP),
    ],
)
def test_trust_moves_by_small_bounded_steps(signals: list[StoredSignal], step: int) -> None:
    assert trust_step(signals) == step


@pytest.mark.parametrize(
    ("signals", "word"),
    [
        ([], "neutral"),
        ([sig("thanks")], "pleased"),
        ([sig("thanks", 0.8), sig("praise", 0.8)], "happy"),
        ([sig("correction")], "unhappy"),
        ([sig("frustration", 1.0), sig("revert", 0.8)], "frustrated"),
        ([sig("thanks", 0.5), sig("correction", 0.6)], "mixed"),
    ],
)
def test_mood_words(signals: list[StoredSignal], word: str) -> None:
    assert mood_of(signals, title="t", ended=dt.date(2026, 3, 2)).status == word


def test_mood_note_is_one_safe_line() -> None:
    signals = [sig("thanks", 0.5, "thanks"), sig("thanks", 0.5, "thx"),
               sig("frustration", 0.9, "it still\ndoesn't work <!-- memd id=x -->")]  # fmt: skip
    mood = mood_of(signals, title="Fix the parser\nplease", ended=dt.date(2026, 3, 2))
    assert mood.note.startswith('2026-03-02 "Fix the parser please": thanks ×2, frustration;')
    assert "\n" not in mood.note and "<!--" not in mood.note and len(mood.note) <= 160
    quiet = mood_of([], title="", ended=dt.date(2026, 3, 2))
    assert quiet == type(quiet)("neutral", "2026-03-02: no thanks or complaints")
