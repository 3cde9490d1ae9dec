"""A new value read by its structure: a clause about the user that says a state now holds, keyed
by the class of its value, replaces the session's earlier value of that class; someone else's,
a question, a plan, a hypothetical or a request to edit code replaces nothing.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # an organisation after "at", a place after "in", a time, a tool of a kind, a language
        ("I work at Zalando.", "Second month at Klarna now, loving it.", "Zalando", "Klarna"),
        ("I live in Leeds.", "These days I'm in Glasgow.", "Leeds", "Glasgow"),
        ("I work 9 to 5.", "I start at 7 and finish at 3 now.", "9 to 5", "7"),
        ("Our CI runs on Jenkins.", "We've since moved CI to Buildkite.", "Jenkins", "Buildkite"),
        ("Our backend is written in Java.", "The team standardised on Go this year.", "Java", "Go"),
        ("I use PyCharm for Python.", "Been on Zed for a month now.", "PyCharm", "Zed"),
        ("My laptop runs Ubuntu.", "I wiped it, it's Fedora now.", "Ubuntu", "Fedora"),
        ("我在美团做后端。", "现在在字节了，入职一周。", "美团", "字节"),
        ("我住在成都。", "如今在重庆定居了。", "成都", "重庆"),
        ("我们组用 Java 写服务。", "组里已经转到 Go 了。", "Java", "Go"),
        ("我每天九点上班。", "现在改成十点上班了。", "九点", "十点"),
        ("我用 VS Code 写代码。", "现在开始用 Cursor 了。", "VS Code", "Cursor"),
        ("我的手机是华为 P40。", "手机现在是 iPhone 15 了。", "P40", "iPhone"),
        # the value after "now" when the clause names an old one too; a negation of the old value
        # in another clause; a value with its version; a role someone else gave the user
        ("I live in Leeds.", "My flat in Leeds sold and I'm now living in York.", "Leeds", "York"),
        (
            "Most of my work is in Scala.",
            "Update: the team standardised on Rust and I haven't touched Scala since.",
            "Scala",
            "Rust",
        ),
        ("I run everything on Python 3.9.", "We're on Python 3.12 now.", "3.9", "3.12"),
        ("I'm on Pop!_OS at home.", "These days it's NixOS at home.", "Pop!_OS", "NixOS"),
        (
            "My title is data analyst.",
            "They switched me across to product manager as of May.",
            "data analyst",
            "product manager",
        ),  # fmt: skip
        ("我在百度上班。", "入职京东快两个月了。", "百度", "京东"),
        ("我们的 CI 用的是 Jenkins。", "现在流水线全在蓝鲸上跑了。", "Jenkins", "蓝鲸"),
        ("我一般晚上十二点睡。", "最近改成早睡了，晚上十点就睡。", "十二点", "十点"),
        # the earlier value in a statement only the general reader keeps: a head noun of who the
        # user is ("my day job is …"), a time of day
        (
            "My day job is data analyst, mostly dashboards.",
            "They switched me across to product manager as of May.",
            "data analyst",
            "product manager",
        ),
        ("我写副业一般过了十二点才动手。", "最近改成早起了，早上七点起来写。", "十二点", "七点"),
        # a JavaScript runtime for a runtime; hours online
        ("Our API runs on Node.", "We've since moved the API to Bun.", "Node", "Bun"),
        ("我们的服务跑在 Node 上。", "服务已经全部迁到 Deno 上了。", "Node", "Deno"),
        (
            "我每天早上九点到晚上六点在线。",
            "作息改了，现在是中午十二点到晚上九点在线。",
            "九点到晚上六点",
            "十二点",
        ),  # fmt: skip
    ],
)
def test_a_value_that_now_holds_replaces_the_earlier_one_of_its_class(
    first: str, later: str, old: str, new: str
) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject, memories
    # one value of the key in the later turn: no misreading beside it
    assert [m for m in memories if m.subject == news[-1].subject][-1] == news[-1]


@pytest.mark.parametrize(
    ("first", "later"),
    [
        # someone else, a question, a hypothetical, a plan, a request to edit code
        ("I work at Zalando.", "My sister works at Klarna now."),
        ("My laptop runs Ubuntu.", "Is it Fedora now on the lab machines?"),
        ("Our CI runs on Jenkins.", "If we move CI to Buildkite, what breaks?"),
        ("Our backend is written in Java.", "We might standardise on Go next year."),
        ("I work 9 to 5.", "Change the start time in the config to 10 now."),
        ("我在美团做后端。", "我同事现在在字节。"),
        ("我们的 CI 用的是 Jenkins。", "要是 CI 换成 GitLab CI 会怎样？"),
        ("我们的 CI 用的是 Jenkins。", "把 CI 配置里的 Jenkins 换成 GitLab CI。"),
        ("我们组用 Java 写服务。", "他们组已经转到 Go 了。"),
        ("我每天九点上班。", "现在几点了？"),
    ],
)
def test_what_is_not_the_users_new_value_replaces_nothing(first: str, later: str) -> None:
    memories = extract(first, later)
    keys = {m.subject for m in memories if m.source_turn_ids == ("t0",)} - {""}
    assert not [m for m in memories if m.source_turn_ids == ("t1",) and m.subject in keys]


@pytest.mark.parametrize(
    "text",
    [
        "My sister works at Klarna now.",
        "Is it Fedora now on the lab machines?",
        "Change the start time in the config to 10 now.",
        "我同事现在在字节。",
        "把 CI 配置里的 Jenkins 换成 GitLab CI。",
        # a colon inside a name is no clause break: the request stays whole
        "把镜像从 node:18 改成 node:22-alpine。",
    ],
)
def test_alone_such_a_clause_states_nothing_of_the_user(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # "it's not X, it's Y": the correction "it's Y, not X" the other way round
        ("My editor is Vim.", "I got that wrong: it's not Vim, it's Helix.", "Vim", "Helix"),
        ("My shell is zsh.", "Sorry, not zsh but fish.", "zsh", "fish"),
        # a bare 不对 with the right place: it corrects the one place of the last statement
        ("我住在南宁。", "不对，应该是桂林，刚才打错了。", "南宁", "桂林"),
    ],
)
def test_a_correction_in_another_order_replaces_the_value(
    first: str, later: str, old: str, new: str
) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news and olds[-1].subject == news[-1].subject, memories


def test_it_is_not_that_a_thing_is_bad_corrects_nothing() -> None:
    memories = extract("My shell is zsh.", "It's not that zsh is bad, it's just slow.")
    assert [m.source_turn_ids for m in memories] == [("t0",)]
