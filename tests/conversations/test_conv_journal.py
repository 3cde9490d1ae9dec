"""The journal: exchanges planned once, grouped by session per day, hand edits kept."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memd.app import Engine
from memd.conversations.ingest import write_turns
from memd.conversations.journal import (
    ANSWER_CHARS,
    QUESTION_CHARS,
    Entry,
    JournalTurn,
    add_entries,
    plan_entries,
    short,
    write_journal,
)
from memd.core.settings import load
from memd.db import Store
from memd.history import Cause
from memd.memory.files import MemoryFiles
from tests.conversations.helpers import rows, turn

T0 = dt.datetime(2026, 3, 14, 9, 30).timestamp()


def _add(folder: Path, entries: list[Entry]) -> int:
    """`add_entries` through a door to `folder`, as one coalesced journal operation."""
    files = MemoryFiles([folder])
    with files.operation(Cause.JOURNAL, coalesce=True) as op:
        return add_entries(files, folder, entries, op)


def jt(rowid: int, role: str, text: str, ts: float = T0) -> JournalTurn:
    return JournalTurn(rowid, f"t{rowid}", role, text, ts)


@pytest.mark.parametrize(
    ("turns", "questions", "upto"),
    [
        ([], [], 0),
        ([jt(1, "user", "q1")], [], 0),  # the answer may still come
        ([jt(1, "user", "q1"), jt(2, "assistant", "a1")], [("q1", "a1")], 2),
        ([jt(1, "user", "q1"), jt(2, "assistant", "a1"), jt(3, "assistant", "a2"), jt(4, "user", "q2")],
         [("q1", "a1 a2")], 3),
        ([jt(1, "user", "q1"), jt(2, "user", "q2"), jt(3, "assistant", "a2")], [("q1", ""), ("q2", "a2")], 3),
        ([jt(5, "assistant", "continuation"), jt(6, "user", "q3")], [], 5),
        ([jt(1, "user", "old", T0 - 10 * 86400), jt(2, "assistant", "a"), jt(3, "user", "new"), jt(4, "assistant", "b")],
         [("new", "b")], 4),
    ],
)  # fmt: skip
def test_plan_entries(
    turns: list[JournalTurn], questions: list[tuple[str, str]], upto: int
) -> None:
    entries, mark = plan_entries("sess", "Title", turns, oldest=T0 - 86400)
    assert [(e.question, e.answer) for e in entries] == questions
    assert mark == upto


def test_entries_are_short_and_never_cut_inside_a_character() -> None:
    q = "为什么" * 60
    a = "word " * 100
    (e,), _ = plan_entries("s", "t", [jt(1, "user", q), jt(2, "assistant", a)])
    assert len(e.question) <= QUESTION_CHARS and e.question.endswith("…")
    assert len(e.answer) <= ANSWER_CHARS and e.answer.endswith("word…")
    family = "👨\u200d👩\u200d👧"
    cut = short("x" * 8 + family * 5, 10)
    assert not cut[:-1].endswith("\u200d") and cut.endswith("…")


def test_day_files_group_entries_by_session_and_keep_hand_edits(tmp_path: Path) -> None:
    day = dt.datetime.fromtimestamp(T0).date()
    e1, _ = plan_entries(
        "session-aaa",
        "Vue routing",
        [jt(1, "user", "How to route?"), jt(2, "assistant", "vue-router")],
    )
    e2, _ = plan_entries(
        "session-bbb", "Kyoto trip", [jt(3, "user", "Kyoto?"), jt(4, "assistant", "Fushimi")]
    )
    assert _add(tmp_path, e1 + e2) == 2
    path = tmp_path / f"{day.isoformat()}.md"
    text = path.read_text()
    text = (
        text.replace("How to route?", "How to route? (edited by hand)")
        + "\nMy own note at the end.\n"
    )
    path.write_text(text)
    e3, _ = plan_entries(
        "session-aaa",
        "Vue routing",
        [jt(5, "user", "Nested routes?"), jt(6, "assistant", "children")],
    )
    assert _add(tmp_path, e1 + e3) == 1  # e1 is already there: not written twice
    lines = path.read_text().splitlines()
    assert lines[0] == f"# {day.isoformat()}"
    vue = lines.index("## Vue routing · session-aaa")
    kyoto = lines.index("## Kyoto trip · session-bbb")
    assert "(edited by hand)" in lines[vue + 2] and "Nested routes?" in lines[vue + 3]
    assert vue + 3 < kyoto
    assert "My own note at the end." in lines
    assert sum("turn=t1" in line for line in lines) == 1


@pytest.mark.parametrize("turn_id", ["turn 7", ""])
def test_an_entry_is_recognised_whatever_its_turn_id(tmp_path: Path, turn_id: str) -> None:
    """A turn id that needs quotes in the metadata comment (a space, or empty) is read back
    whole, so writing the same exchange again adds nothing."""
    es, _ = plan_entries("s", "Title", [JournalTurn(1, turn_id, "user", "q", T0),
                                        JournalTurn(2, "a1", "assistant", "a", T0)])  # fmt: skip
    assert _add(tmp_path, es) == 1
    assert _add(tmp_path, es) == 0


def test_write_journal_marks_progress_and_waits_for_answers(store: Store, tmp_path: Path) -> None:
    jdir = tmp_path / "journal"
    store.w.run(lambda c: write_turns(c, [turn("s1", "u1", "user", "Which ORM for Postgres?", T0)]))
    assert write_journal(store, MemoryFiles([tmp_path]), jdir, ["s1"]) == 0
    store.w.run(
        lambda c: write_turns(c, [turn("s1", "a1", "assistant", "SQLAlchemy 2.0.", T0 + 5)])
    )
    assert write_journal(store, MemoryFiles([tmp_path]), jdir, ["s1"]) == 1
    assert write_journal(store, MemoryFiles([tmp_path]), jdir, ["s1"]) == 0
    assert rows(store, "SELECT journal_upto FROM sessions") == [(2,)]
    (f,) = jdir.iterdir()
    assert "**Q:** Which ORM for Postgres? **A:** SQLAlchemy 2.0." in f.read_text()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_journal_setting_and_the_memory_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("MEMD_LOGS_CLAUDE_CODE", "false")
    monkeypatch.setenv("MEMD_JOURNAL_ENABLED", "true" if enabled else "false")
    s = load()
    store = Store.open(s.db_path)
    try:
        e = Engine(s, store)
        pair = [{"session_id": "j1", "id": "q", "role": "user", "content": "Is Nara far from Kyoto?"},
                {"session_id": "j1", "id": "a", "role": "assistant", "content": "45 minutes by train."}]  # fmt: skip
        assert e.handle("ingest", {"turns": pair})["added"] == 2
        files = list((s.memory_dir / "journal").glob("*.md"))
        assert len(files) == (1 if enabled else 0)
        e.handle("set_enabled", {"enabled": False})
        off = e.handle(
            "ingest", {"session_id": "j1", "role": "user", "content": "do not keep this"}
        )
        assert off == {"enabled": False, "accepted": 0, "added": 0, "sessions": []}
        assert rows(store, "SELECT count(*) FROM turns") == [(2,)]
    finally:
        store.close()
