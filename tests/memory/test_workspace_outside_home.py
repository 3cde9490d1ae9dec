"""A project kept outside the home folder (code in /srv, /workspace, /data): a folder a person
names from their own shell (the CLI, the hooks' session folder) is taken; one a model names
over MCP is refused with the exact way to allow it, `memd workspace add PATH`, which edits
`memory.workspaces` in the settings file in place and has the running daemon read it again."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from memd.cli.workspace import with_workspaces
from memd.core.errors import ConfigError, InvalidParams
from memd.core.settings import load
from memd.integrations import hooks
from memd.integrations.mcp_server import build_server
from tests.utils import DaemonProcess, memd_env, wait_for


@pytest.fixture
def srv(tmp_path: Path) -> Path:
    """A repository outside the test's home (which is tmp_path / "home")."""
    app = tmp_path / "srv" / "app"
    (app / ".git").mkdir(parents=True)
    (app / "src").mkdir()
    return app


def test_a_folder_a_person_names_is_taken_one_a_model_names_is_refused_with_the_way_to_allow_it(
    daemon: DaemonProcess, srv: Path
) -> None:
    d = daemon
    out = d.cli("remember", "--project", "deploys go through the blue pipeline", cwd=srv / "src")
    assert out.returncode == 0, out.stderr
    assert "blue pipeline" in (srv / ".memd" / "memory" / "context.md").read_text()
    ctx = json.loads(d.cli("context", "deploys", "--json", cwd=srv / "src").stdout)
    assert ctx["project"] == "app" and "blue pipeline" in ctx["text"]
    # The hooks: the folder the person started their assistant in.
    settings = load(env=memd_env(d.home))
    said = io.StringIO()
    stdin = json.dumps({"session_id": "s", "cwd": str(srv / "src"), "source": "startup"})
    hooks.run_hook(hooks.SESSION_START, io.StringIO(stdin), said, lambda: settings)
    assert "blue pipeline" in json.loads(said.getvalue())["hookSpecificOutput"]["additionalContext"]
    # Over the socket without a person behind it (what MCP sends for a model): refused, with
    # the command and the settings line that allow it.
    with pytest.raises(InvalidParams) as refused:
        d.call("context", {"query": "x", "project": str(srv / "src")})
    hint = refused.value.hint or ""
    assert f"memd workspace add {srv}" in hint, hint
    assert f'[memory] workspaces = ["{srv}"]' in hint, hint
    # MCP: the model naming the folder is refused; the session's own folder is trusted.
    server = build_server(d.sock, default_project=str(srv))

    async def body() -> list[tuple[bool, str]]:
        async with Client(server) as c:
            results = []
            for args in ({"query": "deploys", "project": str(srv)}, {"query": "deploys"}):
                r = await c.call_tool("memory_context", args)
                text = "\n".join(x.text for x in r.content if isinstance(x, TextContent))
                results.append((bool(r.is_error), text))
            return results

    (named_error, named), (default_error, default) = anyio.run(body)
    assert named_error and "memd workspace add" in named
    assert not default_error and "blue pipeline" in default


def test_workspace_add_allows_it_for_everyone_and_keeps_the_file(
    home: Path, srv: Path, tmp_path: Path
) -> None:
    cfg = home / "config.toml"
    cfg.write_text(
        '# my settings\n[memory]\n# kept elsewhere\nworkspaces = [\n  "/data/old",\n]\n\n[index]\ndebounce_ms = 150  # slow disk\n'
    )
    d = DaemonProcess(home).start()
    try:
        with pytest.raises(InvalidParams):
            d.call("context", {"query": "x", "project": str(srv)})
        out = d.cli("workspace", "add", str(srv))
        assert out.returncode == 0, out.stderr
        assert f"{srv}: added to memory.workspaces in {cfg}" in out.stdout
        assert f"the daemon (pid {d.pid}) reads it again now" in out.stdout
        text = cfg.read_text()
        assert "# my settings" in text and "# kept elsewhere" in text and "# slow disk" in text
        doc = tomllib.loads(text)
        assert doc["memory"]["workspaces"] == ["/data/old", str(srv)]
        assert doc["index"]["debounce_ms"] == 150
        # The daemon read it again: a model may name the folder now.
        wait_for(lambda: _accepted(d, srv), 10)
        assert str(srv) in d.cli("workspace", "list").stdout
        again = d.cli("workspace", "add", str(srv))
        assert again.returncode == 0 and "already in" in again.stdout
        assert d.cli("workspace", "remove", str(srv)).returncode == 0
        assert tomllib.loads(cfg.read_text())["memory"]["workspaces"] == ["/data/old"]
        bad = d.cli("workspace", "add", str(tmp_path / "missing"))
        assert bad.returncode == 1 and "not an existing folder" in bad.stderr
        mine = d.cli("workspace", "add", str(home / "memory"))
        assert mine.returncode == 1 and "memd's own folders" in mine.stderr
    finally:
        d.stop()


def _accepted(d: DaemonProcess, folder: Path) -> bool:
    try:
        d.call("context", {"query": "x", "project": str(folder)})
        return True
    except InvalidParams:
        return False


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", '[memory]\nworkspaces = ["/srv/app"]\n'),
        ("[index]\ndebounce_ms = 5\n", '[index]\ndebounce_ms = 5\n\n[memory]\nworkspaces = ["/srv/app"]\n'),
        ('[memory]\nroot = "/m"\n', '[memory]\nroot = "/m"\nworkspaces = ["/srv/app"]\n'),
        ('[memory]\n# mine\nworkspaces = ["/a",\n  "/b"]  # two\n[x.y]\n',
         '[memory]\n# mine\nworkspaces = ["/srv/app"]  # two\n[x.y]\n'),
        ('memory = {workspaces = ["/a"]}\n', 'memory = {workspaces = ["/srv/app"]}\n'),
        ('memory.workspaces = ["/a"]\n', 'memory.workspaces = ["/srv/app"]\n'),
    ],
)  # fmt: skip
def test_the_settings_file_is_edited_in_place(before: str, after: str) -> None:
    assert with_workspaces(before, ["/srv/app"]) == after


def test_a_file_it_cannot_edit_safely_is_left_alone() -> None:
    with pytest.raises(ConfigError):
        with_workspaces("[memory\n", ["/srv/app"])
    with pytest.raises(ConfigError):
        with_workspaces('memory = "a string"\n', ["/srv/app"])
