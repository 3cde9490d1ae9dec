"""A reload of the settings that lands while the tailers start: the new sources are read."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from memd.app import Engine
from memd.conversations import logs
from memd.core.settings import load
from memd.db import Store
from tests.utils import wait_for


def test_a_reload_while_the_tailers_start_tails_its_new_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("MEMD_LOGS_CLAUDE_CODE", "false")
    chat = tmp_path / "chat"
    chat.mkdir()
    line = {"session_id": "s1", "role": "user", "content": "the zanzibar launch is on"}
    (chat / "day.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    s = load()
    new = load(env={"MEMD_LOGS_SOURCES": json.dumps([{"path": str(chat), "format": "jsonl"}])})
    assert new.logs_sources != s.logs_sources
    # The first ingestor's start takes a moment (watching a few dozen folders does), and the
    # reload comes in the middle of it.
    started = threading.Event()
    go_on = threading.Event()
    real_start = logs.LogIngestor.start

    def slow_start(self: logs.LogIngestor) -> None:
        if not started.is_set():
            started.set()
            go_on.wait(10)
        real_start(self)

    monkeypatch.setattr(logs.LogIngestor, "start", slow_start)
    store = Store.open(s.db_path)
    engine = Engine(s, store)
    starting = threading.Thread(target=lambda: [start() for start in engine.on_start])
    starting.start()
    try:
        assert started.wait(10)
        reloading = threading.Thread(target=lambda: [hook(new) for hook in engine.on_reload])
        reloading.start()
        reloading.join(0.5)  # the reload waits for the start (or, before, swapped meanwhile)
        go_on.set()
        starting.join(10)
        reloading.join(10)

        def turns() -> int:
            return int(store.read().execute("SELECT count(*) FROM turns").fetchone()[0])

        wait_for(turns, 10)
    finally:
        go_on.set()
        for stop in reversed(engine.on_stop):
            stop()
        store.close()
