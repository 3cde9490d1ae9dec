"""Turn times: epoch seconds, ms, µs and ns by magnitude, ISO strings; anything else refused with
-32602 naming the field; a stored out-of-range time never breaks a read path."""

from __future__ import annotations

import datetime as dt
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core.errors import InvalidParams
from memd.db import Store
from tests.utils import DaemonProcess, wait_for

WHEN = dt.datetime(2026, 5, 4, 12, 30, tzinfo=dt.UTC).timestamp()


READABLE: list[tuple[object, float]] = [
    (WHEN, WHEN),
    (int(WHEN * 1e3), WHEN),
    (int(WHEN * 1e6), WHEN),
    (int(WHEN * 1e9), WHEN),
    ("2026-05-04T12:30:00Z", WHEN),
    ("2026-05-04T14:30:00+02:00", WHEN),
    (str(int(WHEN * 1e6)), WHEN),
]


@pytest.fixture(scope="module")
def times_daemon() -> Iterator[DaemonProcess]:
    """One daemon for the readable times, each case in a session of its own (not the module's
    daemon: the refusals below check that it holds no session at all)."""
    with tempfile.TemporaryDirectory(prefix="memd-m-", dir="/tmp") as d:
        shared = DaemonProcess(Path(d)).start()
        yield shared
        shared.stop()


@pytest.mark.parametrize(("ts", "seconds"), READABLE)
def test_epoch_units_and_iso_strings_are_read(
    times_daemon: DaemonProcess, ts: object, seconds: float
) -> None:
    session = f"when-{READABLE.index((ts, seconds))}"
    times_daemon.call(
        "ingest", {"session_id": session, "id": "t", "role": "user", "content": "magpie", "ts": ts}
    )
    (t,) = times_daemon.call("recall", {"session_id": session})["sessions"][0]["turns"]
    assert abs(t["ts"] - seconds) < 1e-3


@pytest.mark.parametrize(
    "ts",
    [
        1e22,
        -5,
        "next tuesday",
        True,
        [1],
        {"s": 1},
        "9999999999999999999999",
        "0001-01-01T00:00:00",
    ],
)
def test_other_times_are_refused_naming_the_field(module_daemon: DaemonProcess, ts: object) -> None:
    with pytest.raises(InvalidParams, match=r"turns\[1\]\.ts"):
        module_daemon.call("ingest", {"turns": [
            {"session_id": "bad", "role": "user", "content": "fine"},
            {"session_id": "bad", "role": "user", "content": "magpie", "ts": ts},
        ]})  # fmt: skip
    assert module_daemon.call("recall", {"mode": "sessions"})["sessions"] == []


def test_a_stored_out_of_range_time_breaks_no_read_path(home: Path, tmp_path: Path) -> None:
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false", MEMD_LOGS_POLL_S="0.2").start()
    now = time.time()
    try:
        d.call("ingest", {"turns": [
            {"session_id": "ok", "id": "q", "role": "user", "content": "heron nesting season", "ts": now - 60},
            {"session_id": "ok", "id": "a", "role": "assistant", "content": "heron eggs hatch", "ts": now - 50},
            {"session_id": "odd", "id": "q", "role": "user", "content": "heron migration route", "ts": now - 40},
            {"session_id": "odd", "id": "a", "role": "assistant", "content": "heron flies south", "ts": now - 30},
        ]})  # fmt: skip
    finally:
        assert d.stop() == 0
    # What an older memd stored for a time sent in microseconds (the year 58865), and what a
    # hand-made or damaged row may hold.
    with sqlite3.connect(home / "data" / "index.db") as conn:
        conn.execute(
            "UPDATE turns SET ts = ? WHERE session_id = 'odd' AND turn_id = 'q'", (now * 1e6,)
        )
        conn.execute(
            "UPDATE turns SET ts = ? WHERE session_id = 'odd' AND turn_id = 'a'", (-1e300,)
        )
        conn.execute("UPDATE sessions SET started_at = ?, updated_at = ?, journal_upto = 0,"
                     " summary_upto = 0, summary = '' WHERE session_id = 'odd'", (now * 1e6, now * 1e6))  # fmt: skip
    d.start()
    try:
        sessions = d.call("recall", {"mode": "sessions"})["sessions"]
        assert {s["session_id"] for s in sessions} == {"ok", "odd"}
        assert d.call("recall", {"query": "heron"})["sessions"]
        assert d.call("recall", {"session_id": "odd"})["sessions"][0]["turns"]
        assert (
            "heron"
            in d.call("context", {"query": "did we talk about heron migration before"})["text"]
        )
        assert d.call("search", {"query": "heron", "scope": "conversations"})["hits"]
        for job in ("extract", "summarize"):
            res = d.call("run_job", {"name": job})
            assert res["outcome"] in ("success", "nothing_to_do"), res
        out = tmp_path / "export.json"
        assert d.cli("export", str(out), "--no-tree").returncode == 0
        time.sleep(1.0)  # a few journal catch-up polls
        log = d.log.read_text()
        assert "Traceback" not in log and "year" not in log, log[-2000:]
        assert wait_for(lambda: d.call("status")["logs"]["turns"] == 4)
    finally:
        d.stop()


