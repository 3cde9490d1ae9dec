"""`memd integrate cline|roo|continue|aider`: real-shaped config files in a temporary home; the
user's own config kept exactly, a second run changes nothing, `--undo` gives the files back,
a malformed config is left untouched with a clear error."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from memd.cli.parser import main as memd_main
from memd.conversations import editors
from memd.core.settings import load as load_settings
from memd.integrations import aider, continue_dev, instructions, vscode_ext
from memd.integrations.config_edit import Request, apply
from tests.utils import ROOT, DaemonProcess, memd_env, wait_for

MEMD = "/opt/memd/bin/memd"
CLINE_SETTINGS: dict[str, Any] = {
    "mcpServers": {
        "github.com/modelcontextprotocol/servers/tree/main/src/github": {
            "autoApprove": ["get_issue"],
            "disabled": False,
            "timeout": 60,
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<token>"},
            "transportType": "stdio",
        },
        "docs": {"url": "https://example.invalid/sse", "type": "sse", "disabled": True},
    }
}
ROO_SETTINGS: dict[str, Any] = {
    "mcpServers": {
        "context7": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"], "alwaysAllow": []}
    }
}
AIDER_CONF = """\
# Aider settings (kept by hand)
model: sonnet
auto-commits: false   # I commit myself
read:
  - CONVENTIONS.md
  - ~/notes/style.md

lint-cmd:
  - "python: ruff check"
