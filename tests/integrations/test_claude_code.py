"""`memd integrate claude-code`: real files in tmp_path, compared as parsed JSON."""

from __future__ import annotations

import copy
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memd.core.errors import ConfigError
from memd.core.settings import load as load_settings
from memd.integrations import claude_code
from memd.integrations.claude_code import hook_command, integrate
from tests.utils import ROOT, DaemonProcess, memd_env, wait_for

MEMD = ["/opt/memd/bin/memd"]

SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]},
        ],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "other-tool prime", "timeout": 30}],
            }
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/prompt-log"}]}],
    },
}
CLAUDE_JSON: dict[str, Any] = {
    "numStartups": 42,
    "theme": "dark",
    "mcpServers": {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"], "env": {"T": "x"}},
        "notes": {"type": "http", "url": "https://example.invalid/mcp"},
    },
    "projects": {"/home/u/app": {"mcpServers": {}, "allowedTools": []}},
}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(SETTINGS, indent=4) + "\n")
    claude_json = tmp_path / ".claude.json"
    claude_json.write_text(json.dumps(CLAUDE_JSON, indent=2))
    return settings, claude_json


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def memd_commands(settings: dict[str, Any], event: str) -> list[str]:
    return [
        h["command"]
        for group in settings["hooks"].get(event, [])
        for h in group["hooks"]
        if "memd" in h["command"]
    ]


