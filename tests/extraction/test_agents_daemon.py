"""Agents end to end with a real daemon: pushed turns of two agents, Claude Code transcripts with
sub-agents in a watched folder, the `extract` job, then `relationship`, `context`, `status` and
`memories --scope agent` over the socket and the CLI; a hand-edited trust is built on."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.extraction.claude_logs import subagent, transcript
from tests.utils import DaemonProcess, wait_for

PROJECT = "-home-user-shop"
HOUR = 3600.0


def familiarity(sessions: list[tuple[float, int]], now: float) -> int:
    """docs/agents.md: each session weighs 1 + 0.1 x min(turns, 40), halved every 90 days
    since it ended; familiarity = 100 x (1 - e^(-sum / 40))."""
    x = sum((1 + 0.1 * min(t, 40)) * 0.5 ** ((now - end) / 86400 / 90) for end, t in sessions)
    return round(100 * (1 - math.exp(-x / 40)))


def push(d: DaemonProcess, session: str, agent: str, said: list[str], end: float) -> None:
    turns = [{"session_id": session, "agent_id": agent, "id": f"{session}-{i}",
              "role": "user" if i % 2 == 0 else "assistant", "content": text,
              "ts": end - 20 * (len(said) - 1 - i)} for i, text in enumerate(said)]  # fmt: skip
    assert d.call("ingest", {"turns": turns})["added"] == len(said)


@pytest.fixture
def agents_daemon(home: Path) -> Iterator[DaemonProcess]:
    (home / "claude" / PROJECT).mkdir(parents=True)
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_DIR=str(home / "claude"), MEMD_LOGS_POLL_S="0.3")
    yield d.start()
    if d.proc and d.proc.poll() is None:
        d.stop()


def relationship(d: DaemonProcess, agent: str) -> dict[str, Any]:
    out: dict[str, Any] = d.call("relationship", {"agent_id": agent})
    return out


def sessions_are(d: DaemonProcess, agent: str, n: int) -> Callable[[], bool]:
    """For `wait_for`: the agent's relationship counts `n` sessions."""
    return lambda: relationship(d, agent)["sessions"] == n


def context(d: DaemonProcess, agent: str) -> str:
    res = d.call("context", {"query": "how should you answer me", "agent_id": agent})
    return str(res["text"])


