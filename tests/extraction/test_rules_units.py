"""A sentence that states and asks is read clause by clause: the statement yields its fact, the
question or request none; a hypothetical, someone else's thing or a request to edit code yields
nothing.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from memd.extraction.rules.units import restate_lead, units
from tests.extraction.session import extract


@pytest.mark.parametrize(
    ("text", "type_", "needle"),
    [
        # a statement before a question, in the same sentence
        ("I'm allergic to peanuts, can you suggest a snack?", "personal", "peanuts"),
        ("I run a small bakery in Bristol, could you help me write a menu?", "personal", "Bristol"),
        ("I swim every Tuesday evening, what's a good warm-up?", "personal", "swim"),
        ("I use Arch btw — how do I get Docker running?", "preference", "Arch"),
        ("I have two cats at home, so what feeder works when I travel?", "personal", "cats"),
        # a statement after the question
        ("What's a good snack for the office, I'm allergic to peanuts?", "personal", "peanuts"),
        # a lead that says who the writer is
        ("As a longtime Rust developer, how would you structure this crate?", "skill", "Rust"),
        ("我在用 Arch，怎么装 Docker？", "preference", "Arch"),
        ("我有两只猫，出差的时候怎么安排喂食比较好？", "personal", "猫"),
        ("我每周三晚上打篮球，有什么护膝推荐吗？", "personal", "篮球"),
        ("我在杭州工作，周末有什么好去处？", "personal", "杭州"),
        ("我对花生过敏，能推荐几个零食吗？", "personal", "花生"),
        ("我们公司用的是 TiDB，这个慢查询怎么优化？", "project", "TiDB"),
    ],
)
def test_a_statement_beside_a_question_yields_its_fact(text: str, type_: str, needle: str) -> None:
    memories = extract(text)
    assert [m for m in memories if m.type == type_ and needle in m.content], memories


@pytest.mark.parametrize(
    "text",
    [
        # someone else's thing, a hypothetical, a request to edit code, a question only
        "My sister uses Arch, how do I set up Docker for her?",
        "My brother lives in Leeds, what's a good gift for him?",
        "If I move to Leeds, what would my commute look like?",
        "Say I'm 60, what would my pension be?",
        "Can you change the indent to tabs, and make the names snake_case?",
        "Could you rewrite this function so it prefers early returns, please?",
        "Should I learn Rust, or stick with Go?",
        "我朋友在用 Arch，怎么帮他装 Docker？",
        "如果我搬到杭州，社保怎么转？",
        "要是我每周三打篮球，膝盖受得了吗？",
        "把这个函数改成用 tabs 缩进，可以吗？",
        "你觉得我该用 Arch 还是 Fedora？",
        "作为新手，怎么学 Rust？",
    ],
)
def test_a_question_or_request_beside_nothing_of_the_users_yields_nothing(text: str) -> None:
    assert extract(text) == []


def test_the_question_part_keeps_its_mark_and_the_statements_their_order() -> None:
    parts = units("I'm 40, single and living in Berlin, what's a good first date spot?")
    assert [(u.text, u.asks) for u in parts] == [
        ("I'm 40, single and living in Berlin", False),
        ("what's a good first date spot?", True),
    ]
    parts = units("我在用 Arch，怎么装 Docker？")
    assert [(u.text, u.asks) for u in parts] == [("我在用 Arch", False), ("怎么装 Docker？", True)]
    # a sentence that only states, or only asks, is one part
    assert [u.text for u in units("I live in Leeds, and I cycle to work.")] == [
        "I live in Leeds, and I cycle to work."
    ]
    assert [u.asks for u in units("What time is it, and where are you?")] == [False]


def test_a_lead_that_says_who_the_writer_is_is_restated() -> None:
    assert restate_lead("As a nurse on nights, what should I eat?") == (
        "I'm a nurse on nights, what should I eat?"
    )
    assert restate_lead("As someone who's written C for years, is Rust hard?") == (
        "I've written C for years, is Rust hard?"
    )
    assert restate_lead("作为一个前端，怎么学 Go？") == "我是一个前端，怎么学 Go？"
    assert restate_lead("As a matter of fact, it broke.") == "As a matter of fact, it broke."


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # a condition on what is asked after the statement
        ("I live in Ghent, if that matters for the tax part.", "Ghent"),
        # shapes a statement beside a request takes: an allergy as a noun, an age "as of"
        ("I have a shellfish allergy, so flag any recipe with prawns.", "shellfish"),
        ("I'm 33 as of yesterday, which your reminders should know.", "33"),
        # 、 joins two days of one habit, not two clauses
        ("我每周一、三早上去游泳，那两天早上别排会。", "游泳"),
    ],
)
def test_a_statement_beside_a_condition_or_request_yields_its_fact(text: str, needle: str) -> None:
    memories = extract(text)
    assert [m for m in memories if m.type == "personal" and needle in m.content], memories


@pytest.mark.parametrize(
    "text",
    [
        # someone named by an article or a qualifier before the relation: their news
        "An old friend of mine, Priya, just joined Stripe as a designer.",
        "One of my colleagues moved to Berlin last month.",
        "我高中同学上个月从腾讯跳到了字节，他说加班很多。",
        "我以前的同事去年搬到了成都。",
    ],
)
def test_someone_elses_news_in_a_clause_without_its_own_subject_is_not_the_users(
    text: str,
) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # "I've got" is no event; a lead of place or time before the subject
        (
            "I've got a standing Monday slot for yoga, so Monday mornings are out for meetings.",
            "yoga",
        ),  # fmt: skip
        ("At home we speak Swahili and English.", "Swahili"),
        ("On weekdays I speak Tagalog at the office.", "Tagalog"),
        # a condition on what matters after the statement asks about it
        ("I mostly work from a library on Mondays, if that matters for the VPN.", "library"),
    ],
)
def test_a_statement_with_a_lead_or_a_condition_after_it_is_kept(text: str, needle: str) -> None:
    memories = extract(text)
    assert [m for m in memories if m.type == "personal" and needle in m.content], memories


def test_a_condition_that_is_no_ask_leaves_the_sentence_whole() -> None:
    text = "I know Go better than Python, so whenever there's a choice, Go please."
    assert [u.text for u in units(text)] == [text]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # a project named before what it is to the user, beside a request
        (
            "Can you review this? It's for Trailhead, my weekend project that tracks hikes.",
            "Trailhead",
        ),  # fmt: skip
        ("The crash is in Lumen, our side thing for invoices.", "Lumen"),
        # a measure word other than 个 before the name
        ("我是独立开发者，在做一款叫「云朵笔记」的 App。", "云朵笔记"),
        ("我们在写一套叫「青鸟」的内部工具。", "青鸟"),
    ],
)
def test_a_project_named_in_passing_is_kept(text: str, needle: str) -> None:
    memories = extract(text)
    assert [m for m in memories if m.type == "project" and needle in m.content], memories


@pytest.mark.parametrize(
    "text", ["Sam, my manager, wants this by Friday.", "I sent it to Ravi, our intern."]
)
def test_a_person_named_before_who_they_are_is_no_project(text: str) -> None:
    assert not [m for m in extract(text) if m.type == "project"]