def test_adds_hooks_and_server_keeping_everything_else(files: tuple[Path, Path]) -> None:
    settings_path, claude_path = files
    plan = integrate(settings_path, claude_path, MEMD)

    assert plan.changed and not plan.dry_run
    settings = load(settings_path)
    for key in ("model", "permissions", "env"):
        assert settings[key] == SETTINGS[key]
    assert settings["hooks"]["PreToolUse"] == SETTINGS["hooks"]["PreToolUse"]
    # The user's own groups stay first and untouched; memd's come after them.
    session_start = settings["hooks"]["SessionStart"]
    assert session_start[0] == SETTINGS["hooks"]["SessionStart"][0]
    assert session_start[1] == {
        "matcher": "startup|resume|clear|compact",
        "hooks": [
            {
                "type": "command",
                "command": "/opt/memd/bin/memd hook session-start",
                "timeout": claude_code.HOOK_TIMEOUT_S,
            }
        ],
    }
    prompt = settings["hooks"]["UserPromptSubmit"]
    assert prompt[0] == SETTINGS["hooks"]["UserPromptSubmit"][0]
    assert prompt[1]["hooks"][0]["command"] == "/opt/memd/bin/memd hook user-prompt"
    assert "matcher" not in prompt[1]

    claude = load(claude_path)
    assert {k: v for k, v in claude.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_JSON.items() if k != "mcpServers"
    }
    assert claude["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]
    assert claude["mcpServers"]["notes"] == CLAUDE_JSON["mcpServers"]["notes"]
    assert claude["mcpServers"]["memd"] == {
        "type": "stdio",
        "command": "/opt/memd/bin/memd",
        "args": ["mcp"],
    }
    # The previous content is kept byte for byte next to each file.
    assert load(settings_path.with_name("settings.json.bak")) == SETTINGS
    assert load(claude_path.with_name(".claude.json.bak")) == CLAUDE_JSON
    assert len(plan.actions) == 3


def test_second_run_changes_nothing(files: tuple[Path, Path]) -> None:
    settings_path, claude_path = files
    integrate(settings_path, claude_path, MEMD)
    after_first = (settings_path.read_bytes(), claude_path.read_bytes())
    stamps = (settings_path.stat().st_mtime_ns, claude_path.stat().st_mtime_ns)

    plan = integrate(settings_path, claude_path, MEMD)

    assert not plan.changed and plan.actions == ()
    assert "already set up" in plan.summary()
    assert (settings_path.read_bytes(), claude_path.read_bytes()) == after_first
    assert (settings_path.stat().st_mtime_ns, claude_path.stat().st_mtime_ns) == stamps
    assert memd_commands(load(settings_path), "SessionStart") == [
        "/opt/memd/bin/memd hook session-start"
    ]


def test_remove_restores_the_original(files: tuple[Path, Path]) -> None:
    settings_path, claude_path = files
    integrate(settings_path, claude_path, MEMD)

    plan = integrate(settings_path, claude_path, MEMD, remove=True)

    assert plan.changed and len(plan.actions) == 3
    assert load(settings_path) == SETTINGS
    assert load(claude_path) == CLAUDE_JSON
    again = integrate(settings_path, claude_path, MEMD, remove=True)
    assert not again.changed and "free of memd" in again.summary()


def test_remove_finds_memd_entries_by_command_whatever_the_install_path(
    files: tuple[Path, Path],
) -> None:
    settings_path, claude_path = files
    integrate(settings_path, claude_path, ["/old/venv/bin/python", "-m", "memd"])

    integrate(settings_path, claude_path, ["/usr/local/bin/memd"], remove=True)

    assert load(settings_path) == SETTINGS
    assert load(claude_path) == CLAUDE_JSON


def test_reinstall_elsewhere_replaces_the_old_entries(files: tuple[Path, Path]) -> None:
    settings_path, claude_path = files
    integrate(settings_path, claude_path, ["/old/bin/memd"])

    plan = integrate(settings_path, claude_path, ["/new/bin/memd"])

    settings = load(settings_path)
    assert memd_commands(settings, "SessionStart") == ["/new/bin/memd hook session-start"]
    assert memd_commands(settings, "UserPromptSubmit") == ["/new/bin/memd hook user-prompt"]
    assert load(claude_path)["mcpServers"]["memd"]["command"] == "/new/bin/memd"
    assert all(a.startswith("replaced") for a in plan.actions)


def test_paths_with_spaces_are_quoted_for_the_shell() -> None:
    command = hook_command(["/Users/Ada Lovelace/.local/bin/memd"], "session-start")
    assert command == "'/Users/Ada Lovelace/.local/bin/memd' hook session-start"
    assert claude_code._memd_hook_kind(command) == "session-start"


def test_a_foreign_memd_server_is_left_alone(files: tuple[Path, Path]) -> None:
    settings_path, claude_path = files
    doc = copy.deepcopy(CLAUDE_JSON)
    doc["mcpServers"]["memd"] = {"type": "http", "url": "https://memd.example.invalid"}
    claude_path.write_text(json.dumps(doc))

    plan = integrate(settings_path, claude_path, MEMD)
    assert load(claude_path) == doc
    assert any("left mcpServers.memd" in a for a in plan.actions)

    integrate(settings_path, claude_path, MEMD, remove=True)
    assert load(claude_path) == doc
    assert load(settings_path) == SETTINGS


def test_dry_run_writes_nothing(files: tuple[Path, Path], tmp_path: Path) -> None:
    settings_path, claude_path = files
    before = (settings_path.read_bytes(), claude_path.read_bytes())
    listing = sorted(tmp_path.rglob("*"))
    state = tmp_path / "state.json"

    plan = integrate(settings_path, claude_path, MEMD, dry_run=True, state_file=state)

    assert plan.changed and plan.dry_run
    assert (settings_path.read_bytes(), claude_path.read_bytes()) == before
    assert sorted(tmp_path.rglob("*")) == listing
    diff = plan.diff()
    assert "+" in diff and "/opt/memd/bin/memd hook session-start" in diff
    assert '"mcp"' in diff
    assert "dry run" in plan.summary()
    # The would-be content is exactly what a real run writes.
    integrate(settings_path, claude_path, MEMD)
    assert [f.after for f in plan.files] == [settings_path.read_text(), claude_path.read_text()]


def test_missing_files_are_created_private(tmp_path: Path) -> None:
    settings_path = tmp_path / "cfg" / "settings.json"
    claude_path = tmp_path / "cfg" / ".claude.json"

    plan = integrate(settings_path, claude_path, MEMD, dry_run=True)
    assert not settings_path.parent.exists()
    assert [f.before for f in plan.files] == [None, None]

    integrate(settings_path, claude_path, MEMD)
    assert memd_commands(load(settings_path), "UserPromptSubmit")
    assert load(claude_path) == {"mcpServers": {"memd": claude_code.server_entry(MEMD)}}
    assert stat.S_IMODE(claude_path.stat().st_mode) == 0o600
    assert not claude_path.with_name(".claude.json.bak").exists()

    integrate(settings_path, claude_path, MEMD, remove=True)
    assert load(settings_path) == {} and load(claude_path) == {}


def test_existing_empty_containers_come_back_with_a_state_file(tmp_path: Path) -> None:
    settings_path = tmp_path / "settings.json"
    claude_path = tmp_path / ".claude.json"
    original_settings: dict[str, Any] = {"hooks": {"SessionStart": []}}
    original_claude = {"mcpServers": {}, "userID": "abc"}
    settings_path.write_text(json.dumps(original_settings))
    claude_path.write_text(json.dumps(original_claude))
    state = tmp_path / "state" / "claude-code.json"

    integrate(settings_path, claude_path, MEMD, state_file=state)
    assert state.exists()
    integrate(settings_path, claude_path, MEMD, state_file=state)  # idempotent with state too
    integrate(settings_path, claude_path, MEMD, remove=True, state_file=state)

    assert load(settings_path) == original_settings
    assert load(claude_path) == original_claude
    assert load(state) == {}


def test_mode_is_kept_and_symlinks_are_written_through(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text(json.dumps(SETTINGS))
    os.chmod(real, 0o640)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    claude_path = tmp_path / ".claude.json"

    integrate(link, claude_path, MEMD)

    assert link.is_symlink() and memd_commands(load(real), "SessionStart")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert load(dotfiles / "claude-settings.json.bak") == SETTINGS


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"model": "opus",,}', "not valid JSON (line 1"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"hooks": []}', "'hooks' is list, expected an object"),
        ('{"hooks": {"SessionStart": {"matcher": "x"}}}', "'hooks.SessionStart' is dict"),
    ],
)
def test_malformed_settings_leave_both_files_untouched(
    files: tuple[Path, Path], content: str, message: str
) -> None:
    settings_path, claude_path = files
    settings_path.write_text(content)
    claude_before = claude_path.read_bytes()

    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        integrate(settings_path, claude_path, MEMD)

    assert str(settings_path) in str(err.value)
    assert err.value.hint
    assert settings_path.read_text() == content
    assert claude_path.read_bytes() == claude_before
    assert not list(settings_path.parent.glob("*.bak"))
    assert not list(claude_path.parent.glob("*.bak"))


