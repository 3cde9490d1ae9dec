"""Log folders that appear after memd started are watched from then on, without a restart; the
journal's short session ids work wherever a session id is asked for."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path

from memd.conversations.logs import LogIngestor, LogSource
from memd.db import Store
from tests.conversations.helpers import rows
from tests.utils import DaemonProcess, wait_for


def claude_record(sid: str, uid: str, kind: str, text: str) -> str:
    return json.dumps({"parentUuid": None, "isSidechain": False, "type": kind, "sessionId": sid,
                       "uuid": uid, "timestamp": dt.datetime.now(dt.UTC).isoformat(), "cwd": "/tmp/proj",
                       "message": {"role": kind, "content": text}}) + "\n"  # fmt: skip


def recalled(d: DaemonProcess, word: str) -> list[str]:
    out = d.cli("recall", word, "--json")
    assert out.returncode == 0, out.stderr
    return [t["text"] for s in json.loads(out.stdout)["sessions"] for t in s["turns"]]


def test_claude_code_run_for_the_first_time_after_memd_started(home: Path) -> None:
    """A fresh HOME: no ~/.claude at all when the daemon starts (the default log folder)."""
    user_home = Path.home()
    assert not (user_home / ".claude").exists()
    # A slow poll: the pickup below must come from watching, not from the next periodic scan.
    d = DaemonProcess(home, MEMD_LOGS_POLL_S="60").start()
    try:
        # What Claude Code does on its first run: the folders, then the transcript.
        project = user_home / ".claude" / "projects" / "-tmp-proj"
        project.mkdir(parents=True)
        sid = str(uuid.uuid4())
        (project / f"{sid}.jsonl").write_text(
            claude_record(sid, "u1", "user", "how do puffins dive")
            + claude_record(sid, "a1", "assistant", "puffins dive with their wings")
        )
        texts = wait_for(lambda: recalled(d, "puffins"), timeout=30)
        assert sorted(texts) == ["how do puffins dive", "puffins dive with their wings"]
        # A later session in a new project folder is picked up the same way.
        other = user_home / ".claude" / "projects" / "-tmp-other"
        other.mkdir()
        sid2 = str(uuid.uuid4())
        (other / f"{sid2}.jsonl").write_text(claude_record(sid2, "u1", "user", "puffins again"))
        wait_for(lambda: "puffins again" in recalled(d, "puffins"), timeout=30)
        st = d.call("status")["logs"]
        claude = str(user_home / ".claude" / "projects")
        assert {"path": claude, "format": "claude-code", "assistant": "claude-code"} in st[
            "sources"
        ]
        # Watched; the other assistants' folders, still waited for, are said on their own lines.
        assert st["watcher"] == "native"
    finally:
        d.stop()


def test_a_configured_log_folder_created_later_is_watched(home: Path) -> None:
    logs = home / "later" / "app" / "logs"
    d = DaemonProcess(home, MEMD_LOGS_CLAUDE_CODE="false", MEMD_LOGS_POLL_S="60",
                      MEMD_LOGS_SOURCES=json.dumps([{"path": str(logs), "format": "jsonl"}])).start()  # fmt: skip
    try:
        logs.mkdir(parents=True)
        line = {
            "session_id": "later-1",
            "role": "user",
            "content": "gannets plunge",
            "ts": time.time(),
        }
        (logs / "chat.jsonl").write_text(json.dumps(line) + "\n")
        assert wait_for(lambda: recalled(d, "gannets"), timeout=10) == ["gannets plunge"]
    finally:
        d.stop()


def test_recall_takes_the_short_session_id_the_journal_prints(daemon: DaemonProcess) -> None:
    sid = str(uuid.uuid4())
    now = time.time() - 60
    daemon.call("ingest", {"turns": [
        {"session_id": sid, "id": "q", "role": "user", "content": "what do shearwaters eat", "ts": now},
        {"session_id": sid, "id": "a", "role": "assistant", "content": "shearwaters eat small fish", "ts": now + 1},
    ]})  # fmt: skip
    journal = daemon.memory / "journal" / f"{dt.date.fromtimestamp(now).isoformat()}.md"
    heading = wait_for(lambda: journal.exists() and [
        ln for ln in journal.read_text().splitlines() if ln.startswith("## ")])  # fmt: skip
    short = heading[0].rsplit("· ", 1)[1].strip()
    assert short != sid and len(short) < len(sid)
    out = daemon.cli("recall", "--session", short, "--json")
    assert out.returncode == 0, out.stderr
    session = json.loads(out.stdout)["sessions"][0]
    assert session["session_id"] == sid and len(session["turns"]) == 2
    within = json.loads(daemon.cli("recall", "fish", "--session", short, "--json").stdout)
    assert within["mode"] == "within" and within["sessions"][0]["turns"]


def _scanning(thread: threading.Thread) -> bool:
    """Whether `thread` is inside `LogIngestor.ingest_files` (a scan reading what it listed)."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == "ingest_files":
            return True
        frame = frame.f_back
    return False


def test_a_folder_that_appears_while_a_scan_runs_is_read(store: Store, tmp_path: Path) -> None:
    """The folder appears (with a log already in it: moved into place) while the first scan,
    which listed no file there, is still reading: that scan must not count as the one the
    folder's appearing asked for."""
    root = tmp_path / "later" / "logs"
    root.parent.mkdir()
    ready = tmp_path / "ready"
    ready.mkdir()
    line = {"session_id": "mid-scan", "role": "user", "content": "skuas steal", "ts": time.time()}
    (ready / "chat.jsonl").write_text(json.dumps(line) + "\n")
    ing = LogIngestor(store, [LogSource(root, "jsonl")], poll_s=60, debounce_s=0.02)
    with ing._lock:  # the first scan waits here, after listing the folder (not there yet)
        ing.start()
        poller, watcher = ing._poller, ing.watcher
        assert poller is not None and watcher is not None
        wait_for(lambda: _scanning(poller))
        os.rename(ready, root)
        wait_for(lambda: str(root) in watcher.watched_roots)
    try:
        wait_for(lambda: rows(store, "SELECT text FROM turns"), 10)
    finally:
        ing.stop()
    assert rows(store, "SELECT text FROM turns") == [("skuas steal",)]
