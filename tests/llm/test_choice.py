"""`llm.backend` and its `auto` order: the settings a person writes, the probes' answers given
(the probes themselves run against the real `claude` CLI and a real server in
tests/cli/test_doctor_llm.py), the backend and the words that say why."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core.errors import ConfigError, LLMConfigError
from memd.core.settings import Settings, load
from memd.llm.choice import Choice, Undecided, build, choose, forget_probes, model_for

ANTHROPIC = "sk-ant-api03-" + "x" * 20


def settings(tmp_path: Path, **env: str) -> Settings:
    return load(env={"MEMD_HOME": str(tmp_path), **env})


def pick(s: Settings, claude: bool = False, server: bool = False) -> Choice:
    return choose(s, claude_probe=lambda cmd: (claude, "logged in (claude.ai)" if claude else
                                               "not logged in"),
                  server_probe=lambda url, key: (server, f"{url} answers" if server else
                                                 f"no answer from {url} (ConnectError)"))  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_probes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no `claude` of this machine's
    forget_probes()


def test_auto_takes_a_key_then_claude_code_then_a_server_then_nothing(tmp_path: Path) -> None:
    claude = str(tmp_path / "bin" / "claude")
    both = {"MEMD_LLM_CLAUDE_PATH": claude, "MEMD_LLM_BASE_URL": "http://127.0.0.1:11434/v1",
            "MEMD_LLM_MODEL": "qwen2.5:7b-instruct"}  # fmt: skip
    c = pick(settings(tmp_path, MEMD_LLM_API_KEY=ANTHROPIC, **both), claude=True, server=True)
    assert (c.backend, c.why, c.key_source) == (
        "anthropic",
        "auto: an Anthropic key is set (llm.api_key)",
        "llm.api_key",
    )
    forget_probes()
    c = pick(settings(tmp_path, **both), claude=True, server=True)
    assert (c.backend, c.model, c.where) == ("claude-code", "qwen2.5:7b-instruct", claude)
    assert c.why == f"auto: Claude Code at {claude} is logged in (claude.ai)"
    assert "llm.backend = openai" in c.note  # the server is named, and left unused
    forget_probes()
    c = pick(settings(tmp_path, **both), claude=False, server=True)
    assert (c.backend, c.local, c.why) == (
        "openai",
        True,
        "auto: llm.base_url http://127.0.0.1:11434/v1 answers",
    )
    forget_probes()
    c = pick(settings(tmp_path, **both))
    assert c.backend == "off" and c.why == (
        f"auto: no Anthropic key, {claude}: not logged in, and no answer from"
        " http://127.0.0.1:11434/v1 (ConnectError)")  # fmt: skip
    c = pick(settings(tmp_path))
    assert c.why == "auto: no Anthropic key, no `claude` command, no llm.base_url"


def test_a_key_that_goes_with_a_server_is_not_taken_for_an_anthropic_key(tmp_path: Path) -> None:
    s = settings(tmp_path, MEMD_LLM_API_KEY="sk-or-v1-abc", MEMD_LLM_MODEL="qwen/qwen-2.5-7b",
                 MEMD_LLM_BASE_URL="https://openrouter.ai/api/v1")  # fmt: skip
    c = pick(s, server=True)
    assert (c.backend, c.local, c.key_source) == ("openai", False, "llm.api_key")
    # The old names still work, and a key without a server is the Anthropic API's, as before.
    c = pick(settings(tmp_path, MEMD_EXTRACT_API_KEY="k-without-prefix"))
    assert (c.backend, c.key_source, c.model) == (
        "anthropic",
        "extract.api_key",
        "claude-haiku-4-5",
    )


def test_the_environment_key_with_a_server_url_keeps_todays_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC)
    c = pick(settings(tmp_path, MEMD_EXTRACT_BASE_URL="http://127.0.0.1:9/proxy"), server=True)
    assert c.backend == "anthropic" and c.where == "http://127.0.0.1:9/proxy"
    c = pick(settings(tmp_path, MEMD_LLM_BASE_URL="http://127.0.0.1:11434/v1"), server=True)
    assert c.backend == "anthropic" and "set llm.backend = openai" in c.note


def test_a_backend_asked_for_is_taken_as_it_is(tmp_path: Path) -> None:
    for name in ("anthropic", "claude-code", "openai", "off"):
        c = pick(settings(tmp_path, MEMD_LLM_BACKEND=name), claude=True, server=True)
        assert (c.backend, c.why) == (name, f"llm.backend = {name}")
    s = settings(tmp_path, MEMD_LLM_BACKEND="claude-code")
    with pytest.raises(LLMConfigError, match="not on PATH"):
        build(s, choose(s))
    s = settings(tmp_path, MEMD_LLM_BACKEND="anthropic")
    with pytest.raises(LLMConfigError, match="no Anthropic API key"):
        build(s, choose(s))
    with pytest.raises(ConfigError, match="llm.backend: one of"):
        settings(tmp_path, MEMD_LLM_BACKEND="ollama")


def test_models(tmp_path: Path) -> None:
    s = settings(tmp_path)
    assert [model_for(s, b) for b in ("anthropic", "claude-code", "openai")] == [
        "claude-haiku-4-5", "haiku", ""]  # fmt: skip
    s = settings(tmp_path, MEMD_EXTRACT_MODEL="claude-sonnet-4-5")
    assert {model_for(s, b) for b in ("anthropic", "claude-code", "openai")} == {
        "claude-sonnet-4-5"
    }
    s = settings(tmp_path, MEMD_LLM_MODEL="sonnet")
    assert model_for(s, "claude-code") == "sonnet"


def test_status_never_waits_for_a_probe(tmp_path: Path) -> None:
    s = settings(tmp_path, MEMD_LLM_CLAUDE_PATH=str(tmp_path / "claude"))
    with pytest.raises(Undecided):
        choose(s, cached_only=True)
    pick(s, claude=True)  # the daemon's first choice keeps the probe's answer
    assert choose(s, cached_only=True).backend == "claude-code"
