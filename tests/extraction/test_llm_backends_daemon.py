"""Extraction and summaries through each LLM backend, in a real daemon.

- claude-code: the real `claude` CLI, logged in with a key against a loopback Messages API stub,
  in a HOME whose Claude Code transcripts the daemon tails. A session the user has in Claude
  Code becomes turns, memd's extraction goes through Claude Code and writes typed items, and
  memd's own calls never come back as conversation.
- openai: a fake OpenAI-compatible server with no JSON mode that is rate limited, fails,
  answers too slowly and writes malformed JSON before it answers well.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.memory.parse import split_item
from tests.clis import cli
from tests.fakes import anthropic_server as messages_api
from tests.fakes.anthropic_server import FakeAnthropic, json_reply, text_reply
from tests.fakes.openai_server import FakeOpenAI, chat, chat_json, error, rate_limited, slow
from tests.utils import DaemonProcess, wait_for

SEED = (
    "Hi! My name is Sam, I'm 28 years old, working at ByteDance as a Senior Frontend Engineer. "
    "I mainly use React and TypeScript for development."
)
ITEMS = [
    ("User's name is Sam", "personal", 9, "name"),
    ("User works at ByteDance as a Senior Frontend Engineer", "personal", 8, "employer"),
    ("User mainly uses React and TypeScript", "skill", 7, ""),
]


def answer(ids: list[str] | None = None) -> dict[str, Any]:
    return {"memories": [{"content": c, "type": t, "importance": i, "source_turn_ids": ids or [],
                          "subject": s, "topic": "", "due": ""} for c, t, i, s in ITEMS],
            "signals": []}  # fmt: skip


def items(memory: Path) -> list[tuple[str, dict[str, str]]]:
    """Every item the extraction job wrote in the tree (it records its source on each)."""
    out = []
    for path in sorted(memory.rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = split_item(line)
            if item is not None and item[1].get("src"):
                out.append(item)
    return out


def logs(d: DaemonProcess) -> dict[str, Any]:
    out: dict[str, Any] = d.call("status")["logs"]
    return out


# -- claude-code ---------------------------------------------------------------------------------
def claude_code_env(home: Path, base_url: str) -> dict[str, str]:
    """A user's Claude Code logged in with an API key, talking to the stub, telemetry off."""
    return {"HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-api03-" + "stub" * 10,
            "ANTHROPIC_BASE_URL": base_url, "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}  # fmt: skip


def user_session(claude: Path, project: Path, env: dict[str, str], prompt: str) -> None:
    """The user talks to their Claude Code in a project, as they do every day."""
    import os

    done = subprocess.run([str(claude), "-p", prompt], cwd=project, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_claude_code_extracts_in_a_real_daemon_and_memd_never_reads_its_own_calls(
    tmp_path: Path,
) -> None:
    claude = cli("claude")
    home = tmp_path / "user"  # the HOME of the user's Claude Code, and of the daemon
    (home / ".claude").mkdir(parents=True)
    project = tmp_path / "shop"
    project.mkdir()
    with FakeAnthropic() as stub:
        env = claude_code_env(home, stub.base_url)
        env["MEMD_LLM_BACKEND"], env["MEMD_LLM_CLAUDE_PATH"] = "claude-code", str(claude)
        d = DaemonProcess(tmp_path / "memd", env={**env, "MEMD_LOGS_POLL_S": "0.3"})
        # Should a Claude Code ever keep a transcript of a call made in memd's own folder (here
        # one is run there as a person would, transcript kept), the daemon passes it by.
        private = d.home / "state" / "claude-code"
        private.mkdir(parents=True)
        stub.enqueue(text_reply("{}"))
        user_session(claude, private, env, "a request run in memd's own folder")
        (kept,) = (home / ".claude" / "projects").rglob("*.jsonl")
        assert kept.parent.name.endswith("-memd-state-claude-code"), kept
        d.start()
        try:
            wait_for(lambda: logs(d)["last_scan_at"], 30)  # the first scan read what was there
            assert (logs(d)["sessions"], logs(d)["turns"]) == (0, 0)
            stub.enqueue(text_reply("Nice to meet you, Sam!"))
            user_session(claude, project, env, SEED)
            wait_for(lambda: logs(d)["turns"] >= 2, 30)
            # The subscription's limit is reached: the run waits, nothing is read past...
            limit = "You've hit your limit · resets 3pm"
            stub.enqueue(messages_api.error(429, "rate_limit_error", limit))
            res = d.call("run_job", {"name": "extract"})
            assert res["outcome"] == "deferred" and "resets 3pm" in res["message"], res
            assert items(d.memory) == []
            # ... and the next run, the limit lifted, extracts the same turns.
            stub.enqueue(json_reply(answer(), input_tokens=1500, output_tokens=120))
            res = d.call("run_job", {"name": "extract"})
            assert res["outcome"] == "success", res
            assert "(claude-code haiku)" in res["message"], res
            assert "1 LLM request, 1,620 tokens" in res["message"], res
            assert res["counts"]["added"] == 3 and res["counts"]["llm_requests"] == 1
            # What memd sent Claude Code: its extraction prompt over the user's turns, no tools.
            sent = stub.requests[-1]
            assert "You extract long-term memories" in json.dumps(sent.body["system"])
            assert SEED in json.dumps(sent.body["messages"]) and sent.body.get("tools", []) == []
            got = {text: meta for text, meta in items(d.memory)}
            assert {t: (got[t]["type"], got[t]["imp"]) for t, *_ in ITEMS} == {
                c: (t, str(i)) for c, t, i, _ in ITEMS
            }
            assert got["User's name is Sam"]["subject"] == "name"
            # memd's call left no transcript, and the store holds the user's session only.
            transcripts = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
            assert len(transcripts) == 2 and len(stub.requests) == 4, transcripts
            assert (logs(d)["sessions"], logs(d)["turns"]) == (1, 2)
            said = d.call("recall", {"mode": "topic", "query": "extract long-term memories"})
            assert said["sessions"] == [], said
            status = d.cli("status", env=env).stdout
            assert (
                "llm: claude-code haiku (llm.backend = claude-code); 1 LLM request, 1,620 of"
                in status
            )
            doctor = json.loads(d.cli("doctor", "--json", env=env).stdout)
            llm = next(c for c in doctor["checks"] if c["name"] == "llm")
            assert llm["status"] == "ok" and llm["detail"].startswith(
                "the daemon uses claude-code haiku (llm.backend = claude-code); today 1 LLM"
                " request, 1,620 of 200,000 tokens"
            ), llm
        finally:
            d.stop()


# -- an OpenAI-compatible server -----------------------------------------------------------------
@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(json_modes=set()) as fake:  # a server without any JSON mode
        yield fake


@pytest.fixture
def local_daemon(home: Path, server: FakeOpenAI) -> Iterator[DaemonProcess]:
    d = DaemonProcess(home, MEMD_LLM_BACKEND="openai", MEMD_LLM_BASE_URL=server.base_url,
                      MEMD_LLM_MODEL="qwen2.5:7b-instruct", MEMD_EXTRACT_TIMEOUT_S="2",
                      MEMD_SUMMARY_IDLE_MIN="0")  # fmt: skip
    yield d.start()
    d.stop()


def push(d: DaemonProcess, session: str, *said: str) -> None:
    turns = [{"session_id": session, "id": f"{session}-{i}", "content": text,
              "role": "user" if i % 2 == 0 else "assistant"} for i, text in enumerate(said)]  # fmt: skip
    assert d.call("ingest", {"turns": turns})["added"] == len(said)


def run(d: DaemonProcess, job: str) -> dict[str, Any]:
    out: dict[str, Any] = d.call("run_job", {"name": job})
    return out


def test_an_openai_compatible_server_through_its_faults_in_a_real_daemon(
    local_daemon: DaemonProcess, server: FakeOpenAI
) -> None:
    d = local_daemon
    push(d, "s1", SEED, "Nice to meet you, Sam!")
    # Rate limited: the run waits for the next one, nothing is read past.
    server.enqueue(rate_limited())
    res = run(d, "extract")
    assert res["outcome"] == "retry_later" and "429" in res["message"], res
    server.enqueue(error(500, "CUDA out of memory"))
    assert run(d, "extract")["outcome"] == "retry_later"
    server.enqueue(slow(6.0, chat_json(answer())))
    res = run(d, "extract")
    assert res["outcome"] == "retry_later" and "no answer within 2 s" in res["message"], res
    # Malformed JSON, asked once more, malformed again: the run fails, nothing half written.
    server.enqueue(chat('{"memories": [{"content": "User\'s name is Sam", "type": "perso',
                        finish_reason="length"), chat("Sam is a frontend engineer."))  # fmt: skip
    res = run(d, "extract")
    assert res["outcome"] == "error" and "nothing of this batch was written" in res["message"]
    assert items(d.memory) == []
    # It answers well at last (in a fence, prose after it): the run resumes at the same turns.
    server.enqueue(chat("```json\n" + json.dumps(answer()) + "\n```\nThese are the facts."))
    res = run(d, "extract")
    assert res["outcome"] == "success" and res["counts"]["added"] == 3, res
    assert "(openai qwen2.5:7b-instruct)" in res["message"]
    assert sorted(t for t, _ in items(d.memory)) == sorted(c for c, *_ in ITEMS)
    assert run(d, "extract")["outcome"] == "nothing_to_do"  # nothing read twice
    # Every chat asked for JSON three ways once, then kept to the way that worked (none).
    formats = [r.body.get("response_format", {}).get("type") for r in server.chats]
    assert formats[:3] == ["json_schema", "json_object", None] and set(formats[3:]) == {None}
    llm = d.call("status")["llm"]
    assert llm["backend"] == "openai" and llm["local"] is True and llm["daily_budget"] == 0
    assert llm["requests_today"] == 3  # the answers: two malformed ones and the good one
    # Summaries: a malformed answer twice leaves the session's own summary; a good one lands.
    server.enqueue(chat("Title: Sam"), chat('{"title": "Sam", "summary": '))
    res = run(d, "summarize")
    assert res["outcome"] == "error" and res["counts"]["llm_errors"] == 1, res
    s1 = d.call("recall", {"mode": "session", "session_id": "s1"})["sessions"][0]
    assert s1["summary_kind"] != "llm" and s1["title"] != "Sam"
    push(d, "s2", "We moved the shop database from MySQL to Postgres.", "With pgloader.")
    server.enqueue(rate_limited())
    assert run(d, "summarize")["outcome"] == "retry_later"
    server.enqueue(
        chat_json({"title": "Shop DB to Postgres", "summary": "Moved it with pgloader."})
    )
    res = run(d, "summarize")
    assert res["outcome"] == "success" and res["counts"]["summarized"] == 1, res
    s2 = d.call("recall", {"mode": "session", "session_id": "s2"})["sessions"][0]
    assert (s2["title"], s2["summary"], s2["summary_kind"]) == (
        "Shop DB to Postgres",
        "Moved it with pgloader.",
        "llm",
    )
