"""The rules that read clause structure rather than one phrasing: who a clause is about, what it
names, tools dropped for others, labels, tasks read clause by clause, and Chinese clauses.

Rows are (message, [(type, subject or None, needle in the content)]); negatives must produce
nothing. The messages are not from any extraction set.
"""

from __future__ import annotations

import pytest

from memd.extraction.rules.clauses import en_clauses
from memd.extraction.rules.mentions import techs_in
from tests.extraction.session import extract

Want = tuple[str, str | None, str]


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        (
            "Honestly, I'm colorblind, so please don't rely on red/green",
            [("I'm colorblind", "I"), ("please don't rely on red/green", "none")],
        ),
        (
            "Our shop is all-in on AWS; I mostly live in the CDK",
            [("Our shop is all-in on AWS", "we"), ("I mostly live in the CDK", "I")],
        ),
        ("I'm fluent in Go, rusty in Java", [("I'm fluent in Go, rusty in Java", "I")]),
        ("My boss swears by Emacs", [("My boss swears by Emacs", "other")]),
        ("Been doing Laravel for years", [("Been doing Laravel for years", "I")]),
    ],
)
def test_clauses_and_who_they_are_about(sentence: str, clauses: list[tuple[str, str]]) -> None:
    assert [(c.text, c.subject) for c in en_clauses(sentence)] == clauses


def test_labels_and_unsure_clauses() -> None:
    [c] = en_clauses("Preference: tabs everywhere")
    assert (c.label, c.text) == ("preference", "tabs everywhere")
    [c] = en_clauses("I'm thinking about trying Zig")
    assert c.unsure and not c.about_user
    [c] = en_clauses("I never touch PHP")
    assert c.negated and not c.about_user


def test_technologies_named_in_running_text() -> None:
    assert techs_in("we go with VS Code and GitHub Actions, make sure") == [
        "VS Code",
        "GitHub Actions",
    ]
    assert techs_in("mostly Elixir and a bit of Ruby") == ["Elixir", "Ruby"]


POSITIVE: list[tuple[str, list[Want]]] = [
    ("These days I spend most of my time in Swift.", [("skill", None, "Swift")]),
    ("Our backend runs on Go services behind Nginx.", [("project", None, "Go")]),
    ("At work we ship everything through Buildkite.", [("project", "tool:ci", "Buildkite")]),
    ("Been a Laravel dev for years, PHP all day.", [("skill", None, "PHP")]),
    ("My go-to database is Postgres.", [("skill", "tool:database", "PostgreSQL")]),
    ("We moved off Netlify to Render last month.", [("project", "tool:hosting", "Render")]),
    ("Ditched Yarn, npm is fine for us now.", [("project", "tool:package-manager", "npm")]),
    ("Please stop adding docstrings to every function.", [("preference", None, "docstrings")]),
    ("I'm in charge of the data platform at Zalando.", [("personal", "employer", "Zalando")]),
    ("I run a two-person studio in Ghent.", [("personal", "city", "Ghent")]),
    ("Just got promoted to staff engineer!", [("personal", "role", "staff engineer")]),
    ("Preference: single quotes in JS.", [("preference", "style:quotes", "single quotes")]),
    (
        "My lead asked me to write the incident report by Friday.",
        [("task", None, "incident report")],
    ),
    (
        "I've got a dentist appointment on Thursday so I'll be away.",
        [("task", None, "dentist appointment")],
    ),
    (
        "我们组后端全是 Kotlin，前端用 Svelte。",
        [("project", None, "Kotlin"), ("project", None, "Svelte")],
    ),
    ("团队最后选了 DuckDB 做本地分析，主要是轻。", [("decision", None, "DuckDB")]),
    ("这半年基本改写 Go 了。", [("skill", None, "Go")]),
    ("I live just outside Leeds.", [("personal", "city", "Leeds")]),
    (
        "本人阿杰，苏州人，在一家券商做运维。",
        [("personal", "name", "阿杰"), ("personal", "hometown", "苏州")],
    ),
    (
        "我在京东当测试工程师。",
        [("personal", "employer", "京东"), ("personal", "role", "测试工程师")],
    ),
    ("我之前在百度，今年跳槽到了小红书。", [("personal", "employer", "在小红书工作")]),
    ("下个月 20 号前要交季度报告。", [("task", None, "2026-04-20")]),
    ("I moved from Lyon to Geneva in 2021.", [("personal", "city", "lives in Geneva")]),
    ("I'm now at a startup called Acmeworks.", [("personal", "employer", "Acmeworks")]),
    ("My dog's name is Waffles.", [("personal", None, "Waffles")]),
    ("Could you always add docstrings to the code you write?", [("preference", None, "always")]),
    ("No emojis in release notes, ever.", [("preference", "style:emoji", "no emojis")]),
    ("I'd like terse commit messages.", [("preference", "style:commits", "terse commit")]),
    (
        "The tool I'm building is a log viewer called Lumen.",
        [("project", None, "called Lumen")],
    ),
]


@pytest.mark.parametrize(("text", "want"), POSITIVE)
def test_structure_finds_the_fact(text: str, want: list[Want]) -> None:
    got = [(m.type, m.subject, m.content) for m in extract(text)]
    for type_, subject, needle in want:
        assert any(
            t == type_ and (subject is None or s == subject) and needle.casefold() in c.casefold()
            for t, s, c in got
        ), f"no {type_}/{subject} memory with {needle!r} in {got}"


NEGATIVE = [
    "My brother swears by Arch Linux.",
    "I don't use Docker at all.",
    "I'm thinking about learning Zig next year.",
    "I used to write Java but that was ages ago.",
    "I read that Deno supports npm packages now.",
    "I tried Svelte once and didn't like it.",
    "Can you convert this Python script to TypeScript?",
    "同事说 Rust 很难学。",
    "我不太会用 Docker。",
    "听说 Bun 比 Node 快很多。",
    "要不要把前端换成 Svelte？",
    "I'd like to know how asyncio works.",
    "帮我把这段 Ruby 代码改成 Python。",
    "领导让我们都用 Slack 沟通。",
    "I'd like a summary of this file.",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_structure_stores_nothing_of_others_or_of_maybes(text: str) -> None:
    assert extract(text) == []


def test_a_dropped_tool_is_superseded_by_the_one_taken_up() -> None:
    first, second = extract("I use Poetry for packaging.", "Dropped Poetry, uv all the way now.")
    assert first.subject == second.subject == "tool:package-manager:python"
    assert "uv" in second.content and "Poetry" in second.content


def test_a_tool_stated_is_a_fact_a_tool_asked_for_is_a_preference() -> None:
    [fact] = extract("我们前端用 Svelte。")
    assert fact.type == "project"
    [asked] = extract("formatter 以后一律用 Prettier 就好。")
    assert asked.type == "preference"