"""


def storage(home: Path, editor: str, ext_id: str) -> Path:
    folder = home / ".config" / editor / "User" / "globalStorage" / ext_id
    folder.mkdir(parents=True)
    return folder


def integrate(*args: str) -> int:
    return memd_main(["integrate", *args, "--memd", MEMD])


def read(path: Path) -> Any:
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------ Cline / Roo


def test_cline_every_editor_found_gets_memd_and_keeps_its_servers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = Path.home()
    code = storage(home, "Code", "saoudrizwan.claude-dev")
    (code / "settings").mkdir()
    settings = code / "settings" / "cline_mcp_settings.json"
    settings.write_text(json.dumps(CLINE_SETTINGS, indent=2))
    cursor = storage(home, "Cursor", "saoudrizwan.claude-dev")  # installed, never configured MCP
    rules = home / "Documents" / "Cline" / "Rules" / "memd.md"

    assert integrate("cline", "--dry-run") == 0
    assert read(settings) == CLINE_SETTINGS and not rules.exists()

    assert integrate("cline") == 0
    out = capsys.readouterr().out
    got = read(settings)
    memd_entry = got["mcpServers"].pop("memd")
    assert got == CLINE_SETTINGS
    assert memd_entry["command"] == MEMD and memd_entry["args"] == ["mcp"]
    assert memd_entry["type"] == "stdio" and memd_entry["disabled"] is False
    assert read(cursor / "settings" / "cline_mcp_settings.json")["mcpServers"]["memd"] == memd_entry
    assert rules.read_text().startswith(instructions.BEGIN)
    targets = instructions.Targets.of(load_settings()).load()
    assert [(t.assistant, t.path, t.kind) for t in targets] == [("cline", str(rules), "file")]
    assert f"previous content in {settings}.bak" in out

    before = settings.read_text()
    assert integrate("cline") == 0
    assert "nothing to change" in capsys.readouterr().out
    assert settings.read_text() == before

    assert integrate("cline", "--undo") == 0
    assert read(settings) == CLINE_SETTINGS
    assert read(cursor / "settings" / "cline_mcp_settings.json") == {"mcpServers": {}}
    assert not rules.exists()
    assert instructions.Targets.of(load_settings()).load() == []


def test_roo_entry_keeps_the_users_switches_on_it() -> None:
    home = Path.home()
    roo = storage(home, "VSCodium", "rooveterinaryinc.roo-cline")
    (roo / "settings").mkdir()
    settings = roo / "settings" / "mcp_settings.json"
    settings.write_text(json.dumps(ROO_SETTINGS))

    assert integrate("roo") == 0
    doc = read(settings)
    assert doc["mcpServers"]["context7"] == ROO_SETTINGS["mcpServers"]["context7"]
    assert doc["mcpServers"]["memd"]["alwaysAllow"] == []
    # The user disables memd in Roo's panel and allows a tool: a new run keeps both.
    doc["mcpServers"]["memd"].update(disabled=True, alwaysAllow=["memory_search"])
    settings.write_text(json.dumps(doc))
    assert memd_main(["integrate", "roo", "--memd", "/usr/local/bin/memd"]) == 0
    entry = read(settings)["mcpServers"]["memd"]
    assert (entry["command"], entry["disabled"], entry["alwaysAllow"]) == (
        "/usr/local/bin/memd",
        True,
        ["memory_search"],
    )
    assert (home / ".roo" / "rules" / "memd.md").exists()


def test_a_server_named_memd_that_is_not_memd_is_left_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    roo = storage(Path.home(), "Code", "rooveterinaryinc.roo-cline")
    (roo / "settings").mkdir()
    theirs = {"mcpServers": {"memd": {"command": "my-memo-daemon", "args": ["serve"]}}}
    (roo / "settings" / "mcp_settings.json").write_text(json.dumps(theirs))
    assert integrate("roo") == 0
    assert "left mcpServers.memd" in capsys.readouterr().out
    assert read(roo / "settings" / "mcp_settings.json") == theirs


@pytest.mark.parametrize("bad", ['{\n  "mcpServers": {\n    "x": {,\n', "[]", '{"mcpServers": []}'])
def test_malformed_settings_are_untouched_and_named(
    bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = storage(Path.home(), "Code", "saoudrizwan.claude-dev")
    (code / "settings").mkdir()
    settings = code / "settings" / "cline_mcp_settings.json"
    settings.write_text(bad)
    assert integrate("cline") == 1
    err = capsys.readouterr().err
    assert str(settings) in err and "hint:" in err
    assert settings.read_text() == bad
    assert not (Path.home() / "Documents" / "Cline" / "Rules" / "memd.md").exists()
    assert not Path(f"{settings}.bak").exists()


def test_not_installed_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert integrate("cline") == 1
    assert "Cline was not found" in capsys.readouterr().err


def test_a_rules_file_memd_did_not_write_is_never_replaced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    storage(Path.home(), "Code", "rooveterinaryinc.roo-cline")
    mine = Path.home() / ".roo" / "rules" / "memd.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own notes about memd\n")
    assert integrate("roo") == 1
    assert "was not written by memd" in capsys.readouterr().err
    assert integrate("roo", "--undo") == 0
    assert mine.read_text() == "my own notes about memd\n"


def test_editor_roots_per_platform(tmp_path: Path) -> None:
    env = {"APPDATA": str(tmp_path / "Roaming")}
    assert (
        editors.editor_roots(tmp_path, env, "darwin")[0]
        == tmp_path / "Library/Application Support/Code"
    )
    assert editors.editor_roots(tmp_path, env, "win32")[3] == tmp_path / "Roaming" / "Cursor"
    assert editors.editor_roots(tmp_path, {}, "linux")[4] == tmp_path / ".config" / "Windsurf"
    cline_cli = vscode_ext.CLINE.storages(tmp_path, {}, "linux")[-1]
    assert cline_cli == tmp_path / ".cline" / "data"


# ------------------------------------------------------------------------------ Continue


def test_continue_gets_two_files_it_reads_and_config_yaml_is_untouched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "memd-home"))
    root = Path.home() / ".continue"
    root.mkdir()
    config = "name: Local Assistant\nversion: 1.0.0\nschema: v1\nmodels: []\n"
    (root / "config.yaml").write_text(config)

    assert integrate("continue") == 0
    block = yaml.safe_load((root / "mcpServers" / "memd.yaml").read_text())
    assert block["schema"] == "v1" and block["name"] == "memd"
    [server] = block["mcpServers"]
    assert server == {"name": "memd", "type": "stdio", "command": MEMD, "args": ["mcp"],
                      "env": {"MEMD_HOME": str(tmp_path / "memd-home")}}  # fmt: skip
    rule = (root / "rules" / "memd.md").read_text()
    assert rule.startswith("---\nname: memd memory\n") and "alwaysApply: true" in rule
    assert (root / "config.yaml").read_text() == config

    assert integrate("continue") == 0  # idempotent
    assert integrate("continue", "--undo") == 0
    assert (
        not (root / "mcpServers" / "memd.yaml").exists()
        and not (root / "rules" / "memd.md").exists()
    )
    assert (root / "config.yaml").read_text() == config


def test_continue_before_1_0_is_told(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "cont"
    root.mkdir()
    (root / "config.json").write_text('{"models": []}')
    request = Request(undo=False, dry_run=True, memd_argv=[MEMD], env={}, overrides={"dir": root})
    result = continue_dev.plan(request, home=tmp_path, env={})
    assert any("config.json" in a for a in result.actions)


# ------------------------------------------------------------------------------ Aider


def aider_plan(config: Path, *, undo: bool = False) -> Any:
    request = Request(
        undo=undo, dry_run=False, memd_argv=[MEMD], env={}, overrides={"config": config}
    )
    result = aider.plan(request, home=Path.home())
    apply(result)
    return result


def test_aider_read_list_gets_memd_and_keeps_everything_else() -> None:
    config = Path.home() / ".aider.conf.yml"
    config.write_text(AIDER_CONF)
    context = str(Path.home() / ".aider" / "memd.md")

    assert integrate("aider") == 0
    text = config.read_text()
    settings = yaml.safe_load(text)
    assert settings["read"] == ["CONVENTIONS.md", "~/notes/style.md", context]
    assert {k: v for k, v in settings.items() if k != "read"} == {
        k: v for k, v in yaml.safe_load(AIDER_CONF).items() if k != "read"
    }
    assert "# I commit myself" in text and text.startswith("# Aider settings")
    assert Path(context).read_text().startswith(instructions.BEGIN)

    assert integrate("aider") == 0
    assert config.read_text() == text
    assert integrate("aider", "--undo") == 0
    assert config.read_text() == AIDER_CONF
    assert not Path(context).exists()


@pytest.mark.parametrize(
    "conf",
    [
        "",
        "model: sonnet\n",
        "model: sonnet\nread: CONVENTIONS.md\n",
        "read: [a.md, 'b c.md']  # two files\nmodel: sonnet\n",
        "read:\n    - a.md\n# trailing comment\nmodel: x\n",
        "read:\nmodel: x\n",
    ],
)
def test_aider_every_shape_of_read(conf: str) -> None:
    config = Path.home() / ".aider.conf.yml"
    config.write_text(conf)
    before = yaml.safe_load(conf) or {}
    aider_plan(config)
    after = yaml.safe_load(config.read_text())
    old = before.get("read") or []
    old = [old] if isinstance(old, str) else old
    assert after == {**before, "read": [*old, str(Path.home() / ".aider" / "memd.md")]}
    aider_plan(config, undo=True)
    # Back to the same settings; one value or a [...] list stays the same list, one per line.
    if isinstance(before.get("read"), str):
        before["read"] = [before["read"]]
    assert (yaml.safe_load(config.read_text()) or {}) == before


def test_aider_config_created_when_absent_and_removed_content_on_undo() -> None:
    config = Path.home() / ".aider.conf.yml"
    aider_plan(config)
    assert yaml.safe_load(config.read_text()) == {"read": [str(Path.home() / ".aider" / "memd.md")]}
    aider_plan(config, undo=True)
    assert config.read_text() == ""


@pytest.mark.parametrize(
    "bad", ["read: [unclosed\n", "- a\n- b\n", "read:\n  - a\nread:\n  - b\n", "read: {a: 1}\n"]
)
def test_aider_malformed_config_is_untouched(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = Path.home() / ".aider.conf.yml"
    config.write_text(bad)
    assert integrate("aider") == 1
    assert "hint:" in capsys.readouterr().err
    assert config.read_text() == bad
    assert not (Path.home() / ".aider" / "memd.md").exists()


def test_unknown_assistant_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert memd_main(["integrate", "nope"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and "cline" in err and "aider" in err


# --------------------------------------------------------------- the servers memd wrote start


def test_the_servers_written_start_memd_and_answer_without_the_shells_env(
    home: Path, daemon: DaemonProcess
) -> None:
    """Cline, Roo Code and Continue start memd's server with their own environment, not the
    shell's that ran `integrate`: what they were given must find this memd on its own."""
    (daemon.memory / "_core" / "preferences.md").write_text(
        "# Preferences\n\n## Testing\n\n- always run vitest before committing (WOMBAT)\n"
    )
    wait_for(lambda: "WOMBAT" in json.dumps(daemon.call("context", {"query": "vitest"})))
    env = load_settings(env=memd_env(home)).location_env()
    request = Request(
        undo=False, dry_run=False, memd_argv=[sys.executable, "-m", "memd"], env=env, overrides={}
    )
    storage(Path.home(), "Code", "saoudrizwan.claude-dev")
    apply(vscode_ext.plan(vscode_ext.CLINE, request, home=Path.home(), env={}))
    apply(continue_dev.plan(request, home=Path.home(), env={}))
    cline_file = (
        Path.home()
        / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
    )
    cline_entry = read(cline_file)["mcpServers"]["memd"]
    [continue_entry] = yaml.safe_load((Path.home() / ".continue/mcpServers/memd.yaml").read_text())[
        "mcpServers"
    ]
    bare = {k: v for k, v in memd_env(home).items() if not k.startswith("MEMD_")}
    for entry in (cline_entry, continue_entry):
        params = StdioServerParameters(
            command=entry["command"],
            args=entry["args"],
            env={**bare, **entry.get("env", {})},
            cwd=str(ROOT),
        )

        async def context(params: StdioServerParameters = params) -> str:
            async with Client(params) as client:
                result = await client.call_tool("memory_context", {"query": "vitest"})
                return json.dumps(result.structured_content)

        assert "WOMBAT" in anyio.run(context), entry


