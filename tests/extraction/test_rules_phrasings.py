"""The offline rules on everyday phrasings: several facts per message, chat spelling, subjectless
clauses, quoted passages, standing requests, decisions, rescheduled dates, family, lexicons.

Each row is (message, [(type, subject or None, needle in the content)]); a subject of None is
not checked. Negatives must produce nothing at all.
"""

from __future__ import annotations

import pytest

from memd.core.models import ExtractedMemory
from memd.extraction.rules.message import normalise_chat, own_words
from memd.extraction.rules.places import is_place
from memd.extraction.rules.tech import is_language, lookup_tech
from tests.extraction.session import extract

# Monday 2026-03-02, noon UTC.

Want = tuple[str, str | None, str]


def _check(memories: list[ExtractedMemory], want: list[Want]) -> None:
    got = [(m.type, m.subject, m.content) for m in memories]
    for type_, subject, needle in want:
        assert any(
            t == type_ and (subject is None or s == subject) and needle.casefold() in c.casefold()
            for t, s, c in got
        ), f"no {type_}/{subject} memory with {needle!r} in {got}"


ENGLISH: list[tuple[str, list[Want]]] = [
    # the example: the fact after the purpose, and the words after the tool
    ("For testing I use jest in all my projects.", [("skill", "tool:testing", "Jest")]),
    (
        "I'm 41 and I live in Porto, mostly coding in Kotlin",
        [("personal", "age", "41"), ("personal", "city", "Porto"), ("skill", None, "Kotlin")],
    ),
    ("i'm 29 btw", [("personal", "age", "29")]),
    (
        "Marta here - I run the data team at Zalando.",
        [
            ("personal", "name", "Marta"),
            ("personal", "role", "runs the data team"),
            ("personal", "employer", "Zalando"),
        ],
    ),
    (
        "hi, I'm Kenji btw. senior SRE at Mercari, mostly writing Go these days",
        [
            ("personal", "name", "Kenji"),
            ("personal", "role", "SRE"),
            ("personal", "employer", "Mercari"),
            ("skill", None, "Go"),
        ],
    ),
    ("I've been writing Haskell professionally since 2015", [("skill", None, "Haskell")]),
    ("I know Elixir much better than Ruby", [("skill", None, "Elixir")]),
    ("Been on Emacs for ten years now", [("preference", "editor", "Emacs")]),
    ("I do all my writing in Zed", [("preference", "editor", "Zed")]),
    ("I'm in Montreal, so plan for Eastern time", [("personal", "city", "Montreal")]),
    ("we relocated to Oslo last spring", [("personal", "city", "Oslo")]),
    (
        "My son just started primary school, so mornings are busy",
        [("personal", None, "son just started primary school")],
    ),
    (
        "please use single quotes in the Python you write for me",
        [("preference", "style:quotes", "single quotes")],
    ),
    ("pls dont add emojis to docs", [("preference", "style:emoji", "emojis")]),
    ("I like replies terse, no fluff", [("preference", "style:length", "replies terse")]),
    (
        "could you skip the preamble from now on?",
        [("preference", None, "skip the preamble")],
    ),
    ("I just want the diff, not the whole file", [("preference", "style:diff", "diff")]),
    ("short answers please", [("preference", "style:length", "short answers")]),
    (
        "we decided to use Redis for the job queue because it was already deployed",
        [("decision", None, "Redis for the job queue because")],
    ),
    (
        "we're going with Svelte instead of React for the dashboard",
        [("decision", None, "Svelte instead of React")],
    ),
    (
        "we replaced Mocha with Vitest across the monorepo",
        [("project", "tool:testing", "Vitest from Mocha")],
    ),
    (
        "I'm working on a browser extension for bookmarks — it's called Stash. the backend is Deno",
        [("project", None, "called Stash"), ("project", None, "Deno")],
    ),
    (
        "The data export has to be finished by Thursday, legal needs it",
        [("task", None, "Thursday March 5, 2026-03-05")],
    ),
    ("the release got moved to March 20", [("task", "date:release", "March 20, 2026-03-20")]),
    (
        "I'm the only mobile dev here, so all the Swift and Kotlin work is mine",
        [("personal", "role", "mobile dev"), ("skill", None, "Swift and Kotlin")],
    ),
]

