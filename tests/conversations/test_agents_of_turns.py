"""Whose turns: the turn's own agent, a log source's configured agent, Claude Code's; sub-agent
transcripts counted per run without their text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memd.conversations.logs import LogIngestor, LogSource, subagent_type
from memd.conversations.sources import extra_sources
from memd.core.errors import ConfigError
from memd.db import Store
from tests.conversations.helpers import rows
from tests.extraction.claude_logs import subagent, transcript


def line(session: str, text: str, **extra: str) -> str:
    return json.dumps(
        {"session_id": session, "role": "user", "content": text, "ts": 1.0e9, **extra}
    )


def test_a_log_sources_agent_names_the_turns_that_name_none(store: Store, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "chat.jsonl").write_text(
        line("s1", "hello there, cora") + "\n" + line("s2", "hi ally", agent_id="ally") + "\n"
    )
    LogIngestor(store, [LogSource(logs, "jsonl", "cora")]).scan()
    assert rows(store, "SELECT session_id, agent_id FROM sessions ORDER BY session_id") == [
        ("s1", "cora"),
        ("s2", "ally"),
    ]
    assert rows(store, "SELECT DISTINCT agent_id FROM turns ORDER BY 1") == [("ally",), ("cora",)]


def test_sources_from_settings_read_the_agent(tmp_path: Path) -> None:
    [src] = extra_sources([{"path": str(tmp_path), "agent": "cora"}])
    assert (src.format, src.agent) == ("jsonl", "cora")
    with pytest.raises(ConfigError, match=r"logs.sources\[0\]: agent must be a string"):
        extra_sources([{"path": str(tmp_path), "agent": 7}])


def test_claude_code_turns_are_claude_codes_and_sub_agent_runs_are_counted(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    proj = root / "-home-user-shop"
    sid = "33333333-0000-4000-8000-000000000001"
    transcript(proj / f"{sid}.jsonl", sid, ["why is checkout slow?", "An N+1 query."], 1.0e9)
    subagent(proj / sid / "subagents", sid, "e1", "Explore", 3, 1.0e9 - 60)
    subagent(proj, sid, "o1", None, 2, 1.0e9 - 90)
    (proj / sid / "subagents" / "notes.jsonl").write_text("{}\n")  # not a sub-agent transcript
    src = LogSource(root, "claude-code", "claude-code")
    names = sorted(Path(p).name for p in src.files())
    assert names == [f"{sid}.jsonl", "agent-e1.jsonl", "agent-o1.jsonl"]
    LogIngestor(store, [src]).scan()
    assert rows(store, "SELECT session_id, agent_id, turn_count FROM sessions") == [
        (sid, "claude-code", 2)
    ]
    assert rows(store, "SELECT run_id, agent_type, count(*) FROM subagent_turns GROUP BY 1, 2 ORDER BY 1") == [
        ("e1", "Explore", 3),
        ("o1", "", 2),
    ]  # fmt: skip
    assert rows(store, "SELECT count(*) FROM turns WHERE text LIKE '%of the search%'") == [(0,)]


def test_subagent_type_reads_the_meta_file(tmp_path: Path) -> None:
    subagent(tmp_path, "s", "a1", "code-reviewer", 1, 1.0e9)
    assert subagent_type(str(tmp_path / "agent-a1.jsonl")) == "code-reviewer"
    (tmp_path / "agent-a2.meta.json").write_text("not json")
    (tmp_path / "agent-a3.meta.json").write_text('{"agentType": 3}')
    for name in ("agent-a2.jsonl", "agent-a3.jsonl", "agent-a4.jsonl", "session.jsonl"):
        assert subagent_type(str(tmp_path / name)) == ""


def test_a_runs_type_written_after_its_first_lines_names_the_whole_run(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    folder = root / "-p" / "s9" / "subagents"
    subagent(folder, "s9", "late", None, 2, 1.0e9)
    ingestor = LogIngestor(store, [LogSource(root, "claude-code", "claude-code")])
    ingestor.scan()
    assert rows(store, "SELECT agent_type, turns FROM subagent_runs") == [("", 2)]
    log = folder / "agent-late.jsonl"
    (folder / "agent-late.meta.json").write_text('{"agentType": "Plan"}')
    extra = tmp_path / "extra"
    subagent(extra, "s9", "late", None, 3, 1.0e9 + 60)
    log.write_text(log.read_text() + (extra / "agent-late.jsonl").read_text().split("\n", 2)[2])
    ingestor.scan()
    assert rows(store, "SELECT agent_type, turns FROM subagent_runs") == [("Plan", 3)]
    assert rows(store, "SELECT count(*) FROM subagent_turns WHERE agent_type = ''") == [(2,)]
