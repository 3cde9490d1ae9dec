"""A real daemon hears every assistant: `status` lists each one, `search`, `recall` and `context`
name the assistant a turn came from, and `--source` keeps one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.assistants import (
    T0,
    Said,
    codex_rollout,
    gemini_chat_path,
    gemini_jsonl,
    gemini_project,
)
from tests.utils import DaemonProcess, wait_for


def hits(d: DaemonProcess, *args: str) -> list[dict[str, object]]:
    out = d.cli("search", *args, "--json")
    assert out.returncode == 0, out.stderr
    return [h for h in json.loads(out.stdout)["hits"] if h["kind"] == "turn"]


def test_every_assistant_in_status_and_source_filters(home: Path) -> None:
    user = Path.home()  # this test's own HOME (see conftest)
    codex_rollout(user / ".codex", [Said("user", "the zebra migration runs on fridays", T0),
                                    Said("assistant", "Noted, fridays.", T0 + 1)])  # fmt: skip
    d = DaemonProcess(home).start()
    try:
        wait_for(lambda: hits(d, "zebra"), 30)
        # Gemini CLI runs for the first time after memd started.
        folder = gemini_project(user / ".gemini", "/home/u/zoo")
        chat = gemini_chat_path(folder, "0199aaaa-0000-7000-8000-000000000000")
        chat.write_text(
            gemini_jsonl("g-session", [Said("user", "zebra stripes for the logo", T0 + 60)])
        )
        wait_for(lambda: len(hits(d, "zebra")) == 3, 30)
        assert {h["source"] for h in hits(d, "zebra")} == {"codex", "gemini"}
        assert {h["source"] for h in hits(d, "zebra", "--source", "gemini")} == {"gemini"}
        assert {h["text"] for h in hits(d, "zebra", "--source", "codex")} == {
            "the zebra migration runs on fridays", "Noted, fridays."}  # fmt: skip
        plain = d.cli("search", "zebra", "--conversations")
        assert "· codex ·" in plain.stdout and "· gemini ·" in plain.stdout, plain.stdout

        recall = d.cli("recall", "zebra", "--source", "gemini")
        assert recall.returncode == 0 and "Gemini CLI" in recall.stdout, recall.stdout
        assert "fridays" not in recall.stdout
        # The context an assistant gets names the assistant a past turn was said with.
        ctx = d.cli("context", "last time the zebra migration, remember?")
        assert "Codex CLI" in ctx.stdout and "fridays" in ctx.stdout, ctx.stdout
        only = d.cli("context", "last time the zebra migration, remember?", "--source", "gemini")
        assert "fridays" not in only.stdout, only.stdout

        status = d.cli("status")
        assert status.returncode == 0, status.stderr
        lines = status.stdout
        assert (
            "Codex CLI (codex): 1 file, 2 turns in 1 session from " + str(user / ".codex") in lines
        )
        assert "Gemini CLI (gemini): 1 file, 1 turn in 1 session" in lines
        assert "OpenCode (opencode): not found (waiting for " in lines
        assert "Claude Code (claude-code): not found" in lines
        data = d.call("status")["logs"]["assistants"]
        assert {a["name"]: a["found"] for a in data}["codex"] is True
    finally:
        d.stop()


def test_an_assistant_switched_off_is_not_read(home: Path) -> None:
    user = Path.home()
    codex_rollout(user / ".codex", [Said("user", "okapi sightings", T0)])
    d = DaemonProcess(home, MEMD_LOGS_CODEX="0").start()
    try:
        assert "Codex CLI (codex): off" in d.cli("status").stdout
        assert hits(d, "okapi") == []
    finally:
        d.stop()


def test_status_names_memds_block_in_an_assistants_instructions(home: Path) -> None:
    user = Path.home()
    d = DaemonProcess(home).start()
    try:
        out = d.cli("integrate", "codex", "--memd", "/opt/memd/bin/memd")
        assert out.returncode == 0, out.stderr
        agents = user / ".codex" / "AGENTS.md"
        assert "<!-- memd:begin" in agents.read_text()
        line = f"memory for codex in {agents}: "
        wait_for(lambda: line in d.cli("status").stdout, 30)
        # Markers broken by hand: the file is left alone and status says why.
        agents.write_text("Mine.\n<!-- memd:begin\n")
        wait_for(lambda: "markers are broken" in d.cli("status").stdout, 30)
        assert agents.read_text() == "Mine.\n<!-- memd:begin\n"
    finally:
        d.stop()