def test_the_daemon_keeps_their_instruction_files_current(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Aider's read file and Continue's rule are filled by the running daemon with the memory,
    kept current, and an undo takes them out for good."""
    monkeypatch.setenv("MEMD_HOME", str(home))
    # The keeper looks every `instructions.refresh_s` (5 s) and leaves a file alone for
    # `instructions.quiet_s` (10 s) after its last change (integrate's write, then its own);
    # here a second and two.
    daemon = DaemonProcess(
        home, MEMD_INSTRUCTIONS_REFRESH_S="1", MEMD_INSTRUCTIONS_QUIET_S="2"
    ).start()
    try:
        (daemon.memory / "_core" / "preferences.md").write_text(
            "# Preferences\n\n## Testing\n\n- always run vitest before committing (WOMBAT)\n"
        )
        assert integrate("aider") == 0 and integrate("continue") == 0
        aider_file = Path.home() / ".aider" / "memd.md"
        rule = Path.home() / ".continue" / "rules" / "memd.md"
        wait_for(lambda: "WOMBAT" in aider_file.read_text() and "WOMBAT" in rule.read_text(), 60)
        assert rule.read_text().startswith(continue_dev.RULE_HEAD + instructions.BEGIN)
        (daemon.memory / "_core" / "preferences.md").write_text(
            "# Preferences\n\n## Testing\n\n- always run pytest before committing (OKAPI)\n"
        )
        wait_for(lambda: "OKAPI" in aider_file.read_text(), 60)
        assert integrate("aider", "--undo") == 0
        assert not aider_file.exists()
        time.sleep(3)  # refreshes of the keeper (every second here) have run since
        assert not aider_file.exists() and rule.exists()
    finally:
        daemon.stop()


def test_list_says_they_are_wired_whatever_memd_command_wired_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    storage(Path.home(), "Code", "saoudrizwan.claude-dev")
    assert integrate("cline") == 0 and integrate("continue") == 0 and integrate("aider") == 0
    capsys.readouterr()
    assert memd_main(["integrate", "--list"]) == 0
    out = capsys.readouterr().out
    for line in ("Cline (cline): installed", "MCP server in", "memd's rules file",
                 "Continue (continue): ", "MCP server block", "memd's file under read:"):  # fmt: skip
        assert line in out, out
    assert (
        "not wired (memd integrate cline)" not in out
        and "not wired (memd integrate aider)" not in out
    )
    assert "not wired (memd integrate roo)" in out
