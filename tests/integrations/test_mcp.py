"""`memd mcp` driven by the `mcp` package's own client: in-process, over stdio, with a real daemon."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from memd.core.settings import Settings, load
from memd.integrations.mcp_server import build_server
from tests import planted
from tests.utils import ROOT, DaemonProcess, memd_env, wait_for

TOOLS = {
    "memory_context": (True, None),
    "memory_search": (True, None),
    "memory_recall": (True, None),
    "memory_list": (True, None),
    "memory_relationship": (True, None),
    "memory_remember": (False, False),
    "memory_forget": (False, True),
    "memory_forget_conversation": (False, True),
}
ARGS: dict[str, dict[str, Any]] = {
    "memory_context": {"query": "vue testing"},
    "memory_search": {"query": "vitest"},
    "memory_recall": {"query": "vitest", "mode": "topic"},
    "memory_list": {},
    "memory_relationship": {"agent_id": "claude-code"},
    "memory_remember": {"text": "Prefers pnpm over npm"},
    "memory_forget": {"query": "pnpm"},
    "memory_forget_conversation": {"session_id": "s1"},
}


def with_client(server: Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with Client(server) as client:
            return await body(client)

    return anyio.run(run)


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def test_lists_every_tool_with_annotations(tmp_path: Path) -> None:
    tools = with_client(build_server(tmp_path / "memd.sock"), lambda c: c.list_tools()).tools

    assert {t.name for t in tools} == set(TOOLS)
    for tool in tools:
        read_only, destructive = TOOLS[tool.name]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is read_only, tool.name
        assert tool.annotations.destructive_hint is destructive, tool.name
        assert tool.annotations.open_world_hint is False
        assert tool.description and len(tool.description) > 40
    search = next(t for t in tools if t.name == "memory_search")
    assert search.input_schema["required"] == ["query"]
    recall = next(t for t in tools if t.name == "memory_recall")
    assert "topic" in str(recall.input_schema["properties"]["mode"])


def test_without_a_daemon_every_tool_explains(tmp_path: Path) -> None:
    sock = tmp_path / "run" / "memd.sock"

    async def call_all(client: Client) -> dict[str, CallToolResult]:
        return {name: await client.call_tool(name, ARGS[name]) for name in TOOLS}

    results = with_client(build_server(sock), call_all)

    for name, result in results.items():
        assert result.is_error, name
        assert text_of(result) == (
            f"memd daemon is not running on {sock}: start it with `memd serve` "
            "(or install the service with `memd service install`)."
        )


def test_core_files_are_resources(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    (memory / "_core").mkdir(parents=True)
    (memory / "_core" / "profile.md").write_text("# Profile\n\n- Name: Ada\n")

    async def body(client: Client) -> tuple[Any, Any, Any]:
        listed = await client.list_resources()
        profile = await client.read_resource("memd://core/profile")
        prefs = await client.read_resource("memd://core/preferences")
        return listed, profile, prefs

    listed, profile, prefs = with_client(build_server(tmp_path / "s", memory_dir=memory), body)

    assert {str(r.uri) for r in listed.resources} == {
        "memd://core/profile",
        "memd://core/preferences",
    }
    assert all(r.mime_type == "text/markdown" for r in listed.resources)
    assert profile.contents[0].text == "# Profile\n\n- Name: Ada\n"
    assert "no preferences yet" in prefs.contents[0].text


def test_a_core_resource_reaches_the_model_redacted(tmp_path: Path) -> None:
    """A model reads a resource and sends it to its provider: secrets and `<private>` spans
    written by hand in `_core/` do not go with it."""
    memory = tmp_path / "memory"
    (memory / "_core").mkdir(parents=True)
    (memory / "_core" / "profile.md").write_text(planted.TEXT)

    profile = with_client(
        build_server(tmp_path / "s", memory_dir=memory),
        lambda c: c.read_resource("memd://core/profile"),
    )
    text = profile.contents[0].text
    assert planted.leaked(text) == [] and planted.carried(text) == list(planted.PUBLIC)
    assert "[REDACTED:anthropic-key:" in text


def test_a_core_file_linked_out_of_the_tree_is_not_served(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    (memory / "_core").mkdir(parents=True)
    (tmp_path / "secret.md").write_text("OUTSIDE-SECRET")
    os.symlink(tmp_path / "secret.md", memory / "_core" / "preferences.md")
    (memory / "topics").mkdir()
    (memory / "topics" / "me.md").write_text("# Me\n")
    os.symlink("../topics/me.md", memory / "_core" / "profile.md")

    async def body(client: Client) -> tuple[Any, Any]:
        return (
            await client.read_resource("memd://core/preferences"),
            await client.read_resource("memd://core/profile"),
        )

    prefs, profile = with_client(build_server(tmp_path / "s", memory_dir=memory), body)
    assert "OUTSIDE-SECRET" not in prefs.contents[0].text
    assert "not served" in prefs.contents[0].text
    assert profile.contents[0].text == "# Me\n"  # a link inside the tree: its target


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["-m", "memd.integrations.mcp_server"], id="module"),
        pytest.param(["-m", "memd", "mcp"], id="cli"),
    ],
)
def test_stdio_entry_point_serves_and_keeps_stdout_clean(argv: list[str], home: Path) -> None:
    env = memd_env(home)
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(ROOT))

    async def body(client: Client) -> tuple[set[str], CallToolResult]:
        tools = await client.list_tools()
        return {t.name for t in tools.tools}, await client.call_tool("memory_list", {})

    names, result = with_client(params, body)

    assert names == set(TOOLS)
    assert result.is_error
    assert str(load(env=env).socket_path) in text_of(result)


# --- against a real daemon --------------------------------------------------------------


@pytest.fixture
def daemon(home: Path) -> Iterator[Settings]:
    """A real `memd serve` on its own MEMD_HOME, with a few Markdown memories."""
    memory = home / "memory"
    (memory / "_core").mkdir(parents=True)
    (memory / "topics").mkdir()
    (memory / "_core" / "profile.md").write_text(
        "# Profile\n\n## Basics\n\n- Name: Ada (PLATYPUS)\n"
    )
    (memory / "topics" / "vue.md").write_text(
        "# Vue\n\n## Testing\n\nFor Vue components use vitest with @vue/test-utils.\n"
    )
    proc = DaemonProcess(home).start()
    try:
        wait_for(lambda: proc.search_paths("vitest"), timeout=10)
        day = 86400.0
        proc.call(
            "ingest",
            {
                "turns": [
                    {"session_id": "k8s", "role": "user", "ts": time.time() - 2 * day,
                     "content": "How do I set up the Kubernetes ingress for staging?"},
                    {"session_id": "k8s", "role": "assistant", "ts": time.time() - 2 * day + 5,
                     "content": "Use ingress-nginx with TLS certificates from cert-manager."},
                ]
            },
        )  # fmt: skip
        yield load(env=memd_env(home))
    finally:
        proc.stop()


def test_every_tool_against_a_running_daemon(daemon: Settings) -> None:
    server = build_server(daemon.socket_path, memory_dir=daemon.memory_dir)

    async def body(client: Client) -> dict[str, CallToolResult]:
        out = {}
        out["context"] = await client.call_tool("memory_context", {"query": "vue testing"})
        out["search"] = await client.call_tool("memory_search", {"query": "vitest", "limit": 5})
        out["remember"] = await client.call_tool(
            "memory_remember", {"text": "Prefers pnpm over npm (ECHIDNA)", "type": "preference"}
        )
        out["list"] = await client.call_tool("memory_list", {})
        out["sessions"] = await client.call_tool("memory_recall", {"mode": "sessions"})
        out["recall"] = await client.call_tool("memory_recall", {"query": "kubernetes ingress"})
        out["turns"] = await client.call_tool("memory_search", {"query": "cert-manager"})
        out["forget_ask"] = await client.call_tool("memory_forget", {"query": "ECHIDNA"})
        out["forget"] = await client.call_tool(
            "memory_forget", {"query": "ECHIDNA", "confirm": True}
        )
        out["list_after"] = await client.call_tool("memory_list", {})
        out["relationship"] = await client.call_tool("memory_relationship", {"agent_id": "Ally"})
        return out

    r = with_client(server, body)

    for name, result in r.items():
        assert not result.is_error, (name, text_of(result))
    assert "PLATYPUS" in text_of(r["context"]) and "vitest" in text_of(r["context"])
    assert r["context"].structured_content["enabled"] is True
    assert "topics/vue.md" in text_of(r["search"]) and "Testing" in text_of(r["search"])
    assert r["search"].structured_content["hits"][0]["path"].endswith("topics/vue.md")
    remembered = r["remember"].structured_content
    assert remembered["id"] and remembered["id"] in text_of(r["remember"])
    assert "ECHIDNA" in text_of(r["list"])
    assert r["sessions"].structured_content["mode"] == "sessions"
    assert "Kubernetes ingress" in text_of(r["sessions"])
    assert r["recall"].structured_content["mode"] == "topic"
    assert "ingress-nginx" in text_of(r["recall"])
    assert "conversation" in text_of(r["turns"]) and "session k8s" in text_of(r["turns"])
    assert "cert-manager" in text_of(r["turns"])
    assert not r["forget_ask"].structured_content["removed"]
    assert "ECHIDNA" in text_of(r["forget_ask"])
    assert r["forget"].structured_content["removed"]
    assert "ECHIDNA" not in text_of(r["list_after"])
    assert "ECHIDNA" not in (daemon.memory_dir / remembered["path"]).read_text()
    assert r["relationship"].structured_content["agent_id"] == "ally"
    assert text_of(r["relationship"]).startswith("agent ally: trust not set")
