"""Pushed turns are kept in files, so the index stays a cache: a lost, damaged or rebuilt index
gets every acknowledged turn back, once, with the same ids."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from tests.utils import DaemonProcess, wait_for

CLAUDE_SID = "7d2e3f40-0000-4000-8000-0000000000c1"


def pushed_dir(home: Path) -> Path:
    return home / "data" / "conversations" / "pushed"


def turns_of(d: DaemonProcess, session_id: str) -> list[tuple[str, str, str]]:
    """(turn id, role, text) of every stored turn of a session, in order."""
    res = d.call("recall", {"session_id": session_id, "limit": 100})
    return [(t["turn_id"], t["role"], t["text"]) for t in res["sessions"][0]["turns"]]


def push(d: DaemonProcess, session: str, n: int, **extra: Any) -> dict[str, Any]:
    turns = []
    for i in range(n):
        turn: dict[str, Any] = {
            "session_id": session,
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{session} durable turn number {i} kestrel",
        }
        if i % 3 == 0:
            turn["id"] = f"{session}-t{i}"
        if i % 3 == 1:
            turn["ts"] = time.time() - 100 + i
        turns.append(turn)
    res: dict[str, Any] = d.call("ingest", {"turns": turns, **extra})
    return res


def kestrel_count(d: DaemonProcess) -> int:
    hits = d.call("search", {"query": "kestrel", "scope": "conversations", "limit": 500})["hits"]
    return len(hits)


def remove_index(home: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(home / "data" / "index.db") + suffix).unlink(missing_ok=True)


def test_pushed_turns_survive_a_deleted_index(home: Path) -> None:
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false").start()
    try:
        assert push(d, "app-1", 6)["added"] == 6
        # One turn without an id or a time, alone in its request: the retry-safe id it gets
        # must be the one a rebuilt index finds again.
        d.call("ingest", {"session_id": "app-2", "role": "user", "content": "lone kestrel"})
        before = {s: turns_of(d, s) for s in ("app-1", "app-2")}
    finally:
        assert d.stop() == 0
    remove_index(home)
    d.start()
    try:
        after = {s: turns_of(d, s) for s in ("app-1", "app-2")}
        assert after == before
        assert kestrel_count(d) == 7
        # The journal was not written twice for the same exchanges.
        journal = "".join(p.read_text() for p in (d.memory / "journal").glob("*.md"))
        assert journal.count("app-1 durable turn number 0 kestrel") == 1
    finally:
        d.stop()
    # A third start with the index in place reads nothing twice.
    d.start()
    try:
        assert kestrel_count(d) == 7
    finally:
        d.stop()


def test_an_acknowledged_turn_is_in_a_private_file(daemon: DaemonProcess) -> None:
    daemon.call("ingest", {"session_id": "app-0", "role": "user", "content": "on disk kestrel"})
    # Read while the daemon runs: the answer came after the file was written.
    folder = pushed_dir(daemon.home)
    files = sorted(folder.glob("*.jsonl"))
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "on disk kestrel" in "".join(f.read_text() for f in files)


def test_pushed_turns_survive_a_damaged_index(home: Path) -> None:
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false").start()
    try:
        push(d, "app-3", 5)
        before = turns_of(d, "app-3")
    finally:
        assert d.stop() == 0
    db = home / "data" / "index.db"
    size = db.stat().st_size
    with open(db, "r+b") as f:  # garbage over the middle pages
        f.seek(size // 3)
        f.write(os.urandom(size // 3))
    d.start()
    try:
        assert d.call("status")["recovered"]["moved_to"]
        assert turns_of(d, "app-3") == before
        assert kestrel_count(d) == 5
    finally:
        d.stop()


def test_a_full_reindex_keeps_pushed_turns_once(home: Path) -> None:
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false").start()
    try:
        push(d, "app-4", 4)
        before = turns_of(d, "app-4")
        out = d.cli("reindex", "--full")
        assert out.returncode == 0, out.stderr
        assert turns_of(d, "app-4") == before
        assert kestrel_count(d) == 4
    finally:
        d.stop()


def test_a_turn_both_pushed_and_tailed_is_stored_once_after_a_rebuild(home: Path) -> None:
    """A hook may push what Claude Code also writes to its transcript (same session, same id)."""
    project = home / "claude" / "-home-user-proj"
    project.mkdir(parents=True)
    env = {"MEMD_LOGS_CLAUDE_DIR": str(home / "claude"), "MEMD_LOGS_POLL_S": "0.3"}
    d = DaemonProcess(home, env=env).start()
    record = {"parentUuid": None, "isSidechain": False, "type": "user", "sessionId": CLAUDE_SID,
              "uuid": "u-both", "timestamp": "2026-07-06T12:00:00.000Z",
              "message": {"role": "user", "content": "pushed and tailed kestrel"}}  # fmt: skip
    try:
        d.call("ingest", {"session_id": CLAUDE_SID, "id": "u-both", "role": "user",
                          "content": "pushed and tailed kestrel", "ts": "2026-07-06T12:00:00Z"})  # fmt: skip
        (project / f"{CLAUDE_SID}.jsonl").write_text(json.dumps(record) + "\n")
        wait_for(lambda: d.call("status")["logs"]["files"] >= 1)
        assert kestrel_count(d) == 1
    finally:
        assert d.stop() == 0
    remove_index(home)
    d.start()
    try:
        wait_for(lambda: d.call("status")["logs"]["files"] == 1)  # the transcript was read
        assert turns_of(d, CLAUDE_SID) == [("u-both", "user", "pushed and tailed kestrel")]
        assert kestrel_count(d) == 1
    finally:
        d.stop()


def test_the_cli_without_a_daemon_keeps_pushed_turns_on_disk_too(home: Path) -> None:
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false")
    line = json.dumps({"session_id": "cli-1", "role": "user", "content": "offline kestrel"})
    out = d.cli("ingest", input=line + "\n")
    assert out.returncode == 0 and "1 turn added" in out.stdout, out.stderr
    assert "offline kestrel" in "".join(p.read_text() for p in pushed_dir(home).glob("*.jsonl"))
    remove_index(home)
    d.start()
    try:
        assert [t[2] for t in turns_of(d, "cli-1")] == ["offline kestrel"]
    finally:
        d.stop()
