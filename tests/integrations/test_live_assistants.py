"""The real Codex CLI, Gemini CLI and OpenCode, driven headless against a loopback stub of their
model APIs, on a fresh HOME where memd started before the assistant's folder existed.

For each: `memd integrate <assistant>` wires it; the first request the CLI sends carries a memory
remembered beforehand and memd's MCP tools; the session log the CLI wrote is read live; a second
session's request carries the first session's turn. Last, a memory said in one assistant reaches
another. No internet: every endpoint is loopback, updates and telemetry are off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clis import cli
from tests.fakes.assistant_apis import AssistantAPIs, Call
from tests.utils import DaemonProcess, wait_for

# The CLIs' node processes take most of a core: one worker runs them in turn, never two side by
# side (scripts/test).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("node-clis")]

MEMORY = "My cat is named Tofu and she is afraid of vacuum cleaners"
SAID = "Remember that the build server is called pelican"
ASKED = "What is the build server called?"
RUN_S = 240


@dataclass
class Machine:
    """A fresh user: HOME, a project folder, memd's daemon, the model API stub."""

    user: Path
    project: Path
    daemon: DaemonProcess
    api: AssistantAPIs

    def env(self, **more: str) -> dict[str, str]:
        # The CLIs get the user's HOME and nothing of memd's test environment.
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMD_", "PYTHON"))}
        base.update(HOME=str(self.user), NO_COLOR="1", CI="", TERM="dumb")
        base.pop("XDG_CONFIG_HOME", None), base.pop("XDG_DATA_HOME", None)
        return {**base, **more}

    def memd(self, *args: str) -> subprocess.CompletedProcess[str]:
        out = self.daemon.cli(*args, HOME=str(self.user))
        assert out.returncode == 0, (args, out.stdout, out.stderr)
        return out

    def run(self, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(argv, cwd=self.project, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=RUN_S)  # fmt: skip
        assert out.returncode == 0, (argv, out.stdout[-2000:], out.stderr[-4000:])
        return out

    def said(self, text: str, source: str) -> bool:
        out = self.memd("search", text, "--conversations", "--source", source, "--json")
        return any(h["kind"] == "turn" for h in json.loads(out.stdout)["hits"])


@pytest.fixture
def machine(home: Path, tmp_path: Path) -> Iterator[Machine]:
    user = Path.home()  # this test's own HOME (conftest): no assistant has run here
    assert not any((user / d).exists() for d in (".codex", ".gemini", ".config", ".local"))
    project = user / "work" / "shop"
    project.mkdir(parents=True)
    # The second session starts a moment after the first: memd's block is to carry the first
    # session's turn by then, so the recent conversations are written as soon as they change
    # (by default at most every 10 minutes; docs/integrations.md).
    d = DaemonProcess(home, HOME=str(user), MEMD_INSTRUCTIONS_RECENT_EVERY_MIN="0").start()
    try:
        with AssistantAPIs(reply="Noted.") as api:
            m = Machine(user, project, d, api)
            m.memd("remember", MEMORY)
            yield m
    finally:
        d.stop()


def memd_argv() -> str:
    # The assistants start `memd mcp` and `memd hook` with their own environment: this
    # interpreter (memd installed in it) by its absolute path.
    return f"{sys.executable} -m memd"


def first(calls: list[Call], what: str) -> Call:
    assert calls, f"no {what} request reached the stub"
    return calls[0]


# -- Codex CLI ----------------------------------------------------------------------------------
def codex_setup(m: Machine) -> dict[str, str]:
    conf = m.user / ".codex" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text(
        'model = "gpt-5"\nmodel_provider = "stub"\ncheck_for_update_on_startup = false\n\n'
        f'[model_providers.stub]\nname = "stub"\nbase_url = "{m.api.base_url}/v1"\n'
        'wire_api = "responses"\nenv_key = "STUB_KEY"\n\n[analytics]\nenabled = false\n'
    )
    m.memd("integrate", "codex", "--memd", memd_argv())
    return m.env(STUB_KEY="stub-key", RUST_LOG="error")


def codex_exec(m: Machine, env: dict[str, str], prompt: str) -> Call:
    before = len(m.api.turns("/responses"))
    m.run([str(cli("codex")), "exec", "--skip-git-repo-check", prompt], env)
    return first(m.api.turns("/responses")[before:], "Responses API")


def test_codex_cli(machine: Machine) -> None:
    m = machine
    env = codex_setup(m)
    req = codex_exec(m, env, SAID)
    text = req.text()
    assert "Tofu" in text  # memd's block in ~/.codex/AGENTS.md, read into the session
    assert "memory_search" in json.dumps(req.body.get("tools")), "memd's MCP tools"
    # The rollout Codex wrote (its folder appeared after memd started) is read live.
    wait_for(lambda: m.said("pelican", "codex"), 60)
    # memd's block is refreshed with that session; a second session starts with it.
    agents = m.user / ".codex" / "AGENTS.md"
    wait_for(lambda: "pelican" in agents.read_text(), 60)
    second = codex_exec(m, env, ASKED)
    assert "pelican" in second.text()
    assert "AGENTS.md" not in m.memd("recall", "pelican", "--source", "codex").stdout


# -- Gemini CLI ---------------------------------------------------------------------------------
def gemini_setup(m: Machine) -> dict[str, str]:
    settings = m.user / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
    }))  # fmt: skip
    m.memd("integrate", "gemini", "--memd", memd_argv())
    return m.env(GEMINI_API_KEY="stub-key", GOOGLE_GEMINI_BASE_URL=m.api.base_url,
                 GEMINI_CLI_TRUST_WORKSPACE="true")  # fmt: skip


