"""The claude-code backend with the real `claude` CLI (from the npm registry, installed by
scripts/install-clis) against a loopback Messages API stub that streams its answers.

Claude Code runs logged in with an API key and `ANTHROPIC_BASE_URL` pointing at the stub, in
its own temporary HOME: the stub sees exactly what memd makes Claude Code send, and the HOME
shows what Claude Code wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest

from memd.core.errors import LLMBadAnswer, LLMConfigError, LLMDeferred, LLMError, LLMRetryable
from memd.core.models import Turn
from memd.llm.claude_code import ClaudeCodeBackend, classify
from memd.llm.client import LLM
from memd.llm.prompts import EXTRACT_SYSTEM
from tests.clis import cli
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error,
    json_reply,
    overloaded,
    rate_limited,
    slow,
    text_reply,
)

TS = datetime(2026, 3, 4, 9, 30, tzinfo=UTC).timestamp()
TURNS = [
    Turn("ingest", "s1", "t1", "user", "Hi! I'm Sam, I work at ByteDance and use React.", TS),
    Turn("ingest", "s1", "t2", "assistant", "Nice to meet you, Sam!", TS),
]
ANSWER = {
    "memories": [
        {"content": "User's name is Sam", "type": "personal", "importance": 9,
         "source_turn_ids": ["t1"], "subject": "name", "topic": "", "due": ""},
    ],
    "signals": [],
}  # fmt: skip


def claude_env(home: Path, base_url: str, **more: str) -> dict[str, str]:
    """What a user's Claude Code would see, logged in with a key, talking to the stub."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update({"HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
                "ANTHROPIC_BASE_URL": base_url, "DISABLE_TELEMETRY": "1"})  # fmt: skip
    env.update(more)
    return env


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    return home


def backend(home: Path, server: FakeAnthropic, timeout: float = 60.0, **env: str) -> LLM:
    return LLM(ClaudeCodeBackend(str(cli("claude")), "haiku", cwd=home.parent / "memd-private",
                                 timeout=timeout, env=claude_env(home, server.base_url, **env)))  # fmt: skip


def test_an_extraction_through_claude_code_uses_no_tool_no_hook_and_writes_no_transcript(
    home: Path, server: FakeAnthropic
) -> None:
    marker = home / "hook-fired"
    hook = {"type": "command", "command": f"touch {marker}"}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [hook]}], "UserPromptSubmit": [{"hooks": [hook]}]}}))  # fmt: skip
    (home / ".claude" / "CLAUDE.md").write_text("USER-CLAUDE-MD-MARKER\n")
    server.enqueue(json_reply(ANSWER, input_tokens=812, output_tokens=64))
    res = backend(home, server).extract(TURNS, known=["User lives in Berlin"])
    assert [(m.content, m.type, m.subject) for m in res.memories] == [
        ("User's name is Sam", "personal", "name")
    ]
    assert res.usage.input_tokens >= 812 and res.usage.output_tokens == 64
    (req,) = server.requests
    body = req.body
    assert body["stream"] is True and body.get("tools", []) == []  # no tool can run
    assert "thinking" not in body  # thinking off, as for the API backend
    system = json.dumps(body["system"])
    assert json.dumps(EXTRACT_SYSTEM)[1:200] in system and "Answer with one JSON object" in system
    prompt = body["messages"][0]["content"]
    text = prompt if isinstance(prompt, str) else json.dumps(prompt)
    assert "[t1] user (2026-03-04 09:30 UTC):" in text and "- User lives in Berlin" in text
    assert "USER-CLAUDE-MD-MARKER" not in req.raw.decode()
    assert not marker.exists()  # no hook ran
    # Nothing of memd's call is kept as a Claude Code conversation.
    assert not list((home / ".claude").rglob("*.jsonl"))
    assert not (home / ".claude" / "projects").exists() or not any(
        (home / ".claude" / "projects").iterdir()
    )


