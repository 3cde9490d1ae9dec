"""What text is embedded for a conversation turn: the turn, or the turn with its neighbours.

Evidence in a conversation often spans adjacent turns: a question is asked in one turn and
answered in the next, and "it" in a reply names what the previous turn said. Embedding a
turn together with the turn before it gives the vector that context. `bench/semantic_eval.py`
measures each shape on held-out conversations; `docs/retrieval.md` says which one is used.

Pure functions, no numpy: the text to embed is decided where turns are stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn as the passage builder sees it: who spoke and what was said."""

    speaker: str
    text: str


# Each neighbour is cut to this many characters: it gives context, the turn itself is the
# passage. e5 reads ~512 tokens; three turns of LoCoMo's length fit well inside.
NEIGHBOUR_CHARS = 300


def turn_line(turn: Turn, limit: int | None = None) -> str:
    """``speaker: text`` (the text cut to `limit` characters at a word boundary)."""
    text = " ".join(turn.text.split())
    if limit is not None and len(text) > limit:
        cut = text[:limit]
        space = cut.rfind(" ")
        text = (cut[:space] if space > limit // 2 else cut) + " …"
    return f"{turn.speaker}: {text}" if turn.speaker else text


def turn_passages(
    turns: Sequence[Turn],
    *,
    before: int = 0,
    after: int = 0,
    neighbour_chars: int = NEIGHBOUR_CHARS,
) -> list[str]:
    """One passage per turn of one session (in order): the turn's line, preceded by up to
    `before` and followed by up to `after` neighbouring lines of the same session.

    Neighbours are cut to `neighbour_chars`; the turn itself is never cut here (the
    embedder caps the whole passage). With ``before=after=0`` each passage is the turn's line.
    """
    lines = [turn_line(t) for t in turns]
    short = [turn_line(t, neighbour_chars) for t in turns]
    out: list[str] = []
    for i in range(len(turns)):
        parts = short[max(0, i - before) : i] + [lines[i]] + short[i + 1 : i + 1 + after]
        out.append("\n".join(parts))
    return out
