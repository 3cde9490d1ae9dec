"""Which folder a `project` names: a slug, a configured workspace, or an existing folder under
the user's home, resolved by the client where the caller is; anything else is -32602.

Real daemon, real folders, real socket; the CLI and the hooks run where a user would run them.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from memd.api import client
from memd.core.errors import InvalidParams
from memd.core.settings import load
from memd.integrations import hooks
from memd.integrations.mcp_server import build_server
from tests import forkserver
from tests.utils import DaemonProcess, memd_env, wait_for


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    return tmp_path / "home"  # $HOME of the tests (conftest) and of their daemons


@pytest.fixture
def workspace(user_home: Path) -> Path:
    ws = user_home / "code" / "shop"
    (ws / ".git").mkdir(parents=True)
    (ws / "src").mkdir()
    return ws


def refused(d: DaemonProcess, method: str, params: dict[str, object]) -> str:
    with pytest.raises(InvalidParams) as err:
        d.call(method, params)
    assert "'project'" in str(err.value), err.value
    return str(err.value)


@pytest.fixture
def daemon(home: Path, tmp_path: Path) -> Iterator[DaemonProcess]:
    """A daemon whose working directory is a scratch folder: a relative path resolved there
    (the defect these tests catch) lands in the scratch folder, nowhere else."""
    scratch = tmp_path / "daemon-cwd" / "a" / "b"
    scratch.mkdir(parents=True)
    d = DaemonProcess(home, cwd=scratch).start()
    yield d
    d.stop()


def test_project_paths_outside_home_or_relative_are_refused(
    daemon: DaemonProcess, tmp_path: Path, user_home: Path
) -> None:
    elsewhere = tmp_path / "some" / "dir"
    elsewhere.mkdir(parents=True)
    for value in (str(elsewhere), "../../x", "..%2f..%2fetc", "./x",
                  str(user_home / "no-such-folder"), str(user_home)):  # fmt: skip
        refused(daemon, "remember", {"text": "t", "scope": "project", "project": value})
        refused(daemon, "context", {"query": "t", "project": value})
    refused(daemon, "context", {"query": "t", "project": "/etc"})
    assert not (elsewhere / ".memd").exists()
    assert not list(tmp_path.rglob(".memd"))
    assert not (Path.cwd() / ".memd").exists()


def test_slug_workspace_under_home_and_configured_workspace_are_accepted(
    home: Path, tmp_path: Path, workspace: Path
) -> None:
    configured = tmp_path / "srv" / "api"  # outside the home, but configured
    (configured / ".memd" / "memory").mkdir(parents=True)
    d = DaemonProcess(home, MEMD_MEMORY_WORKSPACES=json.dumps([str(configured)])).start()
    try:
        r = d.call("remember", {"text": "uses RFC 7807", "scope": "project", "project": "billing"})
        assert r["path"] == str(home / "memory" / "projects" / "billing" / "context.md")
        r = d.call("remember", {"text": "pnpm workspaces", "scope": "project",
                                "project": str(workspace / "src")})  # fmt: skip
        assert r["path"] == str(workspace / ".memd" / "memory" / "context.md")
        r = d.call("remember", {"text": "deploys on fridays", "scope": "project",
                                "project": str(configured)})  # fmt: skip
        assert r["path"] == str(configured / ".memd" / "memory" / "context.md")
        assert "deploys on fridays" in d.call("context", {"project": str(configured)})["text"]
    finally:
        d.stop()


def test_cli_resolves_the_project_where_the_caller_is(
    daemon: DaemonProcess, workspace: Path
) -> None:
    r = daemon.cli("remember", "--project", "API errors use RFC 7807", cwd=workspace / "src")
    assert r.returncode == 0, r.stderr
    assert "RFC 7807" in (workspace / ".memd" / "memory" / "context.md").read_text()

    # `--project .` is the caller's folder, not the daemon's.
    r = daemon.cli("context", "errors", "--project", ".", "--json", cwd=workspace / "src")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["project"] == "shop"
    # Plain `memd context` inside a workspace includes its project memory.
    r = daemon.cli("context", "errors", "--json", cwd=workspace)
    out = json.loads(r.stdout)
    assert out["project"] == "shop" and "RFC 7807" in out["text"], r.stderr
    # Outside any workspace there is no project, and no error.
    r = daemon.cli("context", "errors", "--json", cwd=Path.home())
    assert r.returncode == 0 and json.loads(r.stdout)["project"] == "", r.stderr


def test_hooks_include_the_workspace_memory_and_never_fail_outside_home(
    daemon: DaemonProcess, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".memd" / "memory").mkdir(parents=True)
    (workspace / ".memd" / "memory" / "context.md").write_text("# Shop\n\n## Context\n- KOALA\n")
    daemon.call("remember", {"text": "Name: Ada (PLATYPUS)", "type": "personal"})
    settings = load(env=memd_env(daemon.home))

    def session_start(cwd: Path) -> str:
        out = io.StringIO()
        stdin = json.dumps({"session_id": "s", "cwd": str(cwd), "source": "startup"})
        hooks.run_hook(hooks.SESSION_START, io.StringIO(stdin), out, lambda: settings)
        return str(json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"])

    inside = session_start(workspace / "src")
    assert "KOALA" in inside and "PLATYPUS" in inside
    outside = tmp_path / "scratch"
    outside.mkdir()
    assert "PLATYPUS" in session_start(outside)  # no project, but the rest of memory


def test_mcp_limits_the_project_a_model_names(
    daemon: DaemonProcess, workspace: Path, tmp_path: Path
) -> None:
    server = build_server(daemon.sock, default_project=str(workspace))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def body() -> list[tuple[bool, str]]:
        async with Client(server) as c:
            out = []
            for project in ("../../../../elsewhere", str(elsewhere), ".", "src"):
                r = await c.call_tool(
                    "memory_remember", {"text": f"mcp note {project}", "scope": "project",
                                        "project": project},
                )  # fmt: skip
                text = "\n".join(x.text for x in r.content if isinstance(x, TextContent))
                out.append((bool(r.is_error), text))
            return out

    results = anyio.run(body)
    # A path leaving the workspace and a folder outside the home are refused; "." is the
    # workspace this server runs for; a bare name is a project slug.
    assert [e for e, _ in results] == [True, True, False, False], results
    assert "'project'" in results[0][1] and "'project'" in results[1][1]
    assert "mcp note ." in (workspace / ".memd" / "memory" / "context.md").read_text()
    assert "mcp note src" in (daemon.memory / "projects" / "src" / "context.md").read_text()
    assert not (elsewhere / ".memd").exists()


def test_client_side_project_param() -> None:
    cwd = Path.cwd()
    assert client.project_param("") == ""
    assert client.project_param("billing") == "billing"
    assert client.project_param(".") == str(cwd)
    assert client.project_param("../x", base=Path("/a/b")) == "/a/x"
    assert client.project_param("~/p") == str(Path.home() / "p")
    assert client.project_param("/abs/olute/") == "/abs/olute"


def test_cli_without_a_daemon_resolves_the_same_way(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    env = memd_env(home)
    r = forkserver.run([sys.executable, "-m", "memd", "remember", "--project", "offline note"],
                       cwd=workspace, env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "offline note" in (workspace / ".memd" / "memory" / "context.md").read_text()
    # A folder outside the home that a person names from their shell is taken as it is.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = forkserver.run([sys.executable, "-m", "memd", "remember", "--project", "--project-path",
                        str(elsewhere), "x"],
                       cwd=workspace, env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "- x <!-- memd" in (elsewhere / ".memd" / "memory" / "context.md").read_text()
    # memd's own folders never are, named from anywhere.
    (home / "memory").mkdir(exist_ok=True)
    r = forkserver.run([sys.executable, "-m", "memd", "remember", "--project", "--project-path",
                        str(home / "memory"), "y"],
                       cwd=workspace, env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 1 and "--project-path" in r.stderr and "memd's own folders" in r.stderr
    assert not os.path.exists(home / "memory" / ".memd")


def test_a_repository_in_the_home_itself_is_not_every_folders_workspace(
    daemon: DaemonProcess, user_home: Path
) -> None:
    (user_home / ".git").mkdir()  # a dotfiles repository
    notes = user_home / "notes"
    notes.mkdir()
    r = daemon.call("remember", {"text": "t", "scope": "project", "project": str(notes)})
    assert r["path"] == str(notes / ".memd" / "memory" / "context.md")
    assert not (user_home / ".memd").exists()


def test_a_project_memory_deleted_while_memd_was_down_is_not_found_after_it_starts(
    home: Path, workspace: Path
) -> None:
    """The project's folder is a root once memd writes memory there, but not after a restart
    until the project is used again: its files stayed in the index as they were, and every
    `search` still found a memory the person had deleted meanwhile."""
    r = _remembered_in(home, workspace, "the shop deploys with kamal")
    Path(r["path"]).unlink()
    d = DaemonProcess(home).start()
    try:
        assert d.call("search", {"query": "kamal"})["hits"] == []
    finally:
        d.stop()


def test_a_projects_folder_is_watched_again_after_a_restart_before_the_project_is_used(
    home: Path, workspace: Path
) -> None:
    """After a restart, a note a person adds to a project's memory folder (or an edit of the
    one memd wrote) is found as soon as it is saved, as before the restart — not only once an
    assistant uses the project again (before, the folder was no root until then: not watched)."""
    r = _remembered_in(home, workspace, "the shop deploys with kamal")
    d = DaemonProcess(home).start()
    try:
        folder = Path(r["path"]).parent
        (folder / "runbook.md").write_text("# Runbook\n\n- restart the queue with sidekiqctl\n")
        with open(r["path"], "a") as fh:
            fh.write("- backups go to tarsnap\n")
        assert wait_for(lambda: d.search_paths("sidekiqctl") and d.search_paths("tarsnap"), 15)
    finally:
        d.stop()


def test_a_link_put_in_place_of_a_projects_folder_is_not_watched_after_a_restart(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    """A project's folder replaced by a link to somewhere else while memd was down is not
    taken back as a root at start: what the link leads to is never read."""
    r = _remembered_in(home, workspace, "the shop deploys with kamal")
    folder = Path(r["path"]).parent
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "context.md").write_text("# Secrets\n\n- the vault word is quagmire\n")
    os.rename(folder, tmp_path / "moved-away")
    folder.symlink_to(elsewhere)
    d = DaemonProcess(home).start()
    try:
        (elsewhere / "more.md").write_text("# More\n\n- another word, brouhaha\n")
        assert d.call("search", {"query": "kamal"})["hits"] == []
        assert d.call("search", {"query": "quagmire OR brouhaha"})["hits"] == []
    finally:
        d.stop()


def _remembered_in(home: Path, workspace: Path, text: str) -> dict[str, str]:
    """A daemon remembers `text` in the project at `workspace`, finds it, and stops."""
    d = DaemonProcess(home).start()
    try:
        r: dict[str, str] = d.call("remember", {"text": text, "scope": "project",
                                                "project": str(workspace)})  # fmt: skip
        assert d.call("search", {"query": text.split()[-1]})["hits"]
    finally:
        d.stop()
    return r
