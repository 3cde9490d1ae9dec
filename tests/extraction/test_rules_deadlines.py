"""A date as the whole predicate of an event ("the launch is January 15", 发布会是1月15号), in a
list of context too, and a thing to deliver by a date ("I need the audit report finished by
December 12", "I still owe finance the Q3 breakdown by Friday"): tasks (`en_tasks`, `zh_tasks`).

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import extract


def _tasks(*texts: str) -> list[tuple[str, str]]:
    return [(m.content, m.due) for m in extract(*texts) if m.type == "task"]


def test_an_event_whose_predicate_is_its_date() -> None:
    assert _tasks("The cutover is April 14.") == [
        ("The cutover is scheduled for Tuesday April 14, 2026-04-14", "2026-04-14")
    ]
    listed = "Context for later:\n- I'm on the billing team\n- the cutover is April 14\nAny tips?"
    assert _tasks(listed) == [
        ("The cutover is scheduled for Tuesday April 14, 2026-04-14", "2026-04-14")
    ]
    assert _tasks("评审会是 4 月 14 号。") == [("评审会定在4月14日周二，2026-04-14", "2026-04-14")]


def test_a_date_said_of_the_user_or_inside_a_longer_predicate_is_no_event() -> None:
    for text in (
        "My birthday is April 14.",
        "The answer is April 14 in the docs.",
        "我生日是4月14号。",
        "deadline 是下周五，我要把迁移脚本写完。",
    ):
        assert not any("scheduled" in c or "定在" in c for c, _ in _tasks(text)), text


def test_a_thing_to_deliver_by_a_date() -> None:
    assert _tasks("I need the vendor risk review finished by April 14. Where do I start?") == [
        ("User has to deliver the vendor risk review finished (due Tuesday April 14, 2026-04-14)",
         "2026-04-14")
    ]  # fmt: skip
    assert _tasks("I still owe legal the data map by Friday, but first a regex question.") == [
        ("User has to deliver the data map (due Friday March 6, 2026-03-06)", "2026-03-06")
    ]


def test_a_thing_wanted_without_a_date_or_asked_about_is_no_task() -> None:
    for text in (
        "I need the logs from yesterday.",
        "Do I need the vendor risk review by Friday?",
        "I want the dark theme back.",
    ):
        assert _tasks(text) == [], text