def test_the_index_repairs_times_stored_in_other_units(tmp_path: Path) -> None:
    """Rows written by an older memd: µs and ns read as seconds, their sessions' times too."""
    path = tmp_path / "index.db"
    store = Store.open(path)

    def older(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO turns(session_id, turn_id, role, text, ts) VALUES"
                  " ('s', 'a', 'user', 'one', ?), ('s', 'b', 'assistant', 'two', ?),"
                  " ('s', 'c', 'user', 'three', ?)", (WHEN * 1e6, WHEN * 1e9 + 5e9, 1e300))  # fmt: skip
        c.execute("INSERT INTO sessions(session_id, source, started_at, updated_at, turn_count)"
                  " VALUES ('s', 'ingest', ?, ?, 3)", (WHEN * 1e6, 1e300))  # fmt: skip
        c.execute("DELETE FROM _memd_migrations WHERE name = 'm070_conversation_repairs'")

    store.w.run(older)
    store.close()
    store = Store.open(path)
    try:
        rows = store.read().execute("SELECT turn_id, ts FROM turns ORDER BY turn_id").fetchall()
        got = {r[0]: r[1] for r in rows}
        assert abs(got["a"] - WHEN) < 1e-3 and abs(got["b"] - WHEN - 5) < 1e-3 and got["c"] == 0
        started, updated = (
            store.read()
            .execute("SELECT started_at, updated_at FROM sessions WHERE session_id = 's'")
            .fetchone()
        )
        assert abs(started - WHEN) < 1e-3 and abs(updated - WHEN - 5) < 1e-3
    finally:
        store.close()


def test_a_session_with_an_out_of_range_time_is_still_synced(tmp_path: Path) -> None:
    """Session summaries are synced as documents that carry their start time."""
    from memd.app import Engine
    from memd.core.settings import load
    from memd.memory.tree import create_tree
    from tests.fakes.postgrest_server import FakePostgrest

    key = "sb_secret_" + "t" * 30
    with FakePostgrest(api_key=key) as server:
        s = load(env={"MEMD_HOME": str(tmp_path / "h")},
                 overrides={"sync.backend": "supabase", "sync.url": server.url, "sync.key": key,
                            "sync.user_id": "alice", "sync.summaries": True, "sync.push_delay_s": 0.0})  # fmt: skip
        create_tree(s.memory_dir)
        store = Store.open(s.db_path)
        engine = Engine(s, store)
        try:
            engine.handle("ingest", {"turns": [
                {"session_id": "odd", "id": "q", "role": "user", "ts": WHEN,
                 "content": "How deep do great crested grebes dive when they hunt for fish?"},
                {"session_id": "odd", "id": "a", "role": "assistant", "ts": WHEN + 1,
                 "content": "Great crested grebes usually dive two to four metres to catch small fish."},
            ]})  # fmt: skip
            store.w.run(lambda c: c.execute("UPDATE sessions SET started_at = ?", (WHEN * 1e6,)))
            res = engine.handle("sync_now", {})
            assert res["outcome"] == "success", res
            assert [r["path"] for r in server.rows() if r["path"].startswith("_sessions/")] == [
                "_sessions/odd.md"
            ]
        finally:
            for f in engine.features:
                if f.name == "sync":
                    for stop in f.on_stop:
                        stop()
            store.close()