def test_two_agents_and_claude_code_with_sub_agents(
    agents_daemon: DaemonProcess, home: Path
) -> None:
    d = agents_daemon
    now = time.time()
    ends = {"a1": now - 50 * HOUR, "a2": now - 26 * HOUR, "b1": now - 48 * HOUR,
            "b2": now - 24 * HOUR, "c1": now - 5 * HOUR, "c2": now - 3 * HOUR}  # fmt: skip
    push(d, "a1", "ally", ["keep your answers short from now on", "OK.",
                           "rename the loader", "Renamed.", "thank you so much, that worked"], ends["a1"])  # fmt: skip
    push(
        d, "a2", "ally", ["把日志模块重构一下", "好的，已经重构。", "太棒了，非常感谢"], ends["a2"]
    )
    push(d, "b1", "bob", ["fix the flaky test", "Fixed.", "ugh, it still doesn't work"], ends["b1"])
    push(d, "b2", "bob", ["再修一下这个测试", "改好了。", "又错了，说了多少次了"], ends["b2"])

    proj = home / "claude" / PROJECT
    s1, s2 = "11111111-0000-4000-8000-000000000001", "11111111-0000-4000-8000-000000000002"
    transcript(proj / f"{s1}.jsonl", s1, ["why is checkout slow?", "An N+1 query.", "thanks, that fixed it", "Glad to help."], ends["c1"])  # fmt: skip
    transcript(proj / f"{s2}.jsonl", s2, ["add a cache", "Added."], ends["c2"])
    subagent(proj / s1 / "subagents", s1, "a1e", "Explore", 4, ends["c1"] - 60)
    subagent(proj / s2 / "subagents", s2, "b2e", "Explore", 2, ends["c2"] - 60)
    subagent(proj / s2 / "subagents", s2, "b2g", "general-purpose", 6, ends["c2"] - 30)
    subagent(proj, s2, "0ld", None, 2, ends["c2"] - 90)  # an old-layout transcript: no type

    for agent, runs in (("claude-code", 2), ("claude-code-explore", 2),
                        ("claude-code-general-purpose", 1), ("claude-code-subagent", 1)):  # fmt: skip
        wait_for(sessions_are(d, agent, runs), timeout=15)
    job = d.call("run_job", {"name": "extract"})
    assert job["outcome"] == "success", job
    assert job["counts"]["relationships_updated"] == 6, job

    expected = {
        "ally": (2, 8, [(ends["a1"], 5), (ends["a2"], 3)]),
        "bob": (2, 6, [(ends["b1"], 3), (ends["b2"], 3)]),
        "claude-code": (2, 6, [(ends["c1"], 4), (ends["c2"], 2)]),
        "claude-code-explore": (2, 6, [(ends["c1"] - 60, 4), (ends["c2"] - 60, 2)]),
        "claude-code-general-purpose": (1, 6, [(ends["c2"] - 30, 6)]),
        "claude-code-subagent": (1, 2, [(ends["c2"] - 90, 2)]),
    }
    for agent, (sessions, turns, history) in expected.items():
        r = relationship(d, agent)
        assert (r["sessions"], r["turns"]) == (sessions, turns), agent
        assert r["familiarity"] == familiarity(history, time.time()), agent
        first = min(end - 20 * (n - 1) for end, n in history)
        assert r["first_at"] == pytest.approx(first, abs=1), agent  # ISO times: whole seconds
        assert r["last_at"] == pytest.approx(max(end for end, _ in history), abs=1), agent
        text = (d.memory / "agents" / agent / "relationship.md").read_text()
        assert f"- Familiarity: {r['familiarity']}/100" in text, agent
        plural = "session" if sessions == 1 else "sessions"
        assert f"- Total Interactions: {sessions} {plural}, {turns} turns" in text, agent

    # Thanks in English and in Chinese raise trust; frustration in both lowers it.
    ally, bob, cc = relationship(d, "ally"), relationship(d, "bob"), relationship(d, "claude-code")
    # "thank you so much, that worked": thanks 0.8 + praise 0.5 -> +3; "太棒了，非常感谢": praise and
    # thanks, each 0.8 + 0.15 for an intensifier -> +4. "ugh, it still doesn't work" and
    # "又错了，说了多少次了": frustration 0.7 -> -2 each.
    assert ally["trust"] == 50 + 3 + 4 and ally["mood"] == "happy"
    assert bob["trust"] == 50 - 2 - 2 and bob["mood"] == "unhappy"
    assert cc["trust"] == 51 and cc["mood"] == "neutral"  # its last session had no signal
    assert relationship(d, "claude-code-explore")["trust"] is None  # the user never spoke to it
    assert "又错了" in bob["mood_note"] and 'praise, thanks; "太棒了"' in ally["mood_note"]

    # The style request said to ally is ally's, in ally's context only.
    [point] = ally["points"]
    assert "answers short" in point["text"] and point["meta"]["subject"] == "style:length"
    assert "answers short" in context(d, "ally") and "Trust 57/100" in context(d, "ally")
    assert "answers short" not in context(d, "bob") and "answers short" not in context(d, "")
    assert "Trust 46/100" in context(d, "bob")

    # A sub-agent's instructions are counted, never stored as conversation.
    assert not d.call("search", {"query": "step of the search", "scope": "conversations"})["hits"]

    # status and memories --scope agent list every agent seen.
    st = d.call("status")
    assert {a["agent_id"] for a in st["agents"]} == set(expected)
    out = d.cli("status")
    assert out.returncode == 0, out.stderr
    assert "agents: 6 seen" in out.stdout
    assert "  ally: 2 sessions, 8 turns, last" in out.stdout and "trust 57" in out.stdout
    assert "  claude-code-explore (sub-agent): 2 sessions, 6 turns" in out.stdout
    mem = d.cli("memories", "--scope", "agent")
    assert mem.returncode == 0, mem.stderr
    assert "answers short" in mem.stdout and "  bob: 2 sessions, 6 turns" in mem.stdout
    listed = d.call("memories", {"scope": "agent"})
    assert {a["agent_id"] for a in listed["agents"]} == set(expected)
    assert "agents" not in d.call("memories", {})

    # The user sets ally's trust by hand: memd goes on from it.
    path = d.memory / "agents" / "ally" / "relationship.md"
    path.write_text(path.read_text().replace("Trust Level: 57/100", "Trust Level: 80/100"))
    wait_for(lambda: "Trust 80/100" in context(d, "ally"))
    push(d, "a3", "ally", ["add docs for the loader", "Done.", "thanks"], time.time() - HOUR)
    job = d.call("run_job", {"name": "extract"})
    assert job["counts"]["relationship_sessions"] == 1, job
    assert relationship(d, "ally")["trust"] == 81 and relationship(d, "ally")["sessions"] == 3
    assert "- Trust Level: 81/100" in path.read_text()
    again = d.call("run_job", {"name": "extract"})
    assert "relationship_sessions" not in again["counts"] and relationship(d, "ally")["trust"] == 81
