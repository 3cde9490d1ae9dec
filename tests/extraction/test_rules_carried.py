"""A later turn that states only a new value of something the session already said (`carried`):
the memory carries the same subject key, so placement supersedes the old one.

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import extract


def _keyed(*texts: str) -> list[tuple[str, str, str, str]]:
    """(turn, type, subject, content) of every memory with a subject key."""
    return [(m.source_turn_ids[0], m.type, m.subject, m.content) for m in extract(*texts)
            if m.subject]  # fmt: skip


def _later(key: str, *texts: str) -> list[str]:
    """What the last turn states for `key`."""
    last = f"t{len(texts) - 1}"
    return [c for turn, _t, subject, c in _keyed(*texts) if turn == last and subject == key]


def test_a_number_alone_after_an_age_is_the_new_age() -> None:
    assert _later("age", "I'm 27.", "28 now, as of yesterday lol") == ["User is 28 years old"]
    assert _later("age", "我今年 40 岁。", "其实是 41 岁了") == ["用户今年41岁"]


def test_a_number_far_from_the_age_or_with_a_unit_is_not_an_age() -> None:
    assert _later("age", "I'm 27.", "3 now, the other two tests pass") == []
    assert _later("age", "I'm 27.", "Give me 28 examples") == []


def test_a_place_after_a_verb_of_going_is_the_new_city() -> None:
    assert _later("city", "我在北京上班。", "公司把我外派到深圳了。") == ["用户住在深圳"]
    assert _later("city", "I live in Leeds.", "Moved up to Edinburgh in the spring.") == [
        "User lives in Edinburgh"
    ]


def test_a_bare_company_after_the_employer_is_the_new_employer() -> None:
    assert _later("employer", "我在百度做算法。", "去年辞职了，现在在小米。") == ["用户在小米工作"]
    assert _later("employer", "I work at Klarna.", "I'm with Monzo now, same role.") == [
        "User works at Monzo"
    ]
    # A place is not an employer, home is not a company.
    assert _later("employer", "I work at Klarna.", "I'm at home now, so slower replies.") == []


def test_a_new_status_replaces_the_role() -> None:
    assert _later("role", "我是实习生，做前端。", "现在是正式的前端工程师了") == [
        "用户担任正式的前端工程师"
    ]
    assert _later("role", "I'm a support engineer.", "I switched into backend development.") == [
        "User works in backend development"
    ]


def test_a_switch_said_as_an_order_replaces_a_style_preference() -> None:
    assert _later("style:spelling", "Use British spelling please.",
                  "Go with American spelling instead.") == [
        "User asks to go with American spelling instead"
    ]  # fmt: skip
    first, *_ = _keyed("写代码的时候用 tab 缩进。")
    assert first[2] == "style:indent"
    assert _later("style:indent", "写代码的时候用 tab 缩进。", "还是改成 4 个空格吧") == [
        "用户希望还是改成 4 个空格吧"
    ]


def test_a_tool_of_the_same_kind_without_a_verb_is_the_new_one() -> None:
    assert _later("editor", "My editor is Emacs.", "Lately it's Helix for everything.") == [
        "User switched to Helix"
    ]
    # Tried, not taken up: nothing new.
    assert (
        _later("editor", "My editor is Emacs.", "I tried Helix last week but didn't like it.") == []
    )


def test_a_project_tool_and_the_teams_meet_on_one_key() -> None:
    got = _keyed("这个仓库的数据库用的是 MySQL。", "我们已经把数据库迁到 PostgreSQL 了。")
    assert [(t, type_, key) for t, type_, key, _c in got] == [
        ("t0", "skill", "tool:database"),
        ("t1", "skill", "tool:database"),
    ]
    got = _keyed("The repo's CI is CircleCI.", "We're on Buildkite now.")
    assert [(t, key) for t, _type, key, _c in got] == [("t0", "tool:ci"), ("t1", "tool:ci")]


def test_a_new_version_of_the_same_tool() -> None:
    assert _later("os", "I'm on Debian 11.", "Upgraded to 12 last night.") == [
        "User upgraded to Debian 12"
    ]
    assert _later("tool:database", "项目用 MySQL 5.6。", "已经升到 5.7 了") == [
        "用户的项目换成了MySQL 5.7"
    ]


def test_nothing_is_carried_without_an_earlier_value() -> None:
    # Alone, these say too little to be facts.
    for text in (
        "28 now, as of yesterday lol",
        "现在在小米。",
        "Lately it's Helix for everything.",
    ):
        assert _keyed(text) == [], text


def test_someone_elses_clause_a_question_or_an_order_carries_nothing() -> None:
    assert _later("city", "I live in Leeds.", "My sister moved to Bristol last year.") == []
    assert _later("city", "I live in Leeds.", "Should I move to Bristol?") == []
    assert _later("employer", "我在百度做算法。", "我同事现在在小米。") == []
    assert _later("language:primary", "I mainly write Java.", "Rewrite this class in Kotlin.") == []
