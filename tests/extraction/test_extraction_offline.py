"""The extraction job with the offline rules: seed 004 end to end, Chinese, supersession, dedupe,
hand edits, recalled text, projects. Real SQLite, real Markdown files, a fake clock."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from memd.core.models import JobOutcome
from memd.extraction.job import run_extraction
from memd.memory.context import FENCE_CLOSE, FENCE_OPEN
from memd.memory.parse import split_item
from tests.jobenv import Env
from tests.jobenv import file_items as items
from tests.jobenv import item_meta as find

# The seed's message as one chat message (the seed document wraps it over four lines).
SEED_004 = (
    "Hi! My name is Sam, I'm 28 years old, working at ByteDance as a Senior Frontend Engineer. "
    "I mainly use React and TypeScript for development. Recently I'm working on a project called CKS Lite, "
    "which is an AI workbench built with React + Tauri + Python. "
    "I prefer clean code style and usually work with VSCode."
)


def test_seed_004_lands_in_the_right_files(env: Env) -> None:
    (s1_turn,) = env.say("s1", SEED_004)
    env.say("s1", "Nice to meet you, Sam! How can I help with CKS Lite?", role="assistant")
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS, res
    assert res.counts["added"] == 9 and res.counts["sessions"] == 1 and res.counts["turns"] == 2
    day = env.clock.day()
    expected = {
        "_core/profile.md": [
            ("User's name is Sam", "personal", "9"),
            ("User is 28 years old", "personal", "6"),
            ("User works at ByteDance", "personal", "8"),
            ("User works as a Senior Frontend Engineer", "personal", "8"),
            ("User mainly uses React and TypeScript for development", "skill", "7"),
        ],
        "_core/preferences.md": [
            ("User prefers clean code style", "preference", "5"),
            ("User usually works with VSCode", "preference", "5"),
        ],
        "topics/cks-lite.md": [
            ("User is working on a project called CKS Lite, an AI workbench", "project", "7"),
            ("CKS Lite is built with React + Tauri + Python", "project", "6"),
        ],
    }
    for rel, want in expected.items():
        for text, type_, imp in want:
            meta = find(env, rel, text)
            assert meta["type"] == type_ and meta["imp"] == imp, (text, meta)
            assert meta["src"] == f"s1#{s1_turn}" and meta["at"] == day
            assert re.fullmatch(r"m_[0-9a-f]{8}", meta["id"])
    assert find(env, "_core/profile.md", "User's name is Sam")["subject"] == "name"
    # The basic facts sit under the template's headings; the template front matter is intact.
    profile = env.read("_core/profile.md")
    assert profile.startswith(
        "---\ntype: profile\npinned: true\n---\n# User Profile\n\n## Basic Info\n- User's name is Sam"
    )
    assert "## Skills\n- User mainly uses React" in profile
    assert env.cursor("s1") == env.max_turn("s1")
    # Indexed at once: search and context see the new memories without waiting for the watcher.
    hits = env.engine.handle("search", {"query": "ByteDance"})["hits"]
    assert any(h["path"].endswith("_core/profile.md") for h in hits)
    assert "User works at ByteDance" in env.engine.handle("context", {})["text"]


def test_chinese_statements(env: Env) -> None:
    env.say("zh", "我叫晓力", "我喜欢简洁的代码，不要写太多注释")
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS
    assert find(env, "_core/profile.md", "用户的名字是晓力")["type"] == "personal"
    assert find(env, "_core/preferences.md", "用户喜欢简洁的代码")["type"] == "preference"
    assert find(env, "_core/preferences.md", "用户希望不要写太多注释")["imp"] == "5"


def test_jest_then_vitest_a_week_later_supersedes_with_a_trail(env: Env) -> None:
    env.say("monday", "I use jest")
    assert run_extraction(env.ctx()).counts["added"] == 1
    jest = find(env, "_core/profile.md", "User uses Jest")
    assert jest["subject"] == "tool:testing"
    env.clock.advance(days=7)
    env.say("next-monday", "I switched to vitest")
    res = run_extraction(env.ctx())
    assert res.counts["added"] == 1 and res.counts["superseded"] == 1
    week_later = env.clock.day()
    vitest = find(env, "_core/profile.md", "User switched to Vitest")
    old = find(env, "_core/profile.md", "User uses Jest")  # still there, text kept
    assert old["id"] == jest["id"] and old["superseded"] == week_later and old["by"] == vitest["id"]
    assert "superseded" not in vitest
    text = env.engine.handle("context", {})["text"]
    assert "User switched to Vitest" in text and "Jest" not in text
    listed = env.engine.handle("memories", {})["items"]
    assert [i["text"] for i in listed if "Jest" in i["text"]] == []
    assert any("Jest" in i["text"] for i in env.engine.handle("memories", {"all": True})["items"])


def test_a_repeat_is_merged_not_added(env: Env) -> None:
    env.say("a", "I live in Berlin")
    run_extraction(env.ctx())
    env.clock.advance(days=2)
    env.say("b", "I live in Berlin, by the way.")
    res = run_extraction(env.ctx())
    assert res.counts["added"] == 0 and res.counts["merged"] == 1
    lines = [t for t, _ in items(env, "_core/profile.md")]
    assert lines.count("User lives in Berlin") == 1
    meta = find(env, "_core/profile.md", "User lives in Berlin")
    assert meta["hits"] == "2" and meta["seen"] == env.clock.day()


def test_hand_deleted_and_hand_edited_lines_are_respected(env: Env) -> None:
    env.say("s1", "My name is Sam. I use jest. I live in Berlin.")
    assert run_extraction(env.ctx()).counts["added"] == 3
    profile = env.memory / "_core" / "profile.md"
    text = profile.read_text()
    # By hand: delete the jest line, rewrite the name.
    text = "\n".join(line for line in text.split("\n") if "Jest" not in line)
    text = text.replace("- User's name is Sam ", "- User's name is Samuel (Sam for friends) ")
    profile.write_text(text)
    env.clock.advance(days=1)
    env.say("s2", "My name is Sam and I use jest.")
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS
    assert res.counts["added"] == 0 and res.counts["kept_hand_edits"] == 2, res
    after = profile.read_text()
    assert "Jest" not in after
    assert (
        "User's name is Samuel (Sam for friends)" in after and "- User's name is Sam <" not in after
    )
    assert "User lives in Berlin" in after


def test_recalled_memory_and_trivial_turns_are_not_extracted(env: Env) -> None:
    env.say("s0", "My name is Sam.")
    run_extraction(env.ctx())
    block = (
        FENCE_OPEN
        + "## What the user told you before\n- User works at Initech\n- My name is Bob\n"
        + FENCE_CLOSE
    )
    env.say("s1", f"{block}\nI live in Lisbon.", "thanks!", "ok 👍")
    env.say("s1", "- User's name is Sam", role="user")  # an echo of a stored memory
    res = run_extraction(env.ctx())
    assert res.counts["added"] == 1 and res.counts["skipped_turns"] == 3, res
    profile = env.read("_core/profile.md")
    assert "Lisbon" in profile and "Initech" not in profile and "Bob" not in profile
    assert [t for t, _ in items(env, "_core/profile.md")].count("User's name is Sam") == 1


def test_project_sessions_write_to_the_project_memory(env: Env, tmp_path: Path) -> None:
    ws = tmp_path / "home" / "shop"  # a workspace below the user's home
    (ws / ".memd" / "memory").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    env.say("p1", "I'm working on a project called Storefront.", project=str(ws / "src"))
    env.say("p2", "I'm working on a project called Backoffice.", project="billing")
    res = run_extraction(env.ctx())
    assert res.counts["added"] == 2, res
    meta = find_path(
        ws / ".memd" / "memory" / "context.md", "User is working on a project called Storefront"
    )
    assert meta["type"] == "project"
    assert find(
        env, "projects/billing/context.md", "User is working on a project called Backoffice"
    )
    hits = env.engine.handle("search", {"query": "Storefront"})["hits"]
    assert any(".memd/memory/context.md" in h["path"] for h in hits)


def find_path(path: Path, text: str) -> dict[str, str]:
    for line in path.read_text().split("\n"):
        it = split_item(line)
        if it is not None and it[0] == text:
            return it[1]
    raise AssertionError(f"{text!r} not in {path}:\n{path.read_text()}")


def test_switched_off_memory_extracts_nothing(env: Env) -> None:
    env.say("s1", "My name is Sam.")
    env.engine.handle("set_enabled", {"enabled": False})
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.NOTHING_TO_DO and "off" in res.message
    assert env.cursor("s1") == 0
    env.engine.handle("set_enabled", {"enabled": True})
    assert run_extraction(env.ctx()).counts["added"] == 1
    assert run_extraction(env.ctx()).outcome is JobOutcome.NOTHING_TO_DO


def test_status_reports_offline_mode(env: Env) -> None:
    st = env.engine.handle("status", {})
    assert st["llm"]["mode"] == "offline rules" and st["llm"]["tokens_today"] == 0
    assert set(st["jobs"]) >= {"extract", "summarize", "archive"}
    json.dumps(st)


def test_an_item_keeps_the_day_it_was_said_and_the_day_it_was_added(env: Env) -> None:
    said = env.clock.day()
    env.say("s1", "My name is Sam.")
    env.clock.advance(days=2)  # the turn is read two days after it was said
    assert run_extraction(env.ctx()).counts["added"] == 1
    meta = find(env, "_core/profile.md", "User's name is Sam")
    assert meta["at"] == said and meta["added"] == env.clock.day() != said
    listed = env.engine.handle("memories", {})["items"]
    assert [i["meta"]["at"] for i in listed if i["text"] == "User's name is Sam"] == [said]


def test_one_sentence_gives_one_memory_per_fact(env: Env) -> None:
    env.say("s1", "我喜欢用 Neovim 写代码。")
    assert run_extraction(env.ctx()).counts["added"] == 1
    said = [t for t, _ in items(env, "_core/preferences.md") + items(env, "_core/profile.md")]
    assert len([t for t in said if "Neovim" in t]) == 1, said


def test_the_same_fact_in_another_language_is_a_repeat(env: Env) -> None:
    env.say("s1", "I use Neovim for everything.")
    assert run_extraction(env.ctx()).counts["added"] == 1
    env.clock.advance(days=1)
    env.say("s2", "我平时用 Neovim 写代码。")
    res = run_extraction(env.ctx())
    assert (res.counts["added"], res.counts["merged"]) == (0, 1)
    texts = [(t, m) for t, m in items(env, "_core/preferences.md") if "Neovim" in t]
    assert len(texts) == 1 and texts[0][1]["hits"] == "2", texts
