"""The offline rule extractor: seed 004's message, Chinese statements, dates, negatives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memd.core.models import MEMORY_TYPES, ExtractedMemory, Turn
from memd.extraction.rules import extract_rules, is_trivial

# Wednesday 2026-03-04, noon UTC: relative dates below resolve against this.
TS = datetime(2026, 3, 4, 12, tzinfo=UTC).timestamp()

SEED_004 = (
    "Hi! My name is Sam, I'm 28 years old, working at ByteDance as a Senior Frontend Engineer. "
    "I mainly use React and TypeScript for development. Recently I'm working on a project "
    "called CKS Lite, which is an AI workbench built with React + Tauri + Python. I prefer "
    "clean code style and usually work with VSCode."
)


def _turn(text: str, *, turn_id: str = "t1", role: str = "user", ts: float = TS) -> Turn:
    return Turn("ingest", "s1", turn_id, role, text, ts)


def _extract(text: str) -> list[ExtractedMemory]:
    return extract_rules([_turn(text)], tz=UTC)


def _by_subject(memories: list[ExtractedMemory]) -> dict[str, ExtractedMemory]:
    return {m.subject: m for m in memories if m.subject}


def _find(memories: list[ExtractedMemory], *needles: str) -> ExtractedMemory:
    for memory in memories:
        if all(n in memory.content for n in needles):
            return memory
    raise AssertionError(f"no memory with {needles!r} in {[m.content for m in memories]}")


def test_seed_004_english_message() -> None:
    memories = _extract(SEED_004)
    subjects = _by_subject(memories)

    name = subjects["name"]
    assert (name.content, name.type) == ("User's name is Sam", "personal")
    assert 8 <= name.importance <= 10

    age = subjects["age"]
    assert (age.content, age.type) == ("User is 28 years old", "personal")

    employer = subjects["employer"]
    assert (employer.content, employer.type) == ("User works at ByteDance", "personal")
    assert 8 <= employer.importance <= 10

    role = subjects["role"]
    assert "Senior Frontend Engineer" in role.content and role.type == "personal"
    assert 8 <= role.importance <= 10

    skill = _find(memories, "React", "TypeScript")
    assert skill.type == "skill" and 6 <= skill.importance <= 8
    assert skill.content == "User mainly uses React and TypeScript for development"

    project = _find(memories, "project called CKS Lite")
    assert project.type == "project" and project.topic == "cks-lite"
    assert "AI workbench" in project.content
    stack = _find(memories, "CKS Lite is built with")
    assert stack.content == "CKS Lite is built with React + Tauri + Python"
    assert stack.type == "project" and stack.topic == "cks-lite"

    clean = _find(memories, "clean code")
    assert clean.content == "User prefers clean code style"
    assert clean.type == "preference" and 4 <= clean.importance <= 6

    editor = subjects["editor"]
    assert "VSCode" in editor.content and editor.type == "preference"
    assert 4 <= editor.importance <= 6

    for memory in memories:
        assert memory.type in MEMORY_TYPES
        assert 1 <= memory.importance <= 10
        assert memory.source_turn_ids == ("t1",)
    assert len(memories) == 9


def test_chinese_name() -> None:
    [memory] = _extract("我叫晓力")
    assert memory.subject == "name" and "晓力" in memory.content
    assert memory.type == "personal" and memory.importance >= 8


def test_chinese_two_preferences() -> None:
    memories = _extract("我喜欢简洁的代码，不要写太多注释")
    assert [m.content for m in memories] == ["用户喜欢简洁的代码", "用户希望不要写太多注释"]
    assert all(m.type == "preference" and 4 <= m.importance <= 6 for m in memories)


def test_jest_then_vitest_share_a_subject() -> None:
    memories = extract_rules(
        [
            _turn("I use jest for unit tests", turn_id="a"),
            _turn("I switched to vitest", turn_id="b"),
        ],
        tz=UTC,
    )
    assert [(m.subject, m.source_turn_ids) for m in memories] == [
        ("tool:testing", ("a",)),
        ("tool:testing", ("b",)),
    ]
    assert "Jest" in memories[0].content and "Vitest" in memories[1].content


@pytest.mark.parametrize(
    ("text", "subject", "type_", "needle"),
    [
        ("Call me Bob.", "name", "personal", "Bob"),
        ("Hi, I'm Alice.", "name", "personal", "Alice"),
        ("I'm a backend developer at Shopify.", "employer", "personal", "Shopify"),
        ("I'm a backend developer at Shopify.", "role", "personal", "backend developer"),
        ("I live in New York City.", "city", "personal", "New York City"),
        ("I moved to Lisbon last year.", "city", "personal", "Lisbon"),
        ("I'm from Chengdu, China.", "hometown", "personal", "Chengdu"),
        ("I mainly use Python.", "language:primary", "skill", "Python"),
        ("I've switched from npm to pnpm.", "tool:package-manager", "skill", "pnpm"),
        ("I prefer tabs over spaces", "style:indent", "preference", "tabs"),
        ("Please always answer in Chinese.", "reply-language", "preference", "Chinese"),
        ("我今年二十八岁", "age", "personal", "28"),
        ("我在字节跳动担任高级前端工程师", "employer", "personal", "字节跳动"),
        ("我在字节跳动担任高级前端工程师", "role", "personal", "高级前端工程师"),
        ("我住在上海", "city", "personal", "上海"),
        ("我在北京工作", "city", "personal", "北京"),
        ("我是成都人", "hometown", "personal", "成都"),
        ("我主要用Python", "language:primary", "skill", "Python"),
        ("我平时用VSCode写代码", "editor", "preference", "VSCode"),
        ("我从npm换到了pnpm", "tool:package-manager", "skill", "pnpm"),
        ("以后回答请用中文", "reply-language", "preference", "中文"),
    ],
)
def test_single_valued_facts(text: str, subject: str, type_: str, needle: str) -> None:
    memory = _by_subject(_extract(text)).get(subject)
    assert memory is not None, [m.content for m in _extract(text)]
    assert memory.type == type_
    assert needle in memory.content


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I love Python and I hate Java", ["User loves Python", "User hates Java"]),
        ("I don't like long functions.", ["User doesn't like long functions"]),
        (
            "Don't add emojis to my commit messages.",
            ["User asks not to add emojis to their commit messages"],
        ),
        ("Never commit directly to main.", ["User asks to never commit directly to main"]),
        ("我更喜欢函数式风格", ["用户更喜欢函数式风格"]),
        ("别用分号", ["用户希望不要用分号"]),
    ],
)
def test_preferences(text: str, content: list[str]) -> None:
    memories = _extract(text)
    assert [m.content for m in memories] == content
    assert all(m.type == "preference" for m in memories)


@pytest.mark.parametrize(
    ("text", "due", "needle"),
    [
        ("I need to finish the report by Friday.", "2026-03-06", "finish the report"),
        ("Remind me to call mom tomorrow", "2026-03-05", "call mom"),
        (
            "Can you remind me to renew my passport next Monday?",
            "2026-03-09",
            "renew their passport",
        ),
        ("I have to submit the paper by 2026-12-01.", "2026-12-01", "submit the paper"),
        ("I need to pay rent on March 10th", "2026-03-10", "pay rent"),
        ("I have to renew the domain in 3 days", "2026-03-07", "renew the domain"),
        ("I have a dentist appointment tomorrow", "2026-03-05", "dentist appointment"),
        ("TODO: clean up the fixtures", "", "clean up the fixtures"),
        ("明天要交报告", "2026-03-05", "交报告"),
        ("下周五之前要完成设计稿", "2026-03-13", "完成设计稿"),
        ("提醒我后天给妈妈打电话", "2026-03-06", "给妈妈打电话"),
        ("下周我要去上海出差", "2026-03-09", "去上海出差"),
        ("3月20日前要提交材料", "2026-03-20", "提交材料"),
    ],
)
def test_tasks_resolve_dates_against_turn_time(text: str, due: str, needle: str) -> None:
    [memory] = [m for m in _extract(text) if m.type == "task"]
    assert memory.due == due
    assert needle in memory.content
    assert 1 <= memory.importance <= 3
    if due:
        assert due in memory.content  # standalone: no "tomorrow" left to misread later


def test_relative_dates_use_the_given_zone() -> None:
    # 2026-03-04 23:30 UTC is already Thursday in UTC+8, so "tomorrow" is Friday there.
    late = datetime(2026, 3, 4, 23, 30, tzinfo=UTC).timestamp()
    plus8 = timezone(timedelta(hours=8))
    [utc] = extract_rules([_turn("Remind me to water the plants tomorrow", ts=late)], tz=UTC)
    [east] = extract_rules([_turn("Remind me to water the plants tomorrow", ts=late)], tz=plus8)
    assert (utc.due, east.due) == ("2026-03-05", "2026-03-06")


@pytest.mark.parametrize(
    "text",
    [
        "What is my name?",
        "what is my name",
        "我叫什么名字？",
        "你知道我喜欢什么吗",
        "Do you like React?",
        "My name is on the list",
        "I'm Chinese.",
        "I'm fine, thanks",
        "I like it",
        "I'd like to add a button",
        "Use pytest.",
        "Don't worry about it.",
        "我在写代码",
        "别人都用Vim",
        "I'm 5 minutes late",
        "The token expired, can you check the logs",
    ],
)
def test_negatives_produce_nothing(text: str) -> None:
    assert _extract(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "OK thanks!!",
        "好的",
        "谢谢",
        "好的，谢谢！",
        "Thanks a lot!",
        "Thank you so much Claude",
        "sounds good 👍",
        "👍👍🎉",
        "嗯嗯 收到",
        "hi there",
        "Good morning!",
        "...",
        "lol",
        "I'm ok",
        "I'm in",
    ],
)
def test_trivial_turns(text: str) -> None:
    assert is_trivial(text)
    assert _extract(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "我叫晓力",
        "I use jest",
        "ok so I use vim",
        "好的我叫晓力",
        "okra salad recipe",
        "what is my name?",
        # Short, but who the user is: an age or a name.
        "I'm 33.",
        "I'm Bo",
        "我是Leo",
    ],
)
def test_not_trivial(text: str) -> None:
    assert not is_trivial(text)


def test_trivial_check_is_fast_on_adversarial_input() -> None:
    # Many ways to cut "hahaha…" into phrases: a regex would backtrack exponentially.
    assert not is_trivial("haha" * 19 + "hx")


def test_a_relations_job_is_neither_the_users_employer_nor_their_fact() -> None:
    # Where the user's wife works is hers: not the user's employer, not a fact about the user.
    assert _extract("My wife works at Google") == []
    [memory] = _extract("My wife just had twins")
    assert (memory.content, memory.type, memory.subject) == (
        "User's wife just had twins",
        "personal",
        "",
    )


def test_only_user_turns_and_source_ids() -> None:
    memories = extract_rules(
        [
            _turn("My name is Sam.", turn_id="u1"),
            _turn("I live in Berlin, and my name is Claude.", turn_id="a1", role="assistant"),
            _turn("I live in Paris.", turn_id="u2"),
        ],
        tz=UTC,
    )
    assert [(m.content, m.source_turn_ids) for m in memories] == [
        ("User's name is Sam", ("u1",)),
        ("User lives in Paris", ("u2",)),
    ]


def test_repeated_statement_is_returned_once() -> None:
    memories = extract_rules(
        [_turn("I live in Paris.", turn_id="u1"), _turn("I live in Paris!", turn_id="u2")], tz=UTC
    )
    assert [m.source_turn_ids for m in memories] == [("u1",)]


def test_secrets_never_reach_a_memory() -> None:
    key = "sk-ant-" + "api03-" + "x" * 93 + "AA"
    memories = _extract(
        f"I use {key} with Python and I live in Berlin <private>I live in Rome</private>"
    )
    assert memories and all(key not in m.content for m in memories)
    assert not any("Rome" in m.content for m in memories)


def test_chinese_profile_sentence() -> None:
    memories = _extract("我叫 Alex Chen，今年30岁，在腾讯做后端开发工程师")
    subjects = _by_subject(memories)
    assert subjects["name"].content == "用户的名字是Alex Chen"
    assert subjects["age"].content == "用户今年30岁"
    assert subjects["employer"].content == "用户在腾讯工作"
    assert subjects["role"].content == "用户担任后端开发工程师"


def test_chinese_project_with_stack() -> None:
    memories = _extract("我最近在做一个叫 Muse 的AI写作工具，用 Next.js 和 Supabase 开发")
    assert [(m.content, m.type, m.topic) for m in memories] == [
        ("用户正在做一个名为Muse的AI写作工具", "project", "muse"),
        ("Muse使用Next.js和Supabase构建", "project", "muse"),
    ]
