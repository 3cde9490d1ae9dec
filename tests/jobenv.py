"""Job test fixtures: a real Engine on a temp MEMD_HOME, a fake clock, turns in SQLite.

Only time and the network are fake: the clock is a callable the jobs receive as `now`, and the
Anthropic API is `tests.fakes.anthropic_server.FakeAnthropic` on 127.0.0.1.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.app import Engine
from memd.conversations.ingest import write_turns
from memd.core.conditions import SystemState
from memd.core.models import Turn
from memd.core.settings import load
from memd.db import Store
from memd.memory.jobs import JobContext
from memd.memory.parse import split_item
from memd.memory.tree import create_tree
from tests.fakes.anthropic_server import FakeAnthropic

# Assembled at run time: never a real-looking key in the repository.
API_KEY = "sk-ant-" + "api03-" + "jobs" * 24 + "AA"
MODEL = "claude-test-model"
START = dt.datetime(2026, 3, 2, 10, 0).timestamp()  # a Monday, local time
AC_IDLE = SystemState(None, None, 0.1, 8)


class Clock:
    """A settable `now()`."""

    def __init__(self, t: float = START) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, *, days: float = 0, minutes: float = 0) -> float:
        self.t += days * 86400 + minutes * 60
        return self.t

    def date(self) -> dt.date:
        return dt.datetime.fromtimestamp(self.t).date()

    def day(self) -> str:
        return self.date().isoformat()


class Env:
    """An Engine with its store and tree, and helpers to feed turns and run jobs."""

    def __init__(self, engine: Engine, clock: Clock) -> None:
        self.engine = engine
        self.clock = clock
        self.settings = engine.settings
        self.probe = lambda: AC_IDLE
        self._turn = 0

    @property
    def memory(self) -> Path:
        return self.engine.settings.memory_dir

    def use(self, **changes: Any) -> None:
        """Change settings (dataclass field names) for the following runs."""
        self.settings = dataclasses.replace(self.settings, **changes)

    def online(self, server: FakeAnthropic, **changes: Any) -> None:
        self.use(**{"extract_api_key": API_KEY, "extract_base_url": server.base_url, "extract_model": MODEL,
                    "extract_timeout_s": 5.0, **changes})  # fmt: skip

    def ctx(self) -> JobContext:
        e = self.engine
        return JobContext(
            self.settings, e.store, e.indexer, e.ops, now=self.clock, probe=self.probe
        )

    def say(
        self, session: str, *texts: str, role: str = "user", project: str = "", gap_s: float = 30
    ) -> list[str]:
        """Add turns to a session, `gap_s` apart, ending at the clock's now; return their ids."""
        turns = []
        ids = []
        for i, text in enumerate(texts):
            self._turn += 1
            tid = f"t{self._turn}"
            ids.append(tid)
            ts = self.clock() - gap_s * (len(texts) - 1 - i)
            turns.append(Turn("ingest", session, tid, role, text, ts, project=project))
        self.engine.store.w.run(lambda c: write_turns(c, turns, now=self.clock()))
        return ids

    def cursor(self, session: str) -> int:
        row = (
            self.engine.store.read()
            .execute("SELECT extracted_upto FROM sessions WHERE session_id = ?", (session,))
            .fetchone()
        )
        return int(row[0])

    def max_turn(self, session: str) -> int:
        row = (
            self.engine.store.read()
            .execute("SELECT max(id) FROM turns WHERE session_id = ?", (session,))
            .fetchone()
        )
        return int(row[0])

    def read(self, rel: str) -> str:
        p = self.memory / rel
        return p.read_text(encoding="utf-8") if p.exists() else ""


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: Clock) -> Iterator[Env]:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    s = load()
    create_tree(s.memory_dir)
    store = Store.open(s.db_path)
    engine = Engine(s, store)
    engine.indexer.reconcile()
    try:
        yield Env(engine, clock)
    finally:
        store.close()


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def file_items(env: Env, rel: str) -> list[tuple[str, dict[str, str]]]:
    """(text, metadata) of every list item of a memory file."""
    out = []
    for line in env.read(rel).split("\n"):
        it = split_item(line)
        if it is not None and it[0]:
            out.append(it)
    return out


def item_meta(env: Env, rel: str, text: str) -> dict[str, str]:
    """The metadata of the one item with this text (fails when there is not exactly one)."""
    found = [m for t, m in file_items(env, rel) if t == text]
    assert len(found) == 1, (text, env.read(rel))
    return found[0]
