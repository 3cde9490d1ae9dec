"""The agent tier of `context`: the requesting agent's relationship file only, its status and mood
as two compact lines, and each of its sections once, even when the query matches them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memd.app import Engine
from memd.core.settings import load
from memd.db import Store
from memd.memory.tree import create_tree

ALLY = """# Agent Relationship

## Basic Status
<!-- memd: kept by memd from your conversations. -->
- Trust Level: 62/100
- Familiarity: 40/100
- Total Interactions: 12 sessions, 230 turns
- First Interaction: 2026-01-03
- Last Interaction: 2026-03-02

## Current Mood
- Status: pleased
- Notes: thanked for the parser fix

## Memory Points
- User asks to keep the assistant's answers short <!-- memd id=m_1 type=preference -->

## Our projects
- the parser rewrite
"""


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    s = load()
    create_tree(s.memory_dir)
    for agent, text in (("ally", ALLY), ("bob", "# Bob\n\n## Memory Points\n- Bob uses emojis\n")):
        (s.memory_dir / "agents" / agent).mkdir(parents=True)
        (s.memory_dir / "agents" / agent / "relationship.md").write_text(text)
    eng = Engine(s, Store.open(s.db_path))
    eng.indexer.reconcile()
    return eng


def titles(ctx: dict[str, Any]) -> list[str]:
    return [s["title"] for s in ctx["sections"]]


def test_each_section_once_even_when_the_query_matches_it(engine: Engine) -> None:
    ctx = engine.handle("context", {"query": "answers short parser", "agent_id": "Ally"})
    assert titles(ctx) == [
        "agents/ally/relationship.md › Status",
        "agents/ally/relationship.md › Memory Points",
        "agents/ally/relationship.md › Our projects",
    ]
    assert ctx["text"].count("answers short") == 1


def test_status_and_mood_are_two_compact_lines(engine: Engine) -> None:
    ctx = engine.handle("context", {"query": "", "agent_id": "ally"})
    assert (
        "### agents/ally/relationship.md › Status\n"
        "Trust 62/100 · familiarity 40/100 · 12 sessions, 230 turns (first 2026-01-03,"
        " last 2026-03-02)\nMood: pleased — thanked for the parser fix\n"
    ) in ctx["text"]
    assert "<!--" not in ctx["text"] and "Trust Level" not in ctx["text"]


def test_only_the_requesting_agents_file(engine: Engine) -> None:
    for query in ("", "emojis answers"):
        ally = engine.handle("context", {"query": query, "agent_id": "ally"})["text"]
        bob = engine.handle("context", {"query": query, "agent_id": "bob"})["text"]
        nobody = engine.handle("context", {"query": query})["text"]
        assert "answers short" in ally and "emojis" not in ally
        assert "emojis" in bob and "answers short" not in bob
        assert "answers short" not in nobody and "emojis" not in nobody
