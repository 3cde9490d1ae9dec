"""A real daemon tails real log files while they are written; imports, pushes and recall over
the socket and the CLI."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conversations.helpers import FIXTURES
from tests.utils import DaemonProcess, wait_for

SID = "5f1c2d3e-0000-4000-8000-000000000001"
POLL_S = "0.3"


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


def texts(d: DaemonProcess, session_id: str) -> dict[str, str]:
    res = d.call("recall", {"session_id": session_id, "limit": 100})
    return {t["turn_id"]: t["text"] for t in res["sessions"][0]["turns"]}


def found(d: DaemonProcess, phrase: str) -> list[dict[str, Any]]:
    """Stored turns that contain `phrase` (found by search, checked word for word)."""
    hits = d.call("search", {"query": phrase, "scope": "conversations", "limit": 50})["hits"]
    return [h for h in hits if phrase.lower() in h["text"].lower()]


@pytest.fixture
def logs_daemon(home: Path) -> Iterator[DaemonProcess]:
    (home / "claude" / "-home-user-proj").mkdir(parents=True)
    (home / "logs").mkdir()
    d = DaemonProcess(
        home,
        MEMD_LOGS_CLAUDE_DIR=str(home / "claude"),
        MEMD_LOGS_SOURCES=json.dumps([{"path": str(home / "logs"), "format": "jsonl"}]),
        MEMD_LOGS_POLL_S=POLL_S,
    ).start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()


def test_claude_code_transcript_written_while_the_daemon_runs(
    logs_daemon: DaemonProcess, home: Path
) -> None:
    d = logs_daemon
    project = home / "claude" / "-home-user-proj"
    log = project / f"{SID}.jsonl"
    lines = (FIXTURES / "claude_code_session.jsonl").read_bytes().split(b"\n")
    # Subagent transcripts only hold sidechain records: never sessions of their own.
    sidechain = [ln for ln in lines if b'"isSidechain":true' in ln]
    (project / "agent-7c1e2a.jsonl").write_bytes(b"\n".join(sidechain) + b"\n")
    (project / SID / "subagents").mkdir(parents=True)
    (project / SID / "subagents" / "agent-7c1e2a.jsonl").write_bytes(b"\n".join(sidechain) + b"\n")

    append(log, b"\n".join(lines[:6]) + b"\n")  # up to the first text part of msg_01
    wait_for(
        lambda: (
            "msg_01" in texts(d, SID)
            if d.call("recall", {"mode": "sessions"})["sessions"]
            else False
        )
    )
    append(log, b"\n".join(lines[6:]))  # the rest, ending in a record cut in the middle
    wait_for(lambda: "msg_04" in texts(d, SID))

    said = texts(d, SID)
    assert said == {
        "u1": "why does the login test fail on CI?",
        "msg_01": "Let me look at the CI config first.",
        "msg_02": "The test binds a fixed port; CI runs jobs in parallel, so two runs collide.",
        "u7": "here is the screenshot of the failing job",
        "msg_03": "The screenshot shows `EADDRINUSE`.\n\nUse port 0 and read the bound port back.",
        "msg_04": "Done: the test now uses an ephemeral port.",
    }
    for phrase in ("Check the CI config first", "name: ci", "Found 3 bindings", "Caveat", "Total cost",
                   "continued from a previous conversation", "overloaded", "retry logic", "iVBORw0KGgo"):  # fmt: skip
        assert not found(d, phrase), phrase
    sessions = d.call("recall", {"mode": "sessions"})["sessions"]
    assert [(s["session_id"], s["title"], s["turn_count"]) for s in sessions] == [
        (SID, "Fix flaky login test", 6)
    ]

    # The malformed line is reported with its file and line number; the truncated one waits.
    st = d.cli("status")
    assert st.returncode == 0, st.stderr
    assert f"bad line {log}:20: not valid JSON" in st.stdout
    assert "1 bad line;" in st.stdout
    # Three files: the session and its sub-agent's two transcripts.
    claude = f"Claude Code (claude-code): 3 files, 6 turns in 1 session from {home / 'claude'}"
    assert claude in st.stdout
    assert d.call("status")["logs"]["bad_lines"] == 1

    # Claude Code finishes the half-written record in place.
    content = log.read_bytes()
    record = {"parentUuid": "a7", "isSidechain": False, "type": "user", "sessionId": SID, "uuid": "u8",
              "timestamp": "2026-07-06T12:05:00.000Z", "message": {"role": "user", "content": "thanks, one more thing"}}  # fmt: skip
    with log.open("r+b") as f:
        f.seek(content.rindex(b"\n") + 1)
        f.write(json.dumps(record).encode() + b"\n")
    wait_for(lambda: "u8" in texts(d, SID))
    assert len(texts(d, SID)) == 7
    assert d.call("status")["logs"]["bad_lines"] == 1


def test_generic_jsonl_lines_wait_for_their_newline(logs_daemon: DaemonProcess, home: Path) -> None:
    d = logs_daemon
    log = home / "logs" / "app.jsonl"
    now = time.time()
    first = {
        "session_id": "app-1",
        "role": "user",
        "content": "Which database should the shop use?",
        "ts": now - 60,
    }
    second = {
        "session_id": "app-1",
        "role": "assistant",
        "content": "Postgres, with pgbouncer in front.",
        "ts": now - 50,
    }
    log.write_text(json.dumps(first) + "\n" + json.dumps(second)[:30])
    wait_for(lambda: found(d, "database should the shop"))
    time.sleep(3 * float(POLL_S))
    assert not found(d, "pgbouncer")
    append(log, (json.dumps(second)[30:] + "\n").encode())
    wait_for(lambda: found(d, "pgbouncer"))
    # An OpenAI `messages` line in the same log is one conversation.
    chat = {"id": "oa-1", "title": "Lisbon weather", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Will it rain in Lisbon?"},
        {"role": "assistant", "content": [{"type": "text", "text": "No, sunny all week."}]}]}  # fmt: skip
    append(log, (json.dumps(chat) + "\n").encode())
    wait_for(lambda: found(d, "sunny all week"))
    oa = d.call("recall", {"session_id": "oa-1"})["sessions"][0]
    assert (oa["title"], oa["turn_count"], oa["source"]) == ("Lisbon weather", 2, "openai")
    # Both turns are recent: the exchange is in today's journal, under its session.
    journal = d.memory / "journal" / f"{dt.date.fromtimestamp(now - 60).isoformat()}.md"
    text = wait_for(lambda: journal.exists() and journal.read_text())
    assert (
        "**Q:** Which database should the shop use? **A:** Postgres, with pgbouncer in front."
        in text
    )
    assert "· app-1" in text


def test_replaced_truncated_and_deleted_logs(logs_daemon: DaemonProcess, home: Path) -> None:
    d = logs_daemon
    log = home / "logs" / "rot.jsonl"

    def line(i: int) -> str:
        return json.dumps({"session_id": "rot", "role": "user" if i % 2 else "assistant", "content": f"message number {i} zebra",
                           "ts": 1_700_000_000 + i}) + "\n"  # fmt: skip

    def count() -> int:
        return int(d.call("status")["logs"]["turns"])

    log.write_text("".join(line(i) for i in range(5)))
    wait_for(lambda: count() == 5)
    tmp = home / "logs" / "rot.jsonl.tmp"
    tmp.write_text("".join(line(i) for i in range(7)))
    os.replace(tmp, log)  # a new file with the old lines and two more
    wait_for(lambda: count() == 7)
    log.write_text("".join(line(i) for i in range(2)))  # truncated in place
    append(log, line(7).encode())
    wait_for(lambda: count() == 8)
    log.unlink()
    wait_for(lambda: d.call("status")["logs"]["deleted_files"] == 1)
    assert count() == 8 and len(found(d, "zebra")) == 8


def test_imports_and_pushed_turns(logs_daemon: DaemonProcess, home: Path, tmp_path: Path) -> None:
    d = logs_daemon
    export = FIXTURES / "chatgpt_conversations.json"
    first = d.cli("import", str(export), "--json")
    assert first.returncode == 0, first.stderr
    res = json.loads(first.stdout)
    assert res["format"] == "chatgpt" and res["added"] > 0
    again = json.loads(d.cli("import", str(export), "--json").stdout)
    assert again["added"] == 0 and again["updated"] == 0
    trip = texts(d, "6650aaaa-0000-4000-8000-00000000c0c1")
    assert "Plan 3 days in Kyoto" in trip.values()
    assert not found(d, "OLD ANSWER") and not found(d, "EDITED PROMPT")

    folder = tmp_path / "projects" / "-home-user-proj"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code_session.jsonl", folder / f"{SID}.jsonl")
    out = d.cli("import", str(tmp_path / "projects"))
    assert (
        out.returncode == 0
        and "imported claude-code: 6 new turns in 1 session, 1 bad line" in out.stdout
    )
    assert "0 new turns" in d.cli("import", str(tmp_path / "projects")).stdout

    key = "ghp_" + "A" * 36
    stdin = "\n".join(json.dumps(r) for r in [
        {"session_id": "app-7", "role": "user", "content": f"my token is {key}, store the deploy notes", "id": "p1"},
        {"session_id": "app-7", "role": "assistant", "content": "Deploy notes stored.", "id": "p2"},
    ])  # fmt: skip
    out = d.cli("ingest", input=stdin)
    assert out.returncode == 0 and "2 turns added" in out.stdout, out.stderr
    assert "0 turns added" in d.cli("ingest", input=stdin).stdout
    one = d.call("ingest", {"session_id": "app-7", "role": "user", "content": "one more"})
    assert (one["accepted"], one["added"]) == (1, 1)
    stored = texts(d, "app-7")["p1"]
    assert key not in stored and "[REDACTED:github-token:" in stored
    today = d.memory / "journal" / f"{dt.date.today().isoformat()}.md"
    assert "Deploy notes stored." in wait_for(lambda: today.exists() and today.read_text())
    bad = d.cli("ingest", input='{"session_id": "x", "content": "no role"}\n')
    assert bad.returncode == 1 and "turns[0]" in bad.stderr


def test_recall_cli_answers_the_four_scenarios(home: Path) -> None:
    (home / "logs").mkdir(parents=True)
    shutil.copy(FIXTURES / "three_sessions.jsonl", home / "logs")
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false", MEMD_LOGS_POLL_S=POLL_S,
                      MEMD_LOGS_SOURCES=json.dumps([{"path": str(home / "logs"), "format": "jsonl"}])).start()  # fmt: skip
    try:
        wait_for(lambda: d.call("status")["logs"]["turns"] == 16)
        listed = d.cli("recall")
        assert listed.returncode == 0, listed.stderr
        heads = [ln for ln in listed.stdout.splitlines() if ln.startswith("## ")]
        assert heads == [
            "## Kyoto trip — 2026-04-20",
            "## Postgres migration — 2026-03-09",
            "## Vue 3 组件设计 — 2026-03-02",
        ]
        assert listed.stdout.count("Summary: Asked:") == 3

        out = d.cli("recall", "sequences", "foreign", "keys").stdout
        assert out.startswith("## Postgres migration — 2026-03-09")
        assert "[2026-03-09 15:" in out and "VALIDATE CONSTRAINT" in out and "setval" in out

        out = d.cli("recall", "--session", "trip-1").stdout
        assert out.count("\n- [2026-04-20 08:") == 4 and "Summary:" in out

        found = json.loads(d.cli("recall", "Nara", "--session", "trip-1", "--json").stdout)
        assert found["mode"] == "within"
        assert [t["turn_id"] for t in found["sessions"][0]["turns"]][:2] == ["trip-1-2", "trip-1-1"]

        ctx = d.cli("context", "之前聊过 Vue 吗")
        assert ctx.returncode == 0, ctx.stderr
        assert "### Vue 3 组件设计 — 2026-03-02" in ctx.stdout
        assert "- [2026-03-02 10:00] user: 我在做一个 Vue 3 项目" in ctx.stdout
    finally:
        d.stop()
