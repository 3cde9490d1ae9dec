"""Helpers of the conversation tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memd.core.models import Turn
from memd.db import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs"


def turn(session: str, tid: str, role: str, text: str, ts: float, **kw: Any) -> Turn:
    return Turn("ingest", session, tid, role, text, ts, **kw)


def rows(store: Store, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.read().execute(sql, params).fetchall()]
