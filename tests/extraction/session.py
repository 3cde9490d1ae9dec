"""The offline rules on one made-up session: turns said a minute apart on Monday 2026-03-02."""

from __future__ import annotations

from datetime import UTC, datetime

from memd.core.models import ExtractedMemory, Turn
from memd.extraction.rules import extract_rules

TS = datetime(2026, 3, 2, 12, tzinfo=UTC).timestamp()  # Monday 2026-03-02, noon UTC


def extract(*texts: str) -> list[ExtractedMemory]:
    """What the rules extract from one session of these user turns."""
    turns = [Turn("ingest", "s1", f"t{i}", "user", t, TS + 60 * i) for i, t in enumerate(texts)]
    return extract_rules(turns, tz=UTC)


def said_under(key: str, *texts: str) -> list[tuple[str, str, str]]:
    """(turn, type, content) of the memories with subject `key`."""
    return [(m.source_turn_ids[0], m.type, m.content) for m in extract(*texts)
            if m.subject == key]  # fmt: skip
