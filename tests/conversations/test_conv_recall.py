"""Recall: trigger detection, topic terms, dates, the four scenarios, context and search."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.app import Engine
from memd.conversations.dates import date_windows
from memd.conversations.recall import detect_recall
from memd.conversations.turn_search import topic_terms
from memd.core.errors import InvalidParams, NotFound
from memd.core.settings import load
from memd.db import Store
from memd.memory.tree import create_tree
from tests.conversations.helpers import FIXTURES

NOW = dt.datetime(2026, 5, 10, 12, 0).timestamp()


@pytest.mark.parametrize(
    ("query", "keyword", "topic"),
    [
        ("之前聊过 Vue 吗", "之前", "Vue 吗"),
        ("/recall postgres migration", "/recall", "postgres migration"),
        ("/recall", "/recall", ""),
        ("Did we talk about Kyoto last time?", "last time", "Kyoto ?"),
        ("你还记得我提过的数据库方案吗", "记得", "你还 我 的数据库方案吗"),
        ("Remember when we fixed the login test?", "remember when", "we fixed the login test?"),
    ],
)
def test_recall_is_detected_by_command_and_keywords(query: str, keyword: str, topic: str) -> None:
    intent = detect_recall(query)
    assert intent is not None
    assert (intent.forced, intent.keyword, intent.topic) == (keyword == "/recall", keyword, topic)


@pytest.mark.parametrize(
    "query", ["How do I use Vue router?", "帮我写一个快速排序", "remember to buy milk", ""]
)
def test_ordinary_messages_do_not_trigger_recall(query: str) -> None:
    assert detect_recall(query) is None


@pytest.mark.parametrize(
    ("topic", "expected"),
    [
        ("Vue 吗", ["vue"]),
        ("we fixed the login test?", ["fixed", "login", "test"]),
        ("我们讨论的数据库迁移方案", ["数据库迁移方案"]),
        ("what did we talk about", []),
    ],
)
def test_topic_terms_drop_recall_filler(topic: str, expected: list[str]) -> None:
    assert topic_terms(topic) == expected


def _day(y: int, m: int, d: int) -> float:
    return dt.datetime(y, m, d, 12).timestamp()


@pytest.mark.parametrize(
    ("query", "inside", "outside"),
    [
        (
            "What did Maria do in December 2023?",
            [_day(2023, 12, 5), _day(2024, 1, 15)],
            [_day(2023, 11, 20)],
        ),
        ("What did Gina find on 1 February, 2023?", [_day(2023, 2, 2)], [_day(2023, 2, 10)]),
        (
            "When did Melanie go camping in June?",
            [_day(2023, 6, 9), _day(2025, 6, 30)],
            [_day(2023, 8, 1)],
        ),
        ("2024年3月的会议", [_day(2024, 3, 3)], [_day(2024, 5, 3)]),
        ("what happened on 2024-03-01", [_day(2024, 3, 2)], [_day(2024, 3, 10)]),
        (
            "what did we discuss yesterday",
            [_day(2026, 5, 9)],
            [_day(2026, 5, 10), _day(2026, 5, 7)],
        ),
        ("上周聊的", [_day(2026, 5, 4)], [_day(2026, 4, 20)]),
        ("no dates in here", [], [_day(2026, 5, 9)]),
    ],
)
def test_date_windows(query: str, inside: list[float], outside: list[float]) -> None:
    wins = date_windows(query, now=NOW)
    for t in inside:
        assert any(a <= t < b for a, b in wins), (query, dt.datetime.fromtimestamp(t))
    for t in outside:
        assert not any(a <= t < b for a, b in wins), (query, dt.datetime.fromtimestamp(t))


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("MEMD_LOGS_CLAUDE_CODE", "false")
    s = load()
    create_tree(s.memory_dir)
    (s.memory_dir / "topics" / "kyoto.md").write_text(
        "# Kyoto\n\n## Kyoto temples\n- Kinkaku-ji is best early, before the crowds\n"
    )
    store = Store.open(s.db_path)
    e = Engine(s, store)
    e.indexer.reconcile()
    res = e.handle("import", {"path": str(FIXTURES / "three_sessions.jsonl")})
    assert (res["format"], res["added"], res["sessions"]) == ("jsonl", 16, 3)
    yield e
    store.close()


def test_the_four_recall_scenarios(engine: Engine) -> None:
    res = engine.handle("recall", {"mode": "sessions"})
    assert [s["session_id"] for s in res["sessions"]] == ["trip-1", "pg-1", "vue-1"]
    assert all(s["summary"] for s in res["sessions"])
    assert "## Kyoto trip — 2026-04-20" in res["text"]

    res = engine.handle("recall", {"query": "Postgres foreign keys"})
    assert res["mode"] == "topic"
    (pg,) = [s for s in res["sessions"] if s["session_id"] == "pg-1"]
    assert res["sessions"][0]["session_id"] == "pg-1" and 1 <= len(pg["turns"]) <= 5
    assert any("NOT VALID" in t["text"] for t in pg["turns"])
    assert all(t["date"].startswith("2026-03-09") for t in pg["turns"])

    res = engine.handle("recall", {"session_id": "vue-1"})
    assert res["mode"] == "session" and len(res["sessions"][0]["turns"]) == 6
    assert res["sessions"][0]["title"] == "Vue 3 组件设计"

    res = engine.handle("recall", {"session_id": "vue-1", "query": "Pinia"})
    assert res["mode"] == "within"
    assert {t["session_id"] for t in res["sessions"][0]["turns"]} == {"vue-1"}
    assert "Pinia" in res["sessions"][0]["turns"][0]["text"]


def test_recall_explains_bad_requests(engine: Engine) -> None:
    with pytest.raises(InvalidParams, match="needs a session_id"):
        engine.handle("recall", {"mode": "within", "query": "x"})
    with pytest.raises(InvalidParams, match="needs a query"):
        engine.handle("recall", {"mode": "topic"})
    with pytest.raises(NotFound):
        engine.handle("recall", {"session_id": "nope"})


def test_context_recalls_the_vue_session_with_dates(engine: Engine) -> None:
    res = engine.handle("context", {"query": "之前聊过 Vue 吗"})
    conv = [s for s in res["sections"] if s["tier"] == "conversation"]
    assert conv and conv[0]["session_id"] == "vue-1"
    assert conv[0]["title"] == "Vue 3 组件设计 — 2026-03-02"
    assert "[2026-03-02 10:" in res["text"] and "Pinia 是 Vue 官方推荐的新状态库" in res["text"]
    assert "Postgres" not in res["text"]


def test_context_lists_recent_sessions_when_recall_has_no_topic(engine: Engine) -> None:
    res = engine.handle("context", {"query": "我们之前聊过什么？"})
    titles = [s["title"] for s in res["sections"] if s["tier"] == "conversation"]
    assert titles == [
        "Kyoto trip — 2026-04-20",
        "Postgres migration — 2026-03-09",
        "Vue 3 组件设计 — 2026-03-02",
    ]


def test_context_always_carries_the_current_session_summary(engine: Engine) -> None:
    res = engine.handle("context", {"query": "unrelated words", "session_id": "pg-1"})
    (cur,) = [s for s in res["sections"] if s["tier"] == "conversation"]
    assert cur["kind"] == "session-summary" and cur["title"].startswith(
        "This conversation so far: Postgres migration"
    )
    assert "Asked: How do I migrate the orders table" in res["text"]


def test_context_without_keywords_needs_a_strong_match(engine: Engine) -> None:
    strong = engine.handle(
        "context", {"query": "migrate orders table to Postgres with foreign keys"}
    )
    assert [s["session_id"] for s in strong["sections"] if s["tier"] == "conversation"] == ["pg-1"]
    weak = engine.handle("context", {"query": "Kyoto"})
    assert not [s for s in weak["sections"] if s["tier"] == "conversation"]
    assert any(s["tier"] == "user" and "kyoto.md" in s["path"] for s in weak["sections"])


def test_at_least_k_of_n_terms_is_an_or_of_and_subsets() -> None:
    from memd.conversations.turn_search import MAX_TERM_SUBSETS, _fts_match

    assert _fts_match(["vue", "pinia"], 1) == '"vue" OR "pinia"'
    assert _fts_match(["vue", "pinia", "store"], 2) == (
        '("vue" AND "pinia") OR ("vue" AND "store") OR ("pinia" AND "store")')  # fmt: skip
    # A long Chinese term is the OR of its bigrams inside each subset.
    assert _fts_match(["优化记忆", "vue"], 2) == '(("优化" OR "化记" OR "记忆") AND "vue")'
    many = [f"w{i}" for i in range(6)]  # C(6, 4) = 15 subsets: the plain OR is cheaper
    assert MAX_TERM_SUBSETS < 15 and _fts_match(many, 4) == " OR ".join(f'"{w}"' for w in many)
    assert _fts_match([], 2) == ""


def test_context_without_keywords_matches_words_not_parts_of_words(engine: Engine) -> None:
    # "race" is inside "trace": a turn about a trace context is not about a context race.
    engine.handle("ingest", {"turns": [
        {"session_id": "t-1", "role": "user", "content": "the trace context of the span was empty", "ts": 1_700_000_000},
    ]})  # fmt: skip
    got = engine.handle("context", {"query": "context race"})
    assert not [s for s in got["sections"] if s["tier"] == "conversation"]


def test_context_without_keywords_prefers_the_newest_matching_turns(engine: Engine) -> None:
    # Unasked, context takes the newest turns covering the query (a bounded search); asked
    # ("did we talk about …"), recall ranks the whole history.
    engine.handle("ingest", {"turns": [
        {"session_id": f"df-{i}", "role": "user", "content": f"pandas versus polars for arrow data, take {i}",
         "ts": 1_700_000_000 + i * 86400} for i in range(5)
    ]})  # fmt: skip
    got = engine.handle("context", {"query": "pandas polars arrow"})
    conv = [s["session_id"] for s in got["sections"] if s["tier"] == "conversation"]
    assert conv == ["df-4", "df-3", "df-2"]


def test_search_adds_turn_hits_after_sections(engine: Engine) -> None:
    hits = engine.handle("search", {"query": "Kyoto"})["hits"]
    kinds = [h["kind"] for h in hits]
    assert kinds[0] == "section" and "turn" in kinds
    assert kinds.index("turn") > max(i for i, k in enumerate(kinds) if k == "section")
    turn = next(h for h in hits if h["kind"] == "turn")
    assert (
        turn["session_title"] == "Kyoto trip"
        and turn["ts"] > 0
        and turn["path"].endswith("three_sessions.jsonl")
    )
    assert {
        h["kind"] for h in engine.handle("search", {"query": "Kyoto", "scope": "memory"})["hits"]
    } == {"section"}
    only = engine.handle(
        "search", {"query": "Kyoto", "scope": "conversations", "agent_id": "muse"}
    )["hits"]
    assert only and {h["session_id"] for h in only} == {"trip-1"}
    with pytest.raises(InvalidParams):
        engine.handle("search", {"query": "Kyoto", "scope": "everything"})


def test_conversations_survive_a_full_rebuild_of_the_index(engine: Engine) -> None:
    before = engine.handle("search", {"query": "pgloader", "scope": "conversations"})["hits"]
    engine.handle("reindex", {"full": True})
    after = engine.handle("search", {"query": "pgloader", "scope": "conversations"})["hits"]
    assert before and [h["turn_id"] for h in after] == [h["turn_id"] for h in before]
    assert engine.handle("recall", {"mode": "sessions"})["sessions"][0]["summary"]
