"""Storing turns: idempotency, split messages, sessions, titles, redaction, summaries."""

from __future__ import annotations

import functools

from memd.conversations.ingest import refresh_summary, set_title, summary_due, write_turns
from memd.conversations.summary import summarize
from memd.db import Store
from tests.conversations.helpers import rows, turn

T0 = 1_750_000_000.0


def test_the_same_turns_twice_are_stored_once(store: Store) -> None:
    batch = [turn("s1", "t1", "user", "How do I set up Vue routing?", T0),
             turn("s1", "t2", "assistant", "Use vue-router with createRouter.", T0 + 5)]  # fmt: skip
    first = store.w.run(lambda c: write_turns(c, batch))
    again = store.w.run(lambda c: write_turns(c, batch))
    assert (first.added, first.updated, first.sessions) == (2, 0, {"s1"})
    assert (again.added, again.updated, again.sessions) == (0, 0, set())
    assert rows(store, "SELECT turn_id, role FROM turns ORDER BY id") == [
        ("t1", "user"),
        ("t2", "assistant"),
    ]
    assert rows(store, "SELECT turn_count, started_at, updated_at FROM sessions") == [
        (2, T0, T0 + 5)
    ]


def test_a_changed_text_updates_the_turn_and_its_search_entry(store: Store) -> None:
    store.w.run(
        lambda c: write_turns(c, [turn("s1", "t1", "user", "first draft about pandas", T0)])
    )
    rep = store.w.run(
        lambda c: write_turns(c, [turn("s1", "t1", "user", "final text about polars", T0)])
    )
    assert (rep.added, rep.updated) == (0, 1)
    match = "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?"
    assert rows(store, match, "polars") == [(1,)]
    assert rows(store, match, "pandas") == [(0,)]
    assert rows(store, "SELECT turn_count FROM sessions") == [(1,)]


def test_parts_of_a_split_message_join_in_log_order_whenever_they_arrive(store: Store) -> None:
    a = turn("s1", "msg_1", "assistant", "Part A.", T0, part_id="uuid-a", line=3)
    b = turn("s1", "msg_1", "assistant", "Part B.", T0 + 1, part_id="uuid-b", line=5)
    c_ = turn("s1", "msg_1", "assistant", "Part C.", T0 + 2, part_id="uuid-c", line=7)
    store.w.run(lambda c: write_turns(c, [b]))
    store.w.run(lambda c: write_turns(c, [c_, a]))
    store.w.run(lambda c: write_turns(c, [a, b, c_]))  # a re-read changes nothing
    assert rows(store, "SELECT text FROM turns") == [("Part A.\n\nPart B.\n\nPart C.",)]
    assert rows(store, "SELECT count(*) FROM turn_parts") == [(3,)]
    assert rows(store, "SELECT turn_count FROM sessions") == [(1,)]


def test_secrets_and_private_spans_never_reach_the_tables(store: Store) -> None:
    key = "sk-ant-api03-" + "x" * 93 + "AA"
    text = f"my key is {key} <private>my diary entry</private> and that is all"
    store.w.run(
        lambda c: write_turns(c, [turn("s1", "t1", "user", text, T0, session_title=f"title {key}")])
    )
    stored = rows(store, "SELECT text FROM turns")[0][0]
    assert key not in stored and "diary" not in stored and "[REDACTED:anthropic-key:" in stored
    assert key not in rows(store, "SELECT title FROM sessions")[0][0]
    assert rows(store, "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'diary'") == [(0,)]


def test_a_turn_without_time_gets_the_write_time(store: Store) -> None:
    store.w.run(
        lambda c: write_turns(c, [turn("s1", "t1", "user", "no clock here", 0.0)], now=T0 + 99)
    )
    assert rows(store, "SELECT ts FROM turns") == [(T0 + 99,)]