CHINESE: list[tuple[str, list[Want]]] = [
    (
        "我今年31，在南京，刚从美团跳槽到京东做推荐算法",
        [
            ("personal", "age", "31"),
            ("personal", "city", "南京"),
            ("personal", "employer", "京东"),
        ],
    ),
    ("我平时编辑器用 Neovim", [("preference", "editor", "Neovim")]),
    ("最近在学 Go，还在看并发那几章", [("skill", None, "Go")]),
    ("我是搞前端的，React 用的比较多", [("personal", "role", "搞前端"), ("skill", None, "React")]),
    (
        "我们组在做一个内部的监控平台，叫「千里眼」，后端用的 Go",
        [("project", None, "千里眼"), ("project", None, "Go")],
    ),
    ("以后回答我的时候请用英文", [("preference", "reply-language", "英文")]),
    ("代码注释用中文写就行", [("preference", "style:comment-language", "中文")]),
    ("测试框架一律用 pytest 就好", [("preference", "tool:testing", "pytest")]),
    ("写 SQL 的时候请一律大写关键字", [("preference", None, "一律大写关键字")]),
    ("直接给命令就行，别解释原理", [("preference", "style:length", "直接给命令")]),
    ("我们最后决定用 gRPC，不用 REST 了", [("decision", None, "gRPC")]),
    ("我女儿下个月上小学", [("personal", None, "女儿下个月上小学")]),
    (
        "提醒我一下：周四之前要把合同发给法务",
        [("task", None, "把合同发给法务（截止 3月5日周四，2026-03-05）")],
    ),
    ("发布会推迟到3月20号了", [("task", "date:发布会", "3月20日")]),
    (
        "I'm 王芳, working at 阿里巴巴 as a PM",
        [("personal", "name", "王芳"), ("personal", "employer", "阿里巴巴")],
    ),
]

NEGATIVES = [
    # passages that are not the user's own words
    'translate this into French: "I live in Berlin and I work at Siemens"',
    "fix the grammar: I'm Sam, I am 30 years old and I love Python",
    "帮我翻译：我叫王磊，我在上海工作，我喜欢用 Vim",
    "他说“我今年四十岁，住在成都”，这句话怎么翻译？",
    "```\n# I use Vim and I live in Paris\n```",
    "> I work at Google and I prefer tabs",
    # hypotheticals, other people, one-off requests, questions about a style
    "if I moved to Tokyo, would my contract change?",
    "suppose we switched to Bun, what breaks?",
    "如果我换成 Vue，这段代码要改多少？",
    "my manager prefers long meetings",
    "别人都用 Emacs",
    "please fix the failing test",
    "can you make this answer shorter?",
    "should I keep answers short in the README?",
    "we moved the meeting to Friday",
    "I'm going with my sister to the concert",
    "I'm on it",
    "我们还没决定用哪个数据库",
]


@pytest.mark.parametrize(("text", "want"), ENGLISH + CHINESE)
def test_phrasings(text: str, want: list[Want]) -> None:
    _check(extract(text), want)


@pytest.mark.parametrize("text", NEGATIVES)
def test_negatives(text: str) -> None:
    assert [m.content for m in extract(text)] == []


def test_a_project_named_in_one_turn_gets_its_stack_from_the_next() -> None:
    memories = extract(
        "side project: I'm building a recipe app called Mise",
        "it's TypeScript, using Remix for the UI and SQLite for storage",
    )
    _check(memories, [("project", None, "Mise uses TypeScript, Remix and SQLite")])
    assert all(m.topic == "mise" for m in memories if m.type == "project")


def test_a_revised_team_decision_keeps_its_subject() -> None:
    first, second = extract(
        "we decided to use Black for formatting",
        "update: the formatter is now Ruff, we switched to Ruff last week",
    )
    assert (first.type, first.subject) == ("decision", "tool:formatter:python")
    assert (second.type, second.subject) == ("decision", "tool:formatter:python")
    assert "Ruff" in second.content


def test_rescheduling_keeps_one_subject_per_event() -> None:
    first, second = extract(
        "the launch is scheduled for March 10", "the launch got pushed to April 2"
    )
    assert first.subject == second.subject == "date:launch"
    assert (first.due, second.due) == ("2026-03-10", "2026-04-02")


def test_chat_spellings_and_own_words() -> None:
    assert normalise_chat("i'm here, pls dont, IM later") == "I'm here, please don't, IM later"
    assert own_words('a tool called "memd" and a note: "I live in Rome now"') == (
        'a tool called "memd" and a note:  '
    )
    assert "小账本" in own_words("我在做一个叫「小账本」的工具")
    assert own_words("> I live in Rome\nI live in Paris").strip() == "I live in Paris"


def test_lexicons() -> None:
    assert is_place("上海") and is_place("四川省") and is_place("Germany") and is_place("德国")
    assert not is_place("腾讯") and not is_place("Python")
    assert is_language("Elixir") and is_language("Gleam") and not is_language("Slack")
    tech = lookup_tech("ts")
    assert tech is not None and tech.name == "TypeScript"