def test_malformed_mcp_config_leaves_settings_untouched(files: tuple[Path, Path]) -> None:
    settings_path, claude_path = files
    claude_path.write_text('{"mcpServers": ')
    settings_before = settings_path.read_bytes()

    with pytest.raises(ConfigError, match=r"\.claude\.json is not valid JSON"):
        integrate(settings_path, claude_path, MEMD, remove=True)

    assert settings_path.read_bytes() == settings_before


def test_default_paths_follow_claude_config_dir(tmp_path: Path) -> None:
    assert claude_code.default_paths({"CLAUDE_CONFIG_DIR": str(tmp_path)}) == (
        tmp_path / "settings.json",
        tmp_path / ".claude.json",
    )
    settings_path, claude_path = claude_code.default_paths({})
    assert settings_path == Path.home() / ".claude" / "settings.json"
    assert claude_path == Path.home() / ".claude.json"


def test_default_memd_argv_is_absolute() -> None:
    argv = claude_code.default_memd_argv()
    assert Path(argv[0]).is_absolute()
    assert argv[1:] in ([], ["-m", "memd"])


def test_main_dry_run_and_apply(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_path, claude_path = files
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "home"))
    paths = ["--settings", str(settings_path), "--mcp-config", str(claude_path)]

    assert claude_code.main([*paths, "--memd", "/x/memd", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "/x/memd hook user-prompt" in out and "dry run" in out
    assert load(settings_path) == SETTINGS

    assert claude_code.main([*paths, "--memd", "/x/memd"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert memd_commands(load(settings_path), "SessionStart") == [
        f"MEMD_HOME={tmp_path / 'home'} /x/memd hook session-start"
    ]
    assert claude_code.main([*paths, "--memd", "/x/memd", "--remove"]) == 0
    assert load(settings_path) == SETTINGS and load(claude_path) == CLAUDE_JSON


def test_main_reports_malformed_files(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_path, claude_path = files
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "home"))
    settings_path.write_text("{oops")

    code = claude_code.main(["--settings", str(settings_path), "--mcp-config", str(claude_path)])

    assert code == 1
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "hint:" in err


def test_installed_commands_run_as_claude_code_runs_them(tmp_path: Path, home: Path) -> None:
    settings_path, claude_path = tmp_path / "settings.json", tmp_path / ".claude.json"
    integrate(settings_path, claude_path, [sys.executable, "-m", "memd"])
    env = memd_env(home)

    for groups in load(settings_path)["hooks"].values():
        command = groups[0]["hooks"][0]["command"]
        # Claude Code runs the command through the shell, with the event JSON on stdin.
        proc = subprocess.run(
            command,
            shell=True,
            input='{"session_id": "s", "cwd": "/tmp", "source": "startup", "prompt": "hi"}',
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=30,
        )
        assert (proc.returncode, proc.stdout) == (0, ""), (command, proc.stderr)

    entry = load(claude_path)["mcpServers"]["memd"]
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=env, cwd=str(ROOT)
    )

    async def list_tools() -> list[str]:
        async with Client(params) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert "memory_context" in anyio.run(list_tools)


def test_commands_carry_memd_home_and_socket() -> None:
    env = {"MEMD_HOME": "/data/my memd", "MEMD_SOCKET": "/run/m.sock"}
    command = hook_command(MEMD, "user-prompt", env)
    assert (
        command
        == "MEMD_HOME='/data/my memd' MEMD_SOCKET=/run/m.sock /opt/memd/bin/memd hook user-prompt"
    )
    assert claude_code._memd_hook_kind(command) == "user-prompt"
    entry = claude_code.server_entry(MEMD, env)
    assert entry["env"] == env and claude_code._is_memd_server(entry)


def test_custom_home_reaches_hooks_and_mcp_started_without_it(
    tmp_path: Path, home: Path, daemon: DaemonProcess
) -> None:
    """Claude Code starts hooks and the MCP server with its own environment, not the shell's
    that ran `integrate`: MEMD_HOME must travel inside the commands."""
    (daemon.memory / "_core" / "preferences.md").write_text(
        "# Preferences\n\n## Testing\n\n- always run vitest before committing (WOMBAT)\n"
    )
    settings = load_settings(env=memd_env(home))
    wait_for(lambda: "WOMBAT" in json.dumps(daemon.call("context", {"query": "vitest"})))
    settings_path, claude_path = tmp_path / "settings.json", tmp_path / ".claude.json"
    integrate(
        settings_path, claude_path, [sys.executable, "-m", "memd"], env=settings.location_env()
    )
    bare = {k: v for k, v in memd_env(home).items() if not k.startswith("MEMD_")}

    command = load(settings_path)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    proc = subprocess.run(
        command,
        shell=True,
        input=json.dumps({"session_id": "s", "cwd": "/tmp", "source": "startup"}),
        capture_output=True,
        text=True,
        env=bare,
        cwd=ROOT,
        timeout=30,
    )
    assert proc.returncode == 0 and "WOMBAT" in proc.stdout, (command, proc.stderr)

    entry = load(claude_path)["mcpServers"]["memd"]
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={**bare, **entry.get("env", {})},
        cwd=str(ROOT),
    )

    async def context() -> str:
        async with Client(params) as client:
            result = await client.call_tool("memory_context", {"query": "vitest"})
            return json.dumps(result.structured_content)

    assert "WOMBAT" in anyio.run(context)