def gemini_p(m: Machine, env: dict[str, str], prompt: str) -> Call:
    before = len(m.api.turns("streamGenerateContent"))
    m.run([str(cli("gemini")), "-p", prompt], env)
    return first(m.api.turns("streamGenerateContent")[before:], "streamGenerateContent")


def test_gemini_cli(machine: Machine) -> None:
    m = machine
    env = gemini_setup(m)
    req = gemini_p(m, env, SAID)
    assert "Tofu" in req.text()  # the SessionStart hook's memory context
    assert "memory_search" in json.dumps(req.body.get("tools")), "memd's MCP tools (trusted)"
    wait_for(lambda: m.said("pelican", "gemini"), 60)
    # What the hook added is not taken for something the user said.
    recalled = m.memd("recall", "pelican", "--source", "gemini").stdout
    assert "Tofu" not in recalled and "build server is called pelican" in recalled
    second = gemini_p(m, env, ASKED)  # the BeforeAgent hook recalls the first session
    assert "pelican" in second.text()


# -- OpenCode -----------------------------------------------------------------------------------
def opencode_setup(m: Machine) -> dict[str, str]:
    conf = m.user / ".config" / "opencode" / "opencode.json"
    conf.parent.mkdir(parents=True)
    conf.write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
        "provider": {"stub": {"npm": "@ai-sdk/openai-compatible", "name": "Stub",
                              "options": {"baseURL": f"{m.api.base_url}/v1", "apiKey": "stub-key"},
                              "models": {"m": {"name": "m"}}}},
        "model": "stub/m", "small_model": "stub/m",
    }))  # fmt: skip
    m.memd("integrate", "opencode", "--memd", memd_argv())
    # OpenCode asks the npm registry for its plugin packages at start (it runs without them):
    # the registry is a closed loopback port, so nothing leaves the machine.
    dead = "http://127.0.0.1:9"
    return m.env(OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1",
                 OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
                 npm_config_registry=dead, NPM_CONFIG_REGISTRY=dead, BUN_CONFIG_REGISTRY=dead)  # fmt: skip


def opencode_run(m: Machine, env: dict[str, str], prompt: str) -> Call:
    before = len(m.api.turns("/chat/completions"))
    m.run([str(cli("opencode")), "run", prompt], env)
    calls = [
        c
        for c in m.api.turns("/chat/completions")[before:]
        if isinstance(c.body, dict) and c.body.get("tools")
    ]  # not the title request
    return first(calls, "chat/completions with tools")


def test_opencode(machine: Machine) -> None:
    m = machine
    env = opencode_setup(m)
    req = opencode_run(m, env, SAID)
    assert "Tofu" in req.text()  # memd's file, listed in `instructions`
    assert "memd_memory_search" in json.dumps(req.body.get("tools")), "memd's MCP tools"
    wait_for(lambda: m.said("pelican", "opencode"), 60)
    memd_md = m.user / ".config" / "opencode" / "memd.md"
    wait_for(lambda: "pelican" in memd_md.read_text(), 60)
    second = opencode_run(m, env, ASKED)
    assert "pelican" in second.text()


# -- from one assistant to another --------------------------------------------------------------
def test_said_in_codex_recalled_in_gemini(machine: Machine) -> None:
    """Two real formats: a Codex rollout, then a Gemini CLI session whose prompt memd answers
    with what was said in Codex, naming where it was said."""
    m = machine
    codex_env = codex_setup(m)
    codex_exec(m, codex_env, "Remember that the staging database lives on host osprey-7")
    wait_for(lambda: m.said("osprey", "codex"), 60)
    gemini_env = gemini_setup(m)
    req = gemini_p(m, gemini_env, "Which host does the staging database live on?")
    assert "osprey-7" in req.text() and "Codex CLI" in req.text()
