"""SIGKILL in the middle of ingesting a large log: after a restart every turn is there once."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.utils import DaemonProcess, wait_for

SESSIONS = 40
PER_SESSION = 1000
RECENT = 8


def kill_mid_ingest_then_restart(home: Path, env: dict[str, str], total: int) -> dict[str, Any]:
    """SIGKILL the daemon once some but not all turns are stored, restart it and wait until
    all `total` turns and every session summary are in; return its `logs` status."""
    d = DaemonProcess(home, env=env).start()
    seen = wait_for(lambda: d.call("status")["logs"]["turns"], timeout=30, interval=0.005)
    d.stop(signal.SIGKILL)
    assert 0 < seen < total, "the kill should land in the middle of the ingest"
    d = DaemonProcess(home, env=env).start()
    try:
        wait_for(lambda: d.call("status")["logs"]["turns"] == total, timeout=60)
        wait_for(lambda: d.call("status")["logs"]["summaries_due"] == 0, timeout=60)
        return dict(d.call("status")["logs"])
    finally:
        d.stop()


def test_sigkill_mid_ingest_then_restart_stores_every_turn_once(home: Path) -> None:
    logs = home / "logs"
    logs.mkdir(parents=True)
    now = time.time()
    big = logs / "big.jsonl"
    with big.open("w") as f:
        for i in range(SESSIONS * PER_SESSION):
            s, k = divmod(i, PER_SESSION)
            # No "id": the turn key comes from the session, role, time and text, and the
            # checkpoint has to hold for the line numbers to mean the same thing after a restart.
            # The first sessions are recent (journaled), the others ten days old (not journaled).
            ts = now - 3600 + i * 0.05 if s < RECENT else now - 10 * 86400 + i
            rec = {"session_id": f"big-{s}", "role": "user" if k % 2 == 0 else "assistant",
                   "content": f"turn {k} of session {s}: " + "lorem ipsum dolor sit amet " * 8, "ts": ts}  # fmt: skip
            f.write(json.dumps(rec) + "\n")
    total = SESSIONS * PER_SESSION
    env = {"MEMD_LOGS_CLAUDE_CODE": "false", "MEMD_LOGS_POLL_S": "0.2",
           "MEMD_LOGS_SOURCES": json.dumps([{"path": str(logs), "format": "jsonl"}])}  # fmt: skip
    st = kill_mid_ingest_then_restart(home, env, total)

    db = sqlite3.connect(f"file:{home / 'data' / 'index.db'}?mode=ro", uri=True)
    assert db.execute(
        "SELECT count(*), count(DISTINCT session_id || '/' || turn_id) FROM turns"
    ).fetchone() == (total, total)
    assert db.execute("SELECT count(*) FROM turns_fts").fetchone() == (total,)
    assert db.execute("SELECT turns, offset, lineno FROM log_files").fetchone() == (
        total,
        big.stat().st_size,
        total,
    )
    assert db.execute("SELECT count(*), sum(turn_count), min(turn_count) FROM sessions").fetchone() == (
        SESSIONS, total, PER_SESSION)  # fmt: skip
    assert st["bad_lines"] == 0 and st["files"] == 1
    # The journal has each exchange once, whether it was written before or after the kill.
    journal = "\n".join(p.read_text() for p in (home / "memory" / "journal").glob("*.md"))
    marks = re.findall(r"<!-- memd turn=(\S+) -->", journal)
    assert len(marks) == len(set(marks)) == RECENT * PER_SESSION // 2


def test_sigkill_mid_scan_of_many_small_logs_then_restart_stores_every_turn_once(
    home: Path,
) -> None:
    """Chunks of small files share a writer transaction: a kill must still leave each file's
    checkpoint and turns in step (all of a transaction or none of it)."""
    logs = home / "logs"
    logs.mkdir(parents=True)
    files, per_file = 400, 60
    old = time.time() - 10 * 86400  # not journaled: the test is about the turns
    for n in range(files):
        with (logs / f"chat-{n:04d}.jsonl").open("w") as f:
            for k in range(per_file):
                rec = {"session_id": f"small-{n}", "role": "user" if k % 2 == 0 else "assistant",
                       "content": f"file {n} turn {k}: " + "alpha beta gamma delta " * 6,
                       "ts": old + n * 100 + k, "id": f"t{k}"}  # fmt: skip
                f.write(json.dumps(rec) + "\n")
    total = files * per_file
    env = {"MEMD_LOGS_CLAUDE_CODE": "false", "MEMD_LOGS_POLL_S": "0.2",
           "MEMD_LOGS_SOURCES": json.dumps([{"path": str(logs), "format": "jsonl"}])}  # fmt: skip
    kill_mid_ingest_then_restart(home, env, total)
    db = sqlite3.connect(f"file:{home / 'data' / 'index.db'}?mode=ro", uri=True)
    assert db.execute(
        "SELECT count(*), count(DISTINCT session_id || '/' || turn_id) FROM turns"
    ).fetchone() == (total, total)
    assert db.execute("SELECT count(*) FROM turns_fts").fetchone() == (total,)
    rows = db.execute("SELECT path, turns, offset, lineno FROM log_files").fetchall()
    assert len(rows) == files
    assert all(
        t == per_file and off == Path(p).stat().st_size and ln == per_file for p, t, off, ln in rows
    )
    assert db.execute("SELECT count(*), min(turn_count), max(turn_count) FROM sessions").fetchone() == (
        files, per_file, per_file)  # fmt: skip
