"""Deleting a session or a turn (socket, CLI, MCP): gone from the index and its search, from the
files of pushed turns and from the journal, and it stays gone after the index is rebuilt."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memd.core.errors import NotFound
from memd.integrations.mcp_server import build_server
from tests.conversations.test_durable_turns import pushed_dir, remove_index
from tests.utils import DaemonProcess, wait_for


def exchange(session: str, word: str, ts: float) -> list[dict[str, Any]]:
    return [
        {"session_id": session, "id": "q1", "role": "user", "content": f"tell me about {word} one", "ts": ts},
        {"session_id": session, "id": "a1", "role": "assistant", "content": f"{word} answer one", "ts": ts + 1},
        {"session_id": session, "id": "q2", "role": "user", "content": f"and {word} two", "ts": ts + 2},
        {"session_id": session, "id": "a2", "role": "assistant", "content": f"{word} answer two", "ts": ts + 3},
    ]  # fmt: skip


def journal_text(d: DaemonProcess) -> str:
    return "".join(p.read_text() for p in sorted((d.memory / "journal").glob("*.md")))


def pushed_text(d: DaemonProcess) -> str:
    return "".join(p.read_text() for p in sorted(pushed_dir(d.home).glob("*.jsonl")))


def searched(d: DaemonProcess, word: str) -> list[str]:
    hits = d.call("search", {"query": word, "scope": "conversations", "limit": 100})["hits"]
    return sorted(h["text"] for h in hits)


def turn_ids(d: DaemonProcess, session: str) -> list[str]:
    return [t["turn_id"] for t in d.call("recall", {"session_id": session})["sessions"][0]["turns"]]


@pytest.fixture
def logs_daemon(home: Path) -> DaemonProcess:
    (home / "claude" / "-home-u-proj").mkdir(parents=True)
    return DaemonProcess(home, MEMD_LOGS_CLAUDE_DIR=str(home / "claude"), MEMD_LOGS_POLL_S="0.2")


def test_forget_a_pushed_session_and_a_turn(logs_daemon: DaemonProcess) -> None:
    d = logs_daemon.start()
    try:
        now = time.time() - 600
        d.call(
            "ingest",
            {"turns": exchange("s-alpha", "albatross", now) + exchange("s-beta", "bittern", now)},
        )
        wait_for(
            lambda: (
                "albatross answer two" in journal_text(d)
                and "bittern answer two" in journal_text(d)
            )
        )

        asked = d.cli("forget", "--session", "s-alpha")  # no terminal to confirm on
        assert asked.returncode == 1 and "4 turns" in asked.stderr and "--yes" in asked.stderr
        assert len(searched(d, "albatross")) == 4

        out = d.cli("forget", "--session", "s-alpha", "--yes")
        assert out.returncode == 0, out.stderr
        assert "forgot session s-alpha" in out.stdout and ": 4 turns" in out.stdout
        with pytest.raises(NotFound):
            d.call("recall", {"session_id": "s-alpha"})
        assert searched(d, "albatross") == []
        assert "albatross" not in pushed_text(d)
        assert "albatross" not in journal_text(d)
        assert "albatross" not in json.dumps(d.call("recall", {"mode": "sessions"}))
        assert len(searched(d, "bittern")) == 4 and "bittern answer one" in journal_text(d)

        out = d.cli("forget", "--session", "s-beta", "--turn", "a1", "--yes")
        assert out.returncode == 0, out.stderr
        assert turn_ids(d, "s-beta") == ["q1", "q2", "a2"]
        assert "bittern answer one" not in pushed_text(d) and "bittern two" in pushed_text(d)
        # The exchange that turn answered leaves the journal with it; the other one stays.
        assert "bittern answer one" not in journal_text(d)
        assert "bittern answer two" in journal_text(d)
        assert "bittern answer one" not in json.dumps(d.call("recall", {"session_id": "s-beta"}))
    finally:
        assert d.stop() == 0
    remove_index(d.home)
    d.start()
    try:
        with pytest.raises(NotFound):
            d.call("recall", {"session_id": "s-alpha"})
        assert turn_ids(d, "s-beta") == ["q1", "q2", "a2"]
    finally:
        d.stop()


def test_a_forgotten_tailed_session_stays_forgotten(logs_daemon: DaemonProcess) -> None:
    d = logs_daemon.start()
    sid = str(uuid.uuid4())
    log = d.home / "claude" / "-home-u-proj" / f"{sid}.jsonl"

    def record(uid: str, kind: str, text: str) -> str:
        return json.dumps({"parentUuid": None, "isSidechain": False, "type": kind, "sessionId": sid,
                           "uuid": uid, "timestamp": dt.datetime.now(dt.UTC).isoformat(),
                           "message": {"role": kind, "content": text}}) + "\n"  # fmt: skip

    try:
        log.write_text(record("u1", "user", "where do cormorants nest") +
                       record("u2", "assistant", "cormorants nest on cliffs"))  # fmt: skip
        wait_for(lambda: len(searched(d, "cormorants")) == 2)
        short = f"{sid[:8]}-"  # the journal's short id names the session too
        heading = wait_for(lambda: [ln for ln in journal_text(d).splitlines() if short in ln])
        short_id = heading[0].rsplit("· ", 1)[1].strip()
        res = d.call("forget_conversation", {"session_id": short_id, "confirm": True})
        assert (res["session_id"], res["removed"], len(res["turn_ids"])) == (sid, True, 2)
        assert searched(d, "cormorants") == [] and "cormorants" not in journal_text(d)
        assert d.cli("reindex", "--full").returncode == 0
        assert searched(d, "cormorants") == []
    finally:
        assert d.stop() == 0
    remove_index(d.home)
    d.start()
    try:
        wait_for(lambda: d.call("status")["logs"]["files"] == 1)
        assert searched(d, "cormorants") == []
        # The conversation goes on in the same transcript: what is said next is kept.
        with log.open("a") as f:
            f.write(record("u3", "user", "and where do cormorants winter"))
        wait_for(lambda: len(searched(d, "cormorants")) == 1)
        assert turn_ids(d, sid) == ["u3"]
    finally:
        d.stop()


def test_the_mcp_tool_forgets_a_session(module_daemon: DaemonProcess) -> None:
    module_daemon.call("ingest", {"turns": exchange("s-mcp", "pelican", time.time() - 60)})
    server = build_server(module_daemon.sock)

    async def body() -> tuple[Any, Any]:
        async with Client(server) as client:
            ask = await client.call_tool("memory_forget_conversation", {"session_id": "s-mcp"})
            done = await client.call_tool(
                "memory_forget_conversation", {"session_id": "s-mcp", "confirm": True}
            )
            return ask, done

    ask, done = anyio.run(body)
    assert not ask.is_error and ask.structured_content["removed"] is False
    assert not done.is_error and done.structured_content["removed"] is True
    assert searched(module_daemon, "pelican") == []


def test_unknown_and_ambiguous_sessions_are_refused(module_daemon: DaemonProcess) -> None:
    with pytest.raises(NotFound, match="no session"):
        module_daemon.call("forget_conversation", {"session_id": "nope", "confirm": True})
    module_daemon.call(
        "ingest", {"session_id": "s-keep", "id": "q", "role": "user", "content": "kept"}
    )
    with pytest.raises(NotFound, match="turn"):
        module_daemon.call(
            "forget_conversation", {"session_id": "s-keep", "turn_ids": ["zz"], "confirm": True}
        )
    assert turn_ids(module_daemon, "s-keep") == ["q"]
