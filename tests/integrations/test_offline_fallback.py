"""With the daemon down, `memd hook` and `memd mcp` answer from the index read-only, like the
CLI does: a session still starts with its memory, and MCP's read tools still answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from tests.integrations.test_mcp import text_of, with_client
from tests.utils import ROOT, DaemonProcess, memd_env, wait_for


def _stopped_daemon_with_memory(home: Path) -> DaemonProcess:
    d = DaemonProcess(home).start()
    (d.memory / "_core" / "preferences.md").write_text(
        "# Preferences\n\n## Style\n\n- Answers short, code first (marker: QUOKKA-PREF)\n"
    )
    (d.memory / "topics" / "vue.md").write_text(
        "# Vue\n\n## Testing\n\n- For Vue components use vitest (marker: WOMBAT-VUE)\n"
    )
    wait_for(lambda: d.search_paths("QUOKKA") and d.search_paths("WOMBAT"), 10)
    d.stop()
    return d


def _hook(home: Path, argv: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    # A limit well above the default (0.8 s, which a loaded machine can spend opening the index
    # alone): what is tested here is where the answer comes from, not how fast it is.
    argv = [*argv[:-1], "--time-limit", "20", argv[-1]]
    return subprocess.run([sys.executable, *argv], input=stdin, capture_output=True, text=True,
                          env=memd_env(home), cwd=ROOT, timeout=60)  # fmt: skip


@pytest.mark.serial  # the hook answers within its time limit or not at all: run alone
def test_hooks_answer_from_the_index_when_the_daemon_is_down(home: Path) -> None:
    _stopped_daemon_with_memory(home)
    start = json.dumps({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "SessionStart",
                        "source": "startup"})  # fmt: skip
    proc = _hook(home, ["-m", "memd", "hook", "session-start"], start)
    assert (proc.returncode, proc.stderr) == (0, ""), proc
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "QUOKKA-PREF" in ctx

    prompt = json.dumps({"session_id": "s1", "cwd": "/tmp", "prompt": "how do I test vue?",
                         "hook_event_name": "UserPromptSubmit"})  # fmt: skip
    proc = _hook(home, ["-m", "memd", "hook", "user-prompt"], prompt)
    assert proc.returncode == 0 and "WOMBAT-VUE" in proc.stdout, proc


def test_mcp_read_tools_answer_from_the_index_when_the_daemon_is_down(home: Path) -> None:
    _stopped_daemon_with_memory(home)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memd", "mcp"], env=memd_env(home), cwd=str(ROOT)
    )

    async def body(client: Client) -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        return (
            await client.call_tool("memory_search", {"query": "WOMBAT"}),
            await client.call_tool("memory_context", {"query": "vue testing"}),
            await client.call_tool("memory_remember", {"text": "Prefers pnpm"}),
        )

    search, context, remember = with_client(params, body)
    assert not search.is_error, text_of(search)
    assert "vue.md" in text_of(search)
    assert "daemon is not running: answered from its index" in text_of(search)
    assert "index last updated" in text_of(search)
    assert not context.is_error and "QUOKKA-PREF" in text_of(context)
    assert remember.is_error and "not running" in text_of(remember)  # writes need the daemon