def test_an_unreadable_answer_is_asked_again_then_a_bad_answer(
    home: Path, server: FakeAnthropic
) -> None:
    server.enqueue(text_reply("Sure, Sam is great."), text_reply('```json\n{"memories": [\n```'))
    with pytest.raises(LLMBadAnswer, match="asked twice") as info:
        backend(home, server).extract(TURNS)
    assert info.value.requests == 2 and len(server.requests) == 2
    assert "could not be read" in json.dumps(server.requests[1].body["messages"])


@pytest.mark.parametrize(
    ("reply", "kind", "words"),
    [
        (rate_limited(), LLMRetryable, "429"),
        (overloaded(), LLMRetryable, "529"),
        (error(401, "authentication_error", "invalid x-api-key"), LLMConfigError, "401"),
        (error(429, "rate_limit_error", "You've hit your limit · resets 3pm (Europe/Berlin)"),
         LLMDeferred, "resets 3pm"),
    ],
)  # fmt: skip
def test_api_errors_map_to_retry_defer_and_configuration_states(
    home: Path, server: FakeAnthropic, reply: object, kind: type[LLMError], words: str
) -> None:
    server.enqueue(reply)  # type: ignore[arg-type]
    with pytest.raises(kind, match=words) as info:
        backend(home, server).extract(TURNS)
    assert type(info.value) is kind
    assert len(server.requests) == 1  # Claude Code retried nothing on its own
    if kind is LLMConfigError:
        assert "/login" in info.value.hint


def test_not_logged_in_is_a_configuration_error(home: Path, server: FakeAnthropic) -> None:
    llm = backend(home, server)
    env = llm.backend._env  # type: ignore[attr-defined]
    del env["ANTHROPIC_API_KEY"]
    with pytest.raises(LLMConfigError, match="Not logged in") as info:
        llm.extract(TURNS)
    assert "/login" in info.value.hint and server.requests == []


def test_a_timeout_stops_claude_code_and_retries_later(home: Path, server: FakeAnthropic) -> None:
    server.enqueue(slow(60.0, json_reply(ANSWER)))
    before = {p.pid for p in psutil.process_iter()}
    with pytest.raises(LLMRetryable, match="no answer within 8 s"):
        backend(home, server, timeout=8.0).extract(TURNS)
    # This test's: the other test processes of a run start Claude Code too (the live
    # assistants' tests, the daemon's LLM backends), each with a HOME of its own.
    left = [p for p in psutil.process_iter(["name", "cmdline", "environ"])
            if p.pid not in before and "claude" in " ".join(p.info["cmdline"] or [])
            and (p.info["environ"] or {}).get("HOME") == str(home)]  # fmt: skip
    assert left == []


def test_a_missing_command_is_a_configuration_error(tmp_path: Path) -> None:
    llm = LLM(ClaudeCodeBackend(str(tmp_path / "no-claude"), cwd=tmp_path / "private"))
    with pytest.raises(LLMConfigError, match="not found"):
        llm.extract(TURNS)
    with pytest.raises(LLMConfigError, match="not on PATH"):
        ClaudeCodeBackend("", cwd=tmp_path)


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        # Words Claude Code prints, as users have reported them.
        (None, "You've hit your session limit · resets 4:20am (Europe/Warsaw)", LLMDeferred),
        (None, "Claude AI usage limit reached|1766502000", LLMDeferred),
        (None, "API Error: Rate limit reached", LLMRetryable),
        (None, "API Error: Connection refused — a firewall or proxy may be blocking it "
               "(ECONNREFUSED)", LLMRetryable),
        (None, "Not logged in · Please run /login", LLMConfigError),
        (None, "error: unknown option '--no-session-persistence'", LLMConfigError),
        (404, "There's an issue with the selected model (claude-haiku-9).", LLMConfigError),
        (500, "API Error: 500 Internal server error", LLMRetryable),
        (None, "something nobody has seen", LLMError),
    ],
)  # fmt: skip
def test_classify_claude_codes_words(status: int | None, text: str, kind: type[LLMError]) -> None:
    assert type(classify(status, text, 1)) is kind
