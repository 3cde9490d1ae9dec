"""PURE: the numbers of an agent's relationship with the user (docs/agents.md has the formulas).

- **Familiarity** (0–100) grows with interactions and fades with absence. Each session (a
  sub-agent run counts as one) weighs `SESSION_WEIGHT + TURN_WEIGHT × min(turns,
  TURNS_COUNTED)`, halved for every `HALF_LIFE_DAYS` since its last turn; with `x` the sum,
  familiarity is `100 × (1 − e^(−x / FAMILIARITY_SCALE))`, rounded.
- **Trust** (0–100, `TRUST_START` at first) moves once per finished session by a step made of
  the session's signals: `points = Σ SIGNAL_WEIGHTS[kind] × strength`, the step is
  `STEP_PER_POINT × points` rounded half away from zero, within ±`MAX_STEP`.
- **Mood** is the latest finished session's: the same points, split into praise (thanks,
  praise) and complaint (the rest), give one word, and the signals a one-line note.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Iterable, Sequence

from memd.core.text import shorten
from memd.extraction.repo import StoredSignal
from memd.extraction.rules import SignalKind
from memd.memory.relationship import Mood

FAMILIARITY_SCALE = 40.0
HALF_LIFE_DAYS = 90.0
SESSION_WEIGHT = 1.0
TURN_WEIGHT = 0.1
TURNS_COUNTED = 40

SIGNAL_WEIGHTS: dict[str, float] = {
    SignalKind.THANKS: 1.0,
    SignalKind.PRAISE: 1.0,
    SignalKind.FRUSTRATION: -1.5,
    SignalKind.CORRECTION: -0.75,
    SignalKind.REVERT: -1.0,
}
STEP_PER_POINT = 2.0
MAX_STEP = 5
# Mood words by the session's points: at or past ±STRONG_MOOD the strong word.
STRONG_MOOD = 1.5
MIXED_BAND = 0.5
NOTE_CHARS = 160
EVIDENCE_CHARS = 60
TITLE_CHARS = 50


def session_weight(turns: int) -> float:
    """What one session adds to familiarity before it fades."""
    return SESSION_WEIGHT + TURN_WEIGHT * min(max(turns, 0), TURNS_COUNTED)


def familiarity(sessions: Iterable[tuple[float, int]], now: float) -> int:
    """Familiarity from (last turn time, turns) per session, as of `now` (epoch seconds)."""
    x = 0.0
    for last, turns in sessions:
        days = max(0.0, now - last) / 86400
        x += session_weight(turns) * 0.5 ** (days / HALF_LIFE_DAYS)
    return round(100 * (1 - math.exp(-x / FAMILIARITY_SCALE)))


def points(signals: Iterable[StoredSignal]) -> float:
    """The weighted sum of a session's signals (positive: pleased, negative: displeased)."""
    return sum(SIGNAL_WEIGHTS.get(s.kind, 0.0) * s.strength for s in signals)


def trust_step(signals: Sequence[StoredSignal]) -> int:
    """How far one session moves trust: a whole number within ±MAX_STEP."""
    raw = STEP_PER_POINT * points(signals)
    step = int(math.floor(abs(raw) + 0.5))
    return int(math.copysign(min(step, MAX_STEP), raw)) if step else 0


def mood_of(signals: Sequence[StoredSignal], *, title: str, ended: dt.date) -> Mood:
    """A finished session's mood and its one-line note."""
    praise = sum(SIGNAL_WEIGHTS.get(s.kind, 0.0) * s.strength for s in signals if _good(s))
    blame = -sum(SIGNAL_WEIGHTS.get(s.kind, 0.0) * s.strength for s in signals if not _good(s))
    net = praise - blame
    if not signals:
        word = "neutral"
    elif praise and blame and abs(net) < MIXED_BAND:
        word = "mixed"
    elif net > 0:
        word = "happy" if net >= STRONG_MOOD else "pleased"
    else:
        word = "frustrated" if net <= -STRONG_MOOD else "unhappy"
    where = f'{ended.isoformat()} "{shorten(title, TITLE_CHARS)}"' if title else ended.isoformat()
    if not signals:
        return Mood(word, _one_line(f"{where}: no thanks or complaints"))
    counts = Counter(s.kind for s in signals)
    kinds = ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in counts.items())
    strongest = max(signals, key=lambda s: abs(SIGNAL_WEIGHTS.get(s.kind, 0.0)) * s.strength)
    quote = shorten(" ".join(strongest.evidence.split()), EVIDENCE_CHARS)
    note = f'{where}: {kinds}; "{quote}"' if quote else f"{where}: {kinds}"
    return Mood(word, _one_line(note))


def _one_line(text: str) -> str:
    # A note is one list item of the file: no comment a parser could take for memd's metadata.
    return shorten(text.replace("<!--", "").replace("-->", ""), NOTE_CHARS)


def _good(s: StoredSignal) -> bool:
    return SIGNAL_WEIGHTS.get(s.kind, 0.0) > 0
