"""`memd integrate codex|gemini|opencode` and `--list`: memd's entries merged into each
assistant's own config (comments and everything else kept), a backup, `--undo` back to the
original, a malformed config left untouched with a clear error, and memd's instructions."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memd.conversations.sources import Where
from memd.core.errors import ConfigError
from memd.integrations import codex, gemini, instructions, opencode
from memd.integrations.integrate import INTEGRATIONS, listing, render_listing
from memd.integrations.wiring import Request
from tests import forkserver
from tests.utils import ROOT

MEMD = ["/opt/memd/bin/memd"]
ENV = {"MEMD_HOME": "/srv/memd", "MEMD_SOCKET": "/srv/memd/run/memd.sock"}

CODEX_CONFIG = """# my Codex settings
model = "gpt-5"  # the one I like

[mcp_servers.github]
command = "gh-mcp"
args = ["--stdio"]

[projects."/home/u/app"]
trust_level = "trusted"
"""


def req(home: Path, **kw: object) -> Request:
    base = dict(memd_argv=MEMD, env=ENV, state_dir=home / "state", where=Where(home, {}),
                block=lambda a: f"likes tea ({a})")  # fmt: skip
    return Request(**{**base, **kw})  # type: ignore[arg-type]


def test_codex_server_and_block_merged_kept_and_undone(tmp_path: Path) -> None:
    conf = tmp_path / ".codex" / "config.toml"
    conf.parent.mkdir()
    conf.write_text(CODEX_CONFIG)
    agents = tmp_path / ".codex" / "AGENTS.md"
    agents.write_text("Use tabs.\n")
    plan = codex.integrate(req(tmp_path))
    text = conf.read_text()
    # memd's table among the user's servers; every line of theirs kept, comments too, in order.
    added = text.splitlines()
    kept = iter(added)
    assert all(line in kept for line in CODEX_CONFIG.splitlines())
    assert "[mcp_servers.memd]" in added
    doc = tomllib.loads(text)
    assert doc["mcp_servers"]["memd"] == {"command": MEMD[0], "args": ["mcp"], "env": ENV,
                                          "required": True, "startup_timeout_sec": 30}  # fmt: skip
    assert doc["mcp_servers"]["github"]["command"] == "gh-mcp"
    assert (conf.parent / "config.toml.bak").read_text() == CODEX_CONFIG
    assert (
        agents.read_text().startswith("Use tabs.\n") and "likes tea (codex)" in agents.read_text()
    )
    assert [
        t.path for t in instructions.Targets(tmp_path / "state" / "instructions.json").load()
    ] == [str(agents)]
    assert plan.changed and "MEMD_*" in plan.summary()
    assert codex.wired(req(tmp_path)) == [f"MCP server in {conf}", f"memory block in {agents}"]
    # Twice: nothing changes.
    assert not codex.integrate(req(tmp_path)).changed
    # Undone: both files as they were.
    codex.integrate(req(tmp_path, remove=True))
    assert conf.read_text() == CODEX_CONFIG and agents.read_text() == "Use tabs.\n"
    assert instructions.Targets(tmp_path / "state" / "instructions.json").load() == []


def test_codex_on_a_fresh_home_and_undo_leaves_nothing_of_memd(tmp_path: Path) -> None:
    codex.integrate(req(tmp_path))
    conf = tmp_path / ".codex" / "config.toml"
    assert tomllib.loads(conf.read_text())["mcp_servers"]["memd"]["args"] == ["mcp"]
    assert conf.read_text().startswith("[mcp_servers.memd]")  # no empty [mcp_servers] table
    codex.integrate(req(tmp_path, remove=True))
    assert tomllib.loads(conf.read_text()) == {}
    assert not (tmp_path / ".codex" / "AGENTS.md").read_text().strip()


def test_codex_malformed_config_or_foreign_server_is_left_alone(tmp_path: Path) -> None:
    conf = tmp_path / ".codex" / "config.toml"
    conf.parent.mkdir()
    conf.write_text('model = "gpt-5\n[broken')
    with pytest.raises(ConfigError, match="not valid TOML"):
        codex.integrate(req(tmp_path))
    assert conf.read_text() == 'model = "gpt-5\n[broken'
    assert not (tmp_path / ".codex" / "AGENTS.md").exists()
    conf.write_text('[mcp_servers.memd]\ncommand = "someone-elses-memd-server"\n')
    plan = codex.integrate(req(tmp_path))
    assert "left [mcp_servers.memd]" in plan.summary()
    assert (
        tomllib.loads(conf.read_text())["mcp_servers"]["memd"]["command"]
        == "someone-elses-memd-server"
    )


def test_codex_dry_run_writes_nothing(tmp_path: Path) -> None:
    plan = codex.integrate(req(tmp_path, dry_run=True))
    assert "+[mcp_servers.memd]" in plan.diff() and "dry run" in plan.summary()
    assert not (tmp_path / ".codex").exists() and not (tmp_path / "state").exists()


def test_gemini_server_trusted_hooks_kept_and_undone(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    mine = {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]},
            "mcpServers": {"github": {"command": "gh-mcp"}}}  # fmt: skip
    path.write_text(json.dumps(mine))
    gemini.integrate(req(tmp_path))
    doc = json.loads(path.read_text())
    assert doc["security"] == mine["security"] and doc["mcpServers"]["github"] == {
        "command": "gh-mcp"
    }
    assert doc["mcpServers"]["memd"] == {
        "command": MEMD[0],
        "args": ["mcp"],
        "env": ENV,
        "trust": True,
    }
    [start] = [
        h for g in doc["hooks"]["SessionStart"] for h in g["hooks"] if "memd" in h["command"]
    ]
    assert start["command"].endswith(
        "/opt/memd/bin/memd hook --assistant gemini --time-limit 3 session-start"
    )
    assert "MEMD_HOME=/srv/memd" in start["command"] and start["timeout"] == 10_000
    [prompt] = [h for g in doc["hooks"]["BeforeAgent"] for h in g["hooks"]]
    assert prompt["command"].endswith("hook --assistant gemini --time-limit 3 user-prompt")
    assert {"type": "command", "command": "echo hi"} in doc["hooks"]["SessionStart"][0]["hooks"]
    assert gemini.wired(req(tmp_path)) == [
        f"MCP server in {path}",
        "SessionStart and BeforeAgent hooks",
    ]
    gemini.integrate(req(tmp_path, remove=True))
    assert json.loads(path.read_text()) == mine


def test_gemini_settings_with_comments_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  // my auth\n  "security": {}\n}\n')
    with pytest.raises(ConfigError, match="not valid JSON"):
        gemini.integrate(req(tmp_path))
    assert path.read_text() == '{\n  // my auth\n  "security": {}\n}\n'


def test_opencode_server_and_instructions_file_kept_and_undone(tmp_path: Path) -> None:
    path = tmp_path / ".config" / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True)
    mine = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4-5",
            "instructions": ["CONTRIBUTING.md"]}  # fmt: skip
    path.write_text(json.dumps(mine, indent=2))
    opencode.integrate(req(tmp_path))
    doc = json.loads(path.read_text())
    memd_md = str(tmp_path / ".config" / "opencode" / "memd.md")
    assert doc["mcp"]["memd"] == {"type": "local", "command": [*MEMD, "mcp"], "enabled": True,
                                  "environment": ENV}  # fmt: skip
    assert doc["instructions"] == ["CONTRIBUTING.md", memd_md] and doc["model"] == mine["model"]
    assert "likes tea (opencode)" in Path(memd_md).read_text()
    opencode.integrate(req(tmp_path, remove=True))
    assert json.loads(path.read_text()) == mine and not Path(memd_md).exists()


def test_opencode_jsonc_config_is_not_edited(tmp_path: Path) -> None:
    jsonc = tmp_path / ".config" / "opencode" / "opencode.jsonc"
    jsonc.parent.mkdir(parents=True)
    jsonc.write_text('{ // mine\n "model": "x" }')
    with pytest.raises(ConfigError, match="only opencode.json"):
        opencode.integrate(req(tmp_path))
    assert sorted(p.name for p in jsonc.parent.iterdir()) == ["opencode.jsonc"]


def test_list_says_what_is_installed_and_wired(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    codex.integrate(req(tmp_path))
    rows = {r.name: r for r in listing(req(tmp_path, where=Where(tmp_path, {"PATH": ""})))}
    assert set(rows) == set(INTEGRATIONS) == {"claude-code", "codex", "gemini", "opencode", "cline",
                                              "roo", "continue", "aider"}  # fmt: skip
    assert rows["cline"].installed == "" and rows["aider"].wired == []
    assert rows["codex"].installed == str(tmp_path / ".codex") and len(rows["codex"].wired) == 2
    assert rows["gemini"].wired == []
    text = render_listing(list(rows.values()))
    assert "Gemini CLI (gemini): " in text and "not wired (memd integrate gemini)" in text


def test_the_command_line(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "MEMD_HOME": str(tmp_path / "memd"), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT)}  # fmt: skip

    def memd(*args: str) -> subprocess.CompletedProcess[str]:
        return forkserver.run([sys.executable, "-m", "memd", "integrate", *args], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    out = memd("codex", "--memd", "/opt/memd/bin/memd")
    assert out.returncode == 0, out.stderr
    assert "added MCP server 'memd'" in out.stdout and "AGENTS.md" in out.stdout
    agents = (tmp_path / ".codex" / "AGENTS.md").read_text()
    assert instructions.BEGIN in agents  # no daemon: memd's block from the index, read-only
    listed = memd("--list")
    assert listed.returncode == 0 and "Codex CLI (codex): installed" in listed.stdout, listed
    assert memd("codex", "--undo").returncode == 0
    assert instructions.BEGIN not in (tmp_path / ".codex" / "AGENTS.md").read_text()
    bad = memd("nosuch")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
