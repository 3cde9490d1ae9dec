"""Relationship signals from user turns: thanks, praise, frustration, corrections, reverts (EN/ZH),
and memory points about how the assistant should work, with their supersession keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core.models import Turn
from memd.extraction.placement import Add, plan_batch, target_for
from memd.extraction.rules import (
    SignalKind,
    is_memory_point,
    memory_points,
    session_signals,
    turn_signals,
)

T, P, F, C, R = (
    SignalKind.THANKS,
    SignalKind.PRAISE,
    SignalKind.FRUSTRATION,
    SignalKind.CORRECTION,
    SignalKind.REVERT,
)


def _turn(text: str, *, turn_id: str = "t1", role: str = "user", session: str = "s1") -> Turn:
    return Turn("ingest", session, turn_id, role, text, 1_772_000_000.0, agent_id="ally")


def _kinds(text: str) -> set[SignalKind]:
    return {s.kind for s in turn_signals(_turn(text))}


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("thanks!", {T}),
        ("Thanks, can you also add a test?", {T}),
        ("thank you so much, that worked", {T, P}),
        ("ok thx", {T}),
        ("谢谢！", {T}),
        ("好的，非常感谢", {T}),
        ("Perfect, exactly what I needed", {P}),
        ("that works now", {P}),
        ("nice work", {P}),
        ("太棒了，跑通了", {P}),
        ("no, that's wrong", {C}),
        ("that's not what I asked", {C}),
        ("I meant the other endpoint", {C}),
        ("不对，我说的是另一个文件", {C}),
        ("你理解错了", {C}),
        ("revert that", {R}),
        ("please undo your last change", {R}),
        ("roll it back", {R}),
        ("帮我撤回刚才的修改", {R}),
        ("改回去吧", {R}),
        ("ugh, you keep adding semicolons", {F}),
        ("it still doesn't work", {F}),
        ("I already told you to use pnpm", {F}),
        ("又错了，说了多少次了", {F}),
        ("还是不行", {F}),
        ("how many times do I have to say it: no semicolons", {F}),
        ("no, revert that, it still doesn't work", {C, R, F}),
    ],
)
def test_signals(text: str, kinds: set[SignalKind]) -> None:
    assert _kinds(text) == kinds


@pytest.mark.parametrize(
    "text",
    [
        "how do I say thanks in Japanese?",
        'the button label should read "thank you"',
        "add a thank you page after checkout",
        "> thanks for the report\nwhat does this reply mean",
        "No worries, take your time",
        "no problem if it takes longer",
        "how do I revert a commit in git?",
        "```\ngit revert HEAD\n```",
        "is this approach wrong?",
        "这个提交怎么回滚？",
        "对不对？",
        "can you write the undo logic for the editor",
        "the test checks that an error is thrown",
        "how many times is this function called?",
    ],
)
def test_not_signals(text: str) -> None:
    assert turn_signals(_turn(text)) == []


def test_strength_grows_with_intensity_and_stays_bounded() -> None:
    [plain] = turn_signals(_turn("thanks"))
    [strong] = turn_signals(_turn("thank you so much!!"))
    [shouting] = turn_signals(_turn("THIS IS STILL BROKEN, SERIOUSLY!!!"))
    assert 0 < plain.strength < strong.strength <= 1.0
    assert shouting.kind is F and shouting.strength == 1.0


def test_session_signals_group_by_session_and_skip_assistant_turns() -> None:
    turns = [
        _turn("fix the parser", turn_id="a1"),
        _turn("Thanks, glad I could help!", turn_id="a2", role="assistant"),
        _turn("no, that's wrong", turn_id="a3"),
        _turn("thanks, works now", turn_id="a4"),
        _turn("谢谢", turn_id="b1", session="s2"),
    ]
    s1, s2 = session_signals(turns)
    assert (s1.session_id, s1.agent_id, s2.session_id) == ("s1", "ally", "s2")
    assert [(s.kind, s.turn_id) for s in s1.signals] == [(C, "a3"), (T, "a4"), (P, "a4")]
    assert s1.count(T) == 1 and s1.count(F) == 0 and s2.count(T) == 1
    assert s1.strength(T) == pytest.approx(s1.signals[1].strength)


@pytest.mark.parametrize(
    ("text", "subject", "needle"),
    [
        ("keep your answers short from now on", "style:length", "answers short"),
        ("please always show the diff first", "style:diff", "show the diff first"),
        ("be more detailed when you explain things", "style:length", "more detailed"),
        ("I prefer practical examples", "style:examples", "practical examples"),
        ("I often work late at night", "schedule", "works late at night"),
        ("Please answer in Chinese.", "reply-language", "Chinese"),
        ("no emojis in commit messages please", "style:emoji", "emojis"),
        ("别用表情", "style:emoji", "表情"),
        ("回答简短一点", "style:length", "回答简短一点"),
        ("以后解释详细一些", "style:length", "解释详细一些"),
        ("我经常熬夜写代码", "schedule", "熬夜写代码"),
    ],
)
def test_memory_points(text: str, subject: str, needle: str) -> None:
    [point] = memory_points([_turn(text)])
    assert point.type == "preference" and point.subject == subject
    assert needle in point.content and point.source_turn_ids == ("t1",)


@pytest.mark.parametrize(
    "text",
    [
        "should answers be short?",
        "can you make this answer shorter?",
        "is it better to keep commit messages short?",
        "回答要简短吗？",
        "I use pytest",
        "I work at Stripe",
        "make the button bigger",
        'the style guide says "always use tabs"',
    ],
)
def test_not_memory_points(text: str) -> None:
    assert memory_points([_turn(text)]) == []


def test_a_later_length_request_supersedes_the_earlier_one(tmp_path: Path) -> None:
    turns = [
        _turn("keep your answers short from now on", turn_id="t1"),
        _turn("actually, be more detailed in your explanations", turn_id="t2"),
    ]
    short, detailed = memory_points(turns)
    assert short.subject == detailed.subject == "style:length"
    planned = [
        (m, target_for(m, tmp_path, None), "2026-03-02", f"s1#{m.source_turn_ids[0]}")
        for m in (short, detailed)
    ]
    plan = plan_batch(planned, existing=[], known={}, new_id=iter(["m_1", "m_2"]))
    first, second = plan.actions
    assert isinstance(first, Add) and isinstance(second, Add)
    assert [e.id for e in second.supersedes] == ["m_1"]


def test_points_are_preferences_and_not_every_preference_is_a_point() -> None:
    tool = memory_points([_turn("I prefer pnpm over npm")])
    assert tool == []
    assert all(is_memory_point(m) for m in memory_points([_turn("keep it brief please")]))
