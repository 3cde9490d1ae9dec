"""The pure placement planner: targets, near duplicates, supersession, hand edits (table-driven)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core.models import ExtractedMemory
from memd.extraction.placement import (
    Add,
    Bump,
    Existing,
    Known,
    Skip,
    content_hash,
    near_duplicate,
    plan_batch,
    plan_memory,
    target_for,
)
from memd.extraction.rules import same_fact

ROOT = Path("/m")


def mem(
    content: str, type_: str = "preference", *, subject: str = "", topic: str = "", imp: int = 5
) -> ExtractedMemory:
    return ExtractedMemory(content, type_, imp, ("t9",), subject=subject, topic=topic)


@pytest.mark.parametrize(
    ("type_", "topic", "project", "path", "section", "scope"),
    [
        ("personal", "", None, "/m/_core/profile.md", "Basic Info", "user"),
        ("skill", "", None, "/m/_core/profile.md", "Skills", "user"),
        ("preference", "", None, "/m/_core/preferences.md", "Technical Preferences", "user"),
        ("task", "", None, "/m/tasks.md", "Open", "user"),
        ("project", "CKS Lite", None, "/m/topics/cks-lite.md", "Context", "user"),
        ("knowledge", "", None, "/m/topics/knowledge.md", "Knowledge", "user"),
        ("decision", "db", None, "/m/topics/db.md", "Decisions", "user"),
        (
            "project",
            "cks-lite",
            ("shop", Path("/w/shop/.memd/memory")),
            "/w/shop/.memd/memory/context.md",
            "Context",
            "project:shop",
        ),
        (
            "decision",
            "",
            ("shop", Path("/m/projects/shop")),
            "/m/projects/shop/decisions.md",
            "Decisions",
            "project:shop",
        ),
        (
            "knowledge",
            "",
            ("shop", Path("/m/projects/shop")),
            "/m/projects/shop/context.md",
            "Knowledge",
            "project:shop",
        ),
    ],
)
def test_targets(
    type_: str, topic: str, project: tuple[str, Path] | None, path: str, section: str, scope: str
) -> None:
    t = target_for(mem("x", type_, topic=topic), ROOT, project)
    assert (str(t.path), t.section, t.scope) == (path, section, scope)


def test_communication_preferences_get_their_own_section() -> None:
    t = target_for(mem("User wants answers in Chinese", subject="reply-language"), ROOT, None)
    assert t.section == "Communication Style"
    assert target_for(mem("用户希望回答简短"), ROOT, None).section == "Communication Style"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("User's name is Sam", "user's name is sam.", True),
        ("User's name is Sam", "The user's name is Sam", True),
        ("User uses Jest", "User uses Vitest", False),
        ("User is 28 years old", "User is 29 years old", False),
        ("用户喜欢简洁的代码", "用户喜欢简洁的代码。", True),
        ("用户喜欢简洁的代码", "用户讨厌冗长的注释", False),
        ("User prefers clean code style", "User prefers a clean code style", True),
    ],
)
def test_near_duplicates(a: str, b: str, same: bool) -> None:
    assert near_duplicate(a, b) is same


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("用户使用Neovim", "用户喜欢用 Neovim 写代码", True),
        ("User uses Neovim", "用户使用Neovim", True),
        ("User uses nvim", "User mostly writes code with Neovim", True),
        ("User uses Neovim", "User switched to Helix from Neovim", False),
        ("User likes Vim", "User doesn't like Vim", False),
        ("User uses Jest", "User uses Vitest", False),
        ("用户习惯用 Vim 键位", "用户使用Vim", False),
        ("User uses React and TypeScript", "User uses React", False),
        ("User is 28 years old", "User is 29 years old", False),
    ],
)
def test_the_same_fact_in_other_words(a: str, b: str, same: bool) -> None:
    assert same_fact(a, b) is same


def test_the_same_fact_in_another_language_bumps_the_live_item() -> None:
    old = item("m_1", "User uses Neovim", src="s1#t1", at="2026-03-01", type="preference")
    a = plan(mem("用户喜欢用 Neovim 写代码"), [old])
    assert isinstance(a, Bump) and a.item is old
    # A tool and an employer of the same name are two facts.
    employer = item("m_2", "User works at Notion", type="personal")
    assert isinstance(plan(mem("User uses Notion", "skill"), [employer]), Add)


def item(id_: str, text: str, scope: str = "user", **meta: str) -> Existing:
    m = {"id": id_, **meta} if id_ else dict(meta)
    return Existing(id_, f"/m/{id_ or 'hand'}.md", text, m, scope)


def known(id_: str, text: str, scope: str = "user") -> dict[tuple[str, str], Known]:
    h = content_hash(text)
    return {(scope, h): Known(h, id_, text, scope)}


def plan(m: ExtractedMemory, existing: list[Existing], k: dict[tuple[str, str], Known] | None = None,
         at: str = "2026-03-09", src: str = "s2#t9") -> Add | Bump | Skip:  # fmt: skip
    return plan_memory(
        m,
        target_for(m, ROOT, None),
        existing=existing,
        known=k or {},
        new_id="m_new",
        at=at,
        src=src,
    )


def test_new_memory_is_added_with_full_metadata() -> None:
    a = plan(mem("User prefers tabs", imp=12, subject="indent"), [])
    assert isinstance(a, Add)
    assert a.meta == {"id": "m_new", "type": "preference", "imp": "10", "subject": "indent",
                      "src": "s2#t9", "at": "2026-03-09"}  # fmt: skip
    assert a.hash == content_hash("user prefers tabs!")


def test_the_day_said_and_the_day_added_are_kept_apart() -> None:
    m = mem("User prefers tabs")
    a = plan_memory(m, target_for(m, ROOT, None), existing=[], known={}, new_id="m_new",
                    at="2026-03-02", src="s2#t9", added="2026-03-04")  # fmt: skip
    assert isinstance(a, Add) and (a.meta["at"], a.meta["added"]) == ("2026-03-02", "2026-03-04")


def test_near_duplicate_bumps_the_live_item() -> None:
    old = item("m_1", "User prefers clean code style", src="s1#t1", at="2026-03-01")
    a = plan(mem("User prefers a clean code style"), [old], known("m_1", old.text))
    assert isinstance(a, Bump) and a.item is old


def test_same_turns_again_are_a_replay_not_a_repeat() -> None:
    old = item("m_1", "User prefers tabs", src="s2#t8,t9", at="2026-03-09")
    a = plan(mem("User prefers tabs"), [old], known("m_1", old.text))
    assert isinstance(a, Skip) and a.reason == "replay"
    # The same turn id in another session is another turn.
    other = item("m_1", "User prefers tabs", src="s1#t9", at="2026-03-01")
    assert isinstance(plan(mem("User prefers tabs"), [other], known("m_1", old.text)), Bump)


def test_hand_written_duplicate_is_left_alone() -> None:
    a = plan(mem("User prefers tabs"), [item("", "User prefers tabs")])
    assert isinstance(a, Skip) and a.reason == "duplicate"


def test_deleted_by_hand_is_not_resurrected_even_reworded() -> None:
    k = known("m_1", "User's name is Sam")
    for text in ("User's name is Sam", "The user's name is Sam"):
        a = plan(mem(text, "personal", subject="name"), [], k)
        assert isinstance(a, Skip) and a.reason == "forgotten", text


def test_edited_by_hand_stands() -> None:
    edited = item("m_1", "User's name is Samuel", subject="name", at="2026-03-01")
    a = plan(
        mem("User's name is Sam", "personal", subject="name"),
        [edited],
        known("m_1", "User's name is Sam"),
    )
    assert isinstance(a, Skip) and a.reason == "edited"


def test_archived_memory_is_not_added_again() -> None:
    arch = item("m_1", "User likes tea", "archive", archived="2026-02-01")
    a = plan(mem("User likes tea"), [arch], known("m_1", "User likes tea"))
    assert isinstance(a, Skip) and a.reason == "archived"


def test_new_value_supersedes_the_old_one_on_the_same_subject() -> None:
    jest = item("m_1", "User uses Jest", subject="tool:testing", at="2026-03-02")
    other = item("m_2", "User uses VSCode", subject="editor", at="2026-03-02")
    a = plan(mem("User switched to Vitest", "skill", subject="tool:testing"), [jest, other])
    assert isinstance(a, Add) and a.supersedes == (jest,)
    assert "superseded" not in a.meta


def test_an_older_fact_arriving_late_is_written_already_superseded() -> None:
    vitest = item("m_2", "User switched to Vitest", subject="tool:testing", at="2026-03-09")
    a = plan(mem("User uses Jest", "skill", subject="tool:testing"), [vitest], at="2026-03-02")
    assert isinstance(a, Add) and a.supersedes == ()
    assert a.meta["superseded"] == "2026-03-09" and a.meta["by"] == "m_2"


def test_a_superseded_fact_can_become_current_again() -> None:
    jest = item(
        "m_1",
        "User uses Jest",
        subject="tool:testing",
        at="2026-03-02",
        superseded="2026-03-09",
        by="m_2",
    )
    vitest = item("m_2", "User switched to Vitest", subject="tool:testing", at="2026-03-09")
    a = plan(mem("User uses Jest", "skill", subject="tool:testing"), [jest, vitest], known("m_1", "User uses Jest"),
             at="2026-03-20")  # fmt: skip
    assert isinstance(a, Add) and a.supersedes == (vitest,)


def test_scopes_do_not_mix() -> None:
    other_project = item("m_1", "User prefers tabs", "project:shop")
    a = plan(
        mem("User prefers tabs"), [other_project], known("m_1", "User prefers tabs", "project:shop")
    )
    assert isinstance(a, Add)


def test_a_batch_sees_its_own_effects() -> None:
    ms = [mem("User uses Jest", "skill", subject="tool:testing"), mem("User uses Jest", "skill", subject="tool:testing"),
          mem("User switched to Vitest", "skill", subject="tool:testing")]  # fmt: skip
    p = plan_batch([(m, target_for(m, ROOT, None), "2026-03-02", f"s1#t{i}") for i, m in enumerate(ms)],
                   existing=[], known={}, new_id=iter(["m_a", "m_b", "m_c"]))  # fmt: skip
    first, second, third = p.actions
    assert isinstance(first, Add) and isinstance(second, Bump) and second.item.id == "m_a"
    assert isinstance(third, Add) and [e.id for e in third.supersedes] == ["m_a"]


def test_another_number_on_the_same_subject_is_a_new_value_however_alike() -> None:
    due = "date:thesis"
    old = item("m_1", "用户需要交给导师论文初稿（截止 12月5日周六，2026-12-05）", subject=due)
    moved = mem("用户需要交给导师论文初稿（截止 12月12日周六，2026-12-12）", "task", subject=due)
    a = plan(moved, [old], known("m_1", old.text))
    assert isinstance(a, Add) and a.supersedes == (old,)
    # The same numbers on the same subject, or another number without a subject, still repeat.
    again = mem("用户需要交给导师论文初稿（截止 12月5日周六，2026-12-05）。", "task", subject=due)
    assert isinstance(plan(again, [old], known("m_1", old.text)), Bump)
    unkeyed = mem("用户需要交给导师论文初稿（截止 12月12日周六，2026-12-12）", "task")
    assert isinstance(plan(unkeyed, [old], known("m_1", old.text)), Bump)
