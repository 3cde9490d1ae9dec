"""The offline rules where a fact depends on its surroundings: tasks of several clauses, dates
that open a task, a later turn that drops its subject, relations that make a clause someone
else's, names given as a preference, and preferences said without a verb.

The messages are not from any extraction set.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memd.core.models import ExtractedMemory, Turn
from memd.extraction.rules import extract_rules

TS = datetime(2026, 3, 2, 12, tzinfo=UTC).timestamp()  # Monday 2026-03-02, noon UTC


def _extract(*texts: str) -> list[ExtractedMemory]:
    turns = [Turn("ingest", "s1", f"t{i}", "user", t, TS + 60 * i) for i, t in enumerate(texts)]
    return extract_rules(turns, tz=UTC)


def _tasks(*texts: str) -> list[tuple[str, str]]:
    return [(m.content, m.due) for m in _extract(*texts) if m.type == "task"]


def test_every_clause_of_a_sentence_can_state_a_task() -> None:
    # The due date of the first clause must not hide the task of the second.
    tasks = _tasks(
        "The annual security review is due March 20, which means the SSO migration has to ship"
        " before then."
    )
    assert any("security review" in c and due == "2026-03-20" for c, due in tasks), tasks
    assert any("SSO migration" in c and due == "2026-03-20" for c, due in tasks), tasks


def test_a_chinese_deadline_opens_the_task_after_it() -> None:
    # "下个月10号之前" is read as one date: the task after it has no trigger word left but 得.
    [(content, due)] = _tasks("下个月10号之前得把季度预算表交给财务。")
    assert "季度预算表" in content and due == "2026-04-10"
    [(content, due)] = _tasks("下周五前把接口文档写完")
    assert "接口文档" in content and due == "2026-03-13"
    assert _tasks("我觉得明天会下雨") == []