def test_session_title_comes_from_the_best_source(store: Store) -> None:
    store.w.run(
        lambda c: write_turns(
            c, [turn("s1", "t1", "user", "Plan a three day trip to Kyoto please", T0)]
        )
    )
    assert rows(store, "SELECT title, title_source FROM sessions") == [
        ("Plan a three day trip to Kyoto please", "first")
    ]
    store.w.run(
        lambda c: write_turns(
            c, [turn("s1", "t2", "user", "and Nara?", T0 + 1, session_title="Kyoto")]
        )
    )
    assert rows(store, "SELECT title, title_source FROM sessions") == [("Kyoto", "log")]
    assert store.w.run(lambda c: set_title(c, "s1", "Kyoto and Nara itinerary", "summary"))
    store.w.run(
        lambda c: write_turns(c, [turn("s1", "t3", "user", "ok", T0 + 2, session_title="Other")])
    )
    assert rows(store, "SELECT title, title_source FROM sessions") == [
        ("Kyoto and Nara itinerary", "summary")
    ]
    assert not store.w.run(lambda c: set_title(c, "s1", "later log title", "log"))


def test_sessions_keep_agent_project_and_source(store: Store) -> None:
    t = turn(
        "s9",
        "t1",
        "user",
        "hello there",
        T0,
        agent_id="muse",
        project="shop",
        source_path="/logs/a.jsonl",
    )
    store.w.run(lambda c: write_turns(c, [t]))
    assert rows(store, "SELECT source, source_path, agent_id, project FROM sessions") == [
        ("ingest", "/logs/a.jsonl", "muse", "shop")
    ]
    assert rows(store, "SELECT source_path, agent_id, project FROM turns") == [
        ("/logs/a.jsonl", "muse", "shop")
    ]


def test_summary_grows_with_the_session_and_an_llm_summary_is_kept(store: Store) -> None:
    texts = [
        ("user", "How should I migrate the orders table from MySQL to Postgres?"),
        (
            "assistant",
            "Dump the orders table with mysqldump and load it with pgloader into Postgres.",
        ),
        ("user", "Will the Postgres migration keep the foreign keys of the orders table?"),
        ("assistant", "pgloader keeps foreign keys; check them after the migration with a query."),
    ]
    for i, (role, text) in enumerate(texts):
        store.w.run(functools.partial(write_turns, turns=[turn("pg", f"t{i}", role, text, T0 + i)]))
    summary, kind, upto = rows(store, "SELECT summary, summary_kind, summary_upto FROM sessions")[0]
    assert kind == "extractive" and upto == 4
    assert summary.startswith("Asked: How should I migrate the orders table")
    store.w.run(
        lambda c: c.execute("UPDATE sessions SET summary = 'LLM words', summary_kind = 'llm'")
    )
    store.w.run(lambda c: write_turns(c, [turn("pg", f"t{i}", "user", f"more about orders {i}", T0 + 10 + i)
                                          for i in range(10, 20)]))  # fmt: skip
    assert not store.w.run(lambda c: refresh_summary(c, "pg", now=T0, force=True))
    assert rows(store, "SELECT summary, summary_kind FROM sessions") == [("LLM words", "llm")]


def test_summary_is_rebuilt_less_often_as_the_session_gets_long() -> None:
    assert not summary_due(1, 0)
    assert summary_due(2, 0)
    assert not summary_due(21, 20)
    assert summary_due(25, 20)
    assert not summary_due(400, 380)
    assert summary_due(405, 380)


def test_extractive_summary_keeps_the_opening_and_skips_greetings() -> None:
    turns = [
        ("user", "hi"),
        ("user", "我想优化数据库迁移的性能，数据库有两亿行。"),
        ("assistant", "可以先按主键分批迁移数据库，每批十万行。"),
        ("user", "thanks"),
        ("assistant", "分批迁移数据库时记得关闭索引，迁移完再重建索引。"),
    ]
    out = summarize(turns)
    assert out.startswith("Asked: 我想优化数据库迁移的性能")
    assert "thanks" not in out and "hi" not in out.split()
    assert "数据库" in out.split("Asked:")[1]
    assert summarize([("user", "ok"), ("assistant", "thanks!")]) == ""
    long = summarize(
        [("user", "word " * 400 + "end.")]
        + [("assistant", f"point {i} about caching layers.") for i in range(30)]
    )
    assert len(long) <= 600
