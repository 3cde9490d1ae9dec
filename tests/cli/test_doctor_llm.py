"""`memd doctor` names the LLM backend the daemon uses and why: the Anthropic API (a key),
Claude Code (a logged-in `claude`, the real CLI), an OpenAI-compatible server (a fake one that
answers), the offline rules because nothing was found, and the offline rules asked for — and
fails when a backend asked for cannot work."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_doctor import ANTHROPIC_SECRET, run_doctor
from tests.clis import cli
from tests.fakes.openai_server import FakeOpenAI
from tests.utils import DaemonProcess


def doctor_llm(home: Path, env: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The `llm` check of `memd doctor --json`, with a daemon started with `env` running."""
    d = DaemonProcess(home, env=env).start()
    try:
        _code, checks, raw = run_doctor(home, **env)
        status = d.call("status")["llm"]
    finally:
        d.stop()
    assert ANTHROPIC_SECRET not in raw
    check: dict[str, Any] = checks["llm"]
    assert check["data"]["backend"] == status["backend"], (check, status)
    return check, raw


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def test_the_five_cases(tmp_path: Path, server: FakeOpenAI) -> None:
    nothing = str(tmp_path / "no-claude-here" / "claude")  # this machine has no `claude` then
    claude_home = tmp_path / "claude-user"
    (claude_home / ".claude").mkdir(parents=True)
    # Claude Code logged in through a key helper: memd itself sees no Anthropic key.
    (claude_home / ".claude" / "settings.json").write_text(
        json.dumps({"apiKeyHelper": "echo sk-ant-api03-from-a-helper"})
    )
    claude = str(cli("claude"))
    cases = [
        ({"ANTHROPIC_API_KEY": ANTHROPIC_SECRET, "MEMD_LLM_CLAUDE_PATH": nothing},
         "the daemon uses anthropic claude-haiku-4-5 (auto: an Anthropic key is set"
         " (ANTHROPIC_API_KEY)), key from ANTHROPIC_API_KEY; today 0 LLM requests, 0 of 200,000 tokens"),
        ({"HOME": str(claude_home), "MEMD_LLM_CLAUDE_PATH": claude},
         f"the daemon uses claude-code haiku (auto: Claude Code at {claude} is logged in"
         " (api_key_helper)); today 0 LLM requests, 0 of 200,000 tokens"),
        ({"MEMD_LLM_BASE_URL": server.base_url, "MEMD_LLM_MODEL": "qwen2.5:7b-instruct",
          "MEMD_LLM_CLAUDE_PATH": nothing},
         f"the daemon uses openai qwen2.5:7b-instruct (auto: llm.base_url {server.base_url}"
         " answers); today 0 LLM requests, 0 tokens (a local server: at most 30 requests a minute)"),
        ({"MEMD_LLM_CLAUDE_PATH": nothing},
         f"the daemon uses offline rules (auto: no Anthropic key, {nothing}: cannot be run (No"
         " such file or directory), no llm.base_url)"),
        ({"ANTHROPIC_API_KEY": ANTHROPIC_SECRET, "MEMD_LLM_BACKEND": "off"},
         "the daemon uses offline rules (llm.backend = off)"),
    ]  # fmt: skip
    for i, (env, detail) in enumerate(cases):
        check, raw = doctor_llm(tmp_path / f"memd-{i}", env)
        assert check["status"] == "ok" and check["detail"].startswith(detail), (i, check)
    assert any(r.path == "/v1/models" for r in server.requests)  # auto asked the server


def test_a_backend_asked_for_that_cannot_work_fails(tmp_path: Path, server: FakeOpenAI) -> None:
    claude = str(cli("claude"))
    lonely = tmp_path / "lonely"  # a HOME where Claude Code was never logged in
    lonely.mkdir()
    env = {"HOME": str(lonely), "MEMD_LLM_BACKEND": "claude-code", "MEMD_LLM_CLAUDE_PATH": claude}
    check, raw = doctor_llm(tmp_path / "memd-claude", env)
    assert check["status"] == "fail", check
    assert check["detail"].endswith(f"{claude}: not logged in") and "/login" in check["hint"]
    with FakeOpenAI() as gone:
        url = gone.base_url
    env = {"MEMD_LLM_BACKEND": "openai", "MEMD_LLM_BASE_URL": url, "MEMD_LLM_MODEL": "llama3.2"}
    check, raw = doctor_llm(tmp_path / "memd-server", env)
    assert check["status"] == "fail" and f"no answer from {url}" in check["detail"], check
    # Without a daemon, the settings are judged as they are.
    code, checks, raw = run_doctor(tmp_path / "memd-none", MEMD_LLM_BACKEND="openai",
                                   MEMD_LLM_BASE_URL=server.base_url)  # fmt: skip
    llm = checks["llm"]
    assert llm["status"] == "fail" and "no model configured" in llm["detail"], llm
    assert "no daemon is running" in llm["detail"] and "llm.model" in llm["hint"]
