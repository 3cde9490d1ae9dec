"""Agents' relationship files kept by the extraction job: counts, familiarity, trust, mood and
memory points, per agent. Real SQLite, real Markdown files, a fake clock (and a fake Anthropic
API for the model's signals)."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest

from memd.conversations import repo as conversations
from memd.conversations.ingest import write_turns
from memd.core.models import JobOutcome, Turn
from memd.extraction import agents
from memd.extraction.job import run_extraction
from memd.extraction.repo import advance_cursor
from memd.history import Cause
from memd.llm.answers import EXTRACTION_SCHEMA
from memd.memory.context import ContextRequest, build_context
from memd.memory.files import MemoryFiles
from memd.memory.relationship import read_relationship
from tests.extraction.claude_logs import subagent, transcript
from tests.fakes.anthropic_server import FakeAnthropic, json_reply
from tests.jobenv import Env

MIN = 60.0


def chat(env: Env, session: str, agent: str, *said: str, ended_min_ago: float = 30) -> list[str]:
    """Turns of one session, user and assistant in turn (user first), 30 s apart, the last
    `ended_min_ago` minutes before now; returns their ids."""
    end = env.clock() - ended_min_ago * MIN
    turns, ids = [], []
    for i, text in enumerate(said):
        tid = f"{session}-{len(conversations.turns_of(env.engine.store.read(), session)) + i}"
        ids.append(tid)
        role = "user" if i % 2 == 0 else "assistant"
        ts = end - 30 * (len(said) - 1 - i)
        turns.append(Turn("ingest", session, tid, role, text, ts, agent_id=agent))
    env.engine.store.w.run(lambda c: write_turns(c, turns, now=env.clock()))
    return ids


def rel(env: Env, agent: str) -> str:
    return env.read(f"agents/{agent}/relationship.md")


def trust(env: Env, agent: str) -> int | None:
    return read_relationship(rel(env, agent)).trust


def context(env: Env, agent: str) -> str:
    req = ContextRequest(query="how should you answer", agent_id=agent, today=env.clock.date())
    return build_context(env.engine.store.read(), req).text


def extract(env: Env) -> None:
    res = run_extraction(env.ctx())
    assert res.outcome in (JobOutcome.SUCCESS, JobOutcome.NOTHING_TO_DO), res


def test_interactions_and_familiarity_per_agent(env: Env) -> None:
    chat(env, "a1", "ally", "fix the parser", "done", "and the lexer", ended_min_ago=60 * 24)
    chat(env, "a2", "Ally", "write a test for it", "here it is")
    chat(env, "b1", "bob", "plan the release", "ok", "add a changelog", "added")
    extract(env)

    ally, bob = read_relationship(rel(env, "ally")), read_relationship(rel(env, "bob"))
    assert ally.interactions == "2 sessions, 5 turns" and bob.interactions == "1 session, 4 turns"
    day = env.clock.date()
    assert (ally.first, ally.last) == (
        (day.fromordinal(day.toordinal() - 1)).isoformat(),
        day.isoformat(),
    )
    # 1 + 0.1 x turns per session, halved every 90 days since it ended; 100(1 - e^(-x/40)).
    x_ally = 1.3 * 0.5 ** ((1 + 30 / 1440) / 90) + 1.2 * 0.5 ** ((30 / 1440) / 90)
    assert ally.familiarity == round(100 * (1 - math.exp(-x_ally / 40))) == 6
    assert bob.familiarity == round(100 * (1 - math.exp(-1.4 * 0.5 ** (30 / 1440 / 90) / 40)))
    assert ally.trust == bob.trust == 50 and ally.mood == bob.mood == "neutral"
    assert not (env.memory / "agents" / "Ally").exists()


@pytest.mark.parametrize(
    ("thanks", "frustration"),
    [
        ("thank you so much, that worked", "ugh, it still doesn't work"),
        ("太棒了，非常感谢", "又错了，说了多少次了"),
    ],
    ids=["english", "chinese"],
)
def test_trust_up_after_thanks_and_down_after_frustration(
    env: Env, thanks: str, frustration: str
) -> None:
    chat(env, "a1", "ally", "rename the config loader", "renamed", thanks)
    chat(env, "b1", "bob", "rename the config loader", "renamed", frustration)
    extract(env)
    ally_trust, bob_trust = trust(env, "ally"), trust(env, "bob")
    assert ally_trust is not None and bob_trust is not None
    assert ally_trust > 50 > bob_trust
    ally, bob = read_relationship(rel(env, "ally")), read_relationship(rel(env, "bob"))
    assert ally.mood in ("pleased", "happy") and bob.mood in ("unhappy", "frustrated")
    assert "rename the config loader" in ally.mood_note


def test_a_session_moves_trust_once_after_it_has_ended(env: Env) -> None:
    chat(env, "a1", "ally", "add retries", "added", "thanks!", ended_min_ago=2)
    extract(env)
    assert trust(env, "ally") == 50 and read_relationship(rel(env, "ally")).mood == ""
    env.clock.advance(minutes=15)  # summary.idle_min (10) without a turn: the session is over
    extract(env)
    assert trust(env, "ally") == 51 and read_relationship(rel(env, "ally")).mood == "pleased"
    before = rel(env, "ally")
    extract(env)
    extract(env)
    assert rel(env, "ally") == before

    # Taken up again the next day: only its new part counts.
    env.clock.advance(days=1)
    chat(env, "a1", "ally", "the retries loop forever", "fixed", "it still doesn't work!!")
    extract(env)
    assert trust(env, "ally") == 51 - 3
    assert read_relationship(rel(env, "ally")).mood == "unhappy"


def test_a_hand_edited_trust_is_where_memd_goes_on_from(env: Env) -> None:
    chat(env, "a1", "ally", "add retries", "added", "thanks")
    extract(env)
    assert trust(env, "ally") == 51
    path = env.memory / "agents" / "ally" / "relationship.md"
    path.write_text(
        path.read_text()
        .replace("Trust Level: 51/100", "Trust Level: 80")
        .replace("Status: pleased", "Status: I decide")
    )
    extract(env)  # nothing new: the edits stand
    assert trust(env, "ally") == 80 and "Trust Level: 80/100\n" in rel(env, "ally")
    assert read_relationship(rel(env, "ally")).mood == "I decide"

    env.clock.advance(days=1)
    chat(env, "a2", "ally", "write the docs", "written", "perfect, thanks a lot")
    extract(env)
    assert trust(env, "ally") == 80 + 3
    assert read_relationship(rel(env, "ally")).mood == "happy"


def test_a_deleted_status_section_comes_back_with_the_last_trust(env: Env) -> None:
    chat(env, "a1", "ally", "add retries", "added", "thanks")
    extract(env)
    path = env.memory / "agents" / "ally" / "relationship.md"
    text = path.read_text()
    path.write_text("# Ally\n\nMy notes.\n" + text[text.index("## Current Mood") :])
    env.clock.advance(days=1)
    chat(env, "a2", "ally", "more retries", "added", "thanks")
    extract(env)
    out = rel(env, "ally")
    assert out.startswith("# Ally\n\nMy notes.\n\n## Basic Status\n") and trust(env, "ally") == 52


@pytest.mark.parametrize(
    ("request_", "subject"),
    [("keep your answers short from now on", "style:length"), ("别用表情", "style:emoji")],
)
def test_a_style_request_goes_to_that_agents_points(env: Env, request_: str, subject: str) -> None:
    chat(env, "a1", "ally", request_, "OK")
    chat(env, "b1", "bob", "what time is it in Tokyo?", "3 pm")
    extract(env)
    [point] = read_relationship(rel(env, "ally")).points
    assert point.meta["subject"] == subject and point.meta["src"] == "a1#a1-0"
    assert "## Memory Points" not in rel(env, "bob")
    assert point.text not in env.read("_core/preferences.md")
    assert point.text in context(env, "ally") and point.text not in context(env, "bob")
    assert "Trust 50/100 · familiarity" in context(env, "ally")


def test_a_later_request_supersedes_the_earlier_point(env: Env) -> None:
    chat(env, "a1", "ally", "keep your answers short from now on", "OK")
    extract(env)
    env.clock.advance(days=1)
    chat(env, "a2", "ally", "actually, be more detailed in your explanations", "Sure")
    extract(env)
    [point] = read_relationship(rel(env, "ally")).points
    assert "more detailed" in point.text
    assert "superseded=" in rel(env, "ally") and "answers short" in rel(env, "ally")
    assert "answers short" not in context(env, "ally")


def test_without_an_agent_points_stay_in_the_users_preferences(env: Env) -> None:
    env.say("s1", "keep your answers short from now on")
    extract(env)
    assert "answers short" in env.read("_core/preferences.md")
    assert list((env.memory / "agents").glob("*/relationship.md")) == []


def test_sub_agents_get_counts_and_no_trust(env: Env) -> None:
    now = env.clock() - 3600
    rows = [("s1", "r1", f"t{i}", "Explore", "user" if i % 2 else "assistant", now + i)
            for i in range(4)] + [("s1", "r2", "t1", "", "user", now)]  # fmt: skip
    env.engine.store.w.run(lambda c: conversations.add_subagent_turns(c, rows))
    extract(env)
    explore = read_relationship(rel(env, "claude-code-explore"))
    assert explore.interactions == "1 session, 4 turns" and explore.trust is None
    assert "Trust" not in rel(env, "claude-code-explore")
    assert read_relationship(rel(env, "claude-code-subagent")).interactions == "1 session, 1 turn"


def test_one_agent_that_cannot_be_written_does_not_stop_the_others(env: Env) -> None:
    (env.memory / "agents").mkdir(exist_ok=True)
    (env.memory / "agents" / "ally").write_text("a file where a folder should be")
    chat(env, "a1", "ally", "add retries", "added", "thanks")
    chat(env, "b1", "bob", "add retries", "added", "thanks")
    res = run_extraction(env.ctx())
    assert res.counts["relationship_errors"] == 1 and "ally" in res.message
    assert trust(env, "bob") == 51


def test_the_models_signals_move_trust(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    ids = chat(env, "a1", "ally", "please rename the loader module for me",
               "Renamed.", "that is exactly what I needed, brilliant work", "Glad to help.",
               "thanks!")  # fmt: skip
    signal = {"kind": "praise", "turn_id": ids[2], "strength": 0.9, "evidence": "brilliant work"}
    stray = {"kind": "thanks", "turn_id": ids[1], "strength": 1, "evidence": "assistant turn"}
    server.enqueue(json_reply({"memories": [], "signals": [signal, stray]}))
    extract(env)
    body = server.requests[0].body
    assert body["output_config"]["format"]["schema"] == EXTRACTION_SCHEMA
    assert "signals" in EXTRACTION_SCHEMA["required"]
    sent = body["messages"][0]["content"]
    assert "brilliant work" in sent and "thanks!" not in sent  # short turns are never sent
    # The model's praise (0.9) and the rules' "thanks!" (0.5): 2 x 1.4 = 2.8 -> +3.
    assert trust(env, "ally") == 53
    note = read_relationship(rel(env, "ally")).mood_note
    assert "praise, thanks" in note and "brilliant work" in note


def test_an_answer_without_signals_still_works(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    chat(env, "a1", "ally", "please rename the loader module for me", "Renamed.", "thanks")
    server.enqueue(json_reply({"memories": []}))
    extract(env)
    assert trust(env, "ally") == 51


def test_rewrite_applies_the_change_again_after_a_concurrent_edit(tmp_path: Path) -> None:
    path = tmp_path / "relationship.md"
    path.write_text("# Ally\n\n- Trust Level: 50/100\n")
    calls = []

    def change(old: str) -> str:
        calls.append(old)
        if len(calls) == 1:  # the user saves while memd works
            path.write_text(old.replace("50/100", "70/100") + "- my line\n")
        return old.replace("/100", "/100 (seen)")

    written = agents.rewrite(MemoryFiles([tmp_path]), path, change, Cause.EXTRACT)
    assert len(calls) == 2 and written == path.read_text()
    assert written == "# Ally\n\n- Trust Level: 70/100 (seen)\n- my line\n"


def test_rewrite_leaves_a_file_being_saved_alone(tmp_path: Path) -> None:
    path = tmp_path / "relationship.md"
    path.write_text("")
    assert (
        agents.rewrite(MemoryFiles([tmp_path]), path, lambda old: old + "template\n", Cause.EXTRACT)
        is None
    )
    assert path.read_text() == ""
    old = time.time() - 60
    os.utime(path, (old, old))
    assert (
        agents.rewrite(MemoryFiles([tmp_path]), path, lambda old: old + "status\n", Cause.EXTRACT)
        == "status\n"
    )


def test_an_imported_project_folder_counts_its_sub_agent_runs(env: Env, tmp_path: Path) -> None:
    folder = tmp_path / "-home-user-shop"
    sid = "22222222-0000-4000-8000-000000000001"
    end = env.clock() - 2 * 3600
    transcript(folder / f"{sid}.jsonl", sid, ["why is checkout slow?", "An N+1 query."], end)
    subagent(folder / sid / "subagents", sid, "x1", "Explore", 3, end - 60)
    subagent(folder, sid, "old1", None, 2, end - 90)
    res = env.engine.handle("import", {"path": str(folder)})
    assert res["files"] == 3 and res["sessions"] == 1
    extract(env)
    assert read_relationship(rel(env, "claude-code")).interactions == "1 session, 2 turns"
    assert read_relationship(rel(env, "claude-code-explore")).interactions == "1 session, 3 turns"
    assert read_relationship(rel(env, "claude-code-subagent")).interactions == "1 session, 2 turns"
    hits = env.engine.handle("search", {"query": "step of the search", "scope": "conversations"})
    assert hits["hits"] == []
    again = env.engine.handle("import", {"path": str(folder)})
    assert again["added"] == 0
    extract(env)
    assert read_relationship(rel(env, "claude-code-explore")).interactions == "1 session, 3 turns"


def test_sessions_extracted_on_another_device_do_not_move_trust_again(env: Env) -> None:
    # An import of a memd export brings sessions already extracted (and applied) at home, and
    # the relationship file written there: this device leaves both as they are.
    chat(env, "a1", "ally", "add retries", "added", "thanks, perfect")
    home = agents.relationship_file(env.memory, "ally")
    home.parent.mkdir(parents=True)
    home.write_text("# Agent Relationship\n\n## Current Mood\n- Status: happy\n- Notes: at home\n")
    last = env.max_turn("a1")
    env.engine.store.w.run(lambda c: advance_cursor(c, "a1", last))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.NOTHING_TO_DO and res.counts["relationship_sessions"] == 0
    assert trust(env, "ally") == 50 and read_relationship(rel(env, "ally")).mood == "happy"
    assert "Notes: at home" in rel(env, "ally")
