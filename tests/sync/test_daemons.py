"""Real `memd serve` processes syncing through a real PostgreSQL: two devices, and an outage.

The watcher, the outbox hook, the scheduler (pull on start, early runs after a change,
backoff) and SIGTERM all run for real; only the tests' waits are bounded.
"""

from __future__ import annotations

import signal
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.pgserver import PgServer
from tests.sync.conftest import cloud_events, cloud_rows
from tests.utils import DaemonProcess, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def fresh_dsn(pg: PgServer) -> str:
    """A new database with the default table names (memd_files, memd_file_events)."""
    pg.start()
    return pg.create_database(f"d_{uuid.uuid4().hex[:8]}")


def sync_env(dsn: str, **extra: str) -> dict[str, str]:
    return {
        "MEMD_SYNC_BACKEND": "postgres",
        "MEMD_SYNC_DSN": dsn,
        "MEMD_SYNC_USER_ID": "alice",
        "MEMD_SYNC_INTERVAL_S": "3600",
        "MEMD_SYNC_PUSH_DELAY_S": "0.3",
        **extra,
    }


def sync_status(d: DaemonProcess) -> dict[str, Any]:
    st: dict[str, Any] = d.call("sync_status")
    return st


def queued_ops(home: Path) -> dict[str, tuple[str, int, str]]:
    """path → (op_id, version, content) of the outbox, read from the daemon's SQLite file."""
    conn = sqlite3.connect(f"file:{home / 'data' / 'index.db'}?mode=ro", uri=True)
    try:
        return {
            r[0]: (r[1], r[2], r[3])
            for r in conn.execute("SELECT path, op_id, version, content FROM sync_outbox")
        }
    finally:
        conn.close()


def test_two_devices_push_pull_conflict_and_delete(tmp_path: Path, fresh_dsn: str) -> None:
    env = sync_env(fresh_dsn)
    a = DaemonProcess(tmp_path / "a", env=env)
    init = a.cli("sync", "init-schema", env=env)
    assert init.returncode == 0 and "tables ready" in init.stdout, init.stderr
    a.start()
    b = DaemonProcess(tmp_path / "b", env=env)
    try:
        # A change on disk reaches the cloud on its own: watcher → hook → early sync run.
        (a.memory / "topics").mkdir(exist_ok=True)
        (a.memory / "topics" / "rust.md").write_text("# Rust\n\n- prefers nextest\n")
        (a.memory / "topics" / "go.md").write_text("# Go\n\n- gofmt always\n")
        wait_for(
            lambda: {"topics/rust.md", "topics/go.md"} <= set(cloud_rows(fresh_dsn, "memd_files")),
            timeout=10,
        )

        # The second device pulls on start, and its watcher does not send the files back.
        b.start()
        wait_for(lambda: (b.memory / "topics" / "rust.md").exists(), timeout=10)
        assert (b.memory / "topics" / "rust.md").read_text() == "# Rust\n\n- prefers nextest\n"
        assert wait_for(lambda: b.search_paths("nextest"), timeout=5) == {
            str(b.memory / "topics" / "rust.md")
        }
        # Once the indexer has caught up with what the watcher saw, nothing is queued. (Whether
        # the watcher sees the pulled files at all depends on whether the pull ran before it
        # started: both happen at start, so the test waits for no event in particular.)
        # (30 s: at load ~5 — the suite with four workers beside this step — 10 s ran out.)
        wait_for(
            lambda: (ix := b.call("status")["index"])["lag_s"] == 0 and not ix["pending_writes"],
            timeout=30,
        )
        wait_for(lambda: sync_status(b)["last_success_at"], timeout=5)  # the first run is over
        assert sync_status(b)["pending"] == 0
        b_id = sync_status(b)["device_id"]
        assert [e for e in cloud_events(fresh_dsn, "memd_files") if e["device_id"] == b_id] == []

        # B edits while stopped, A edits meanwhile: B keeps its text and copies A's beside it.
        assert b.stop() == 0
        (b.memory / "topics" / "rust.md").write_text("# Rust\n\n- prefers cargo test\n")
        (a.memory / "topics" / "rust.md").write_text("# Rust\n\n- prefers nextest, always\n")
        wait_for(
            lambda: "always" in cloud_rows(fresh_dsn, "memd_files")["topics/rust.md"]["content"],
            timeout=10,
        )
        b.start()
        copies = wait_for(
            lambda: list((b.memory / "topics").glob("rust.conflict-*.md")), timeout=10
        )
        assert copies[0].read_text() == "# Rust\n\n- prefers nextest, always\n"
        assert (b.memory / "topics" / "rust.md").read_text() == "# Rust\n\n- prefers cargo test\n"
        wait_for(
            lambda: (
                "cargo test" in cloud_rows(fresh_dsn, "memd_files")["topics/rust.md"]["content"]
            ),
            timeout=10,
        )
        st = wait_for(lambda: (st := b.call("status")["sync"])["pending"] == 0 and st, timeout=5)
        assert st["state"] == "on" and st["conflicts"] == 1 and st["parked"] == 0
        shown = b.cli("sync", "status", env=env)
        assert "changed-both" in shown.stdout and copies[0].name in shown.stdout, shown.stdout

        # A was unchanged since its push: it takes B's text and the conflict copy.
        ran = a.cli("sync", "--now", env=env)
        assert ran.returncode == 0 and "sync: success" in ran.stdout, ran.stdout + ran.stderr
        assert (a.memory / "topics" / "rust.md").read_text() == "# Rust\n\n- prefers cargo test\n"
        assert (a.memory / "topics" / copies[0].name).exists()

        # A delete travels as a tombstone and removes B's unchanged copy and its index entry;
        # B's next conversation (a `context` request) is what makes it sync.
        (a.memory / "topics" / "go.md").unlink()
        wait_for(lambda: cloud_rows(fresh_dsn, "memd_files")["topics/go.md"]["deleted"], timeout=10)
        assert (b.memory / "topics" / "go.md").exists()
        b.call("context", {"query": "go"})
        wait_for(lambda: not (b.memory / "topics" / "go.md").exists(), timeout=10)
        assert wait_for(lambda: not b.search_paths("gofmt"), timeout=5)
    finally:
        for d in (a, b):
            if d.proc and d.proc.poll() is None:
                d.stop()


def test_outage_with_a_restart_loses_nothing_and_sends_each_operation_once(
    tmp_path: Path, pg: PgServer, fresh_dsn: str
) -> None:
    env = sync_env(
        fresh_dsn,
        MEMD_SYNC_INTERVAL_S="1",
        MEMD_SYNC_BACKOFF_CAP_S="1",
        MEMD_SYNC_PUSH_DELAY_S="0.2",
    )
    d = DaemonProcess(tmp_path / "a", env=env)
    assert d.cli("sync", "init-schema", env=env).returncode == 0
    d.start()
    topics = d.memory / "topics"
    try:
        wait_for(lambda: sync_status(d)["last_success_at"], timeout=10)
        pg.stop()
        # 200 new files while the server is down.
        for i in range(200):
            (topics / f"f{i:03}.md").write_text(f"# F{i}\n\n- v1\n")
        wait_for(lambda: sync_status(d)["pending"] >= 200, timeout=15)
        wait_for(
            lambda: (
                "refused" in (sync_status(d)["last_error"] or "") or sync_status(d)["last_error"]
            ),
            timeout=10,
        )
        before = queued_ops(d.home)
        assert {f"topics/f{i:03}.md" for i in range(200)} <= set(before)

        # memd restarts in the middle; more edits arrive while it is down and after it is back.
        assert d.stop(signal.SIGTERM) == 0
        for i in range(50):
            (topics / f"f{i:03}.md").write_text(f"# F{i}\n\n- v2 while memd was down\n")
        for i in range(190, 200):
            (topics / f"f{i:03}.md").unlink()
        for i in range(20):
            (topics / f"g{i:03}.md").write_text(f"# G{i}\n")
        d.start()
        for i in range(50, 100):
            (topics / f"f{i:03}.md").write_text(f"# F{i}\n\n- v2 after the restart\n")
        wait_for(lambda: all(queued_ops(d.home).get(f"topics/f{i:03}.md", ("", 0, ""))[2].endswith("restart\n")
                             for i in range(50, 100)), timeout=15)  # fmt: skip
        after = queued_ops(d.home)
        assert sync_status(d)["pending"] == len(after)
        # The outbox survived SIGTERM: operations of files not touched again kept their ids.
        for i in range(100, 190):
            assert after[f"topics/f{i:03}.md"] == before[f"topics/f{i:03}.md"]
        # Created and deleted while the server was down: nothing ever had to be sent.
        assert not any(f"topics/f{i:03}.md" in after for i in range(190, 200))

        pg.start()
        wait_for(lambda: sync_status(d)["pending"] == 0, timeout=20)
    finally:
        pg.start()
        if d.proc and d.proc.poll() is None:
            d.stop()

    rows = cloud_rows(fresh_dsn, "memd_files")
    events = cloud_events(fresh_dsn, "memd_files")
    local = {
        str(p.relative_to(d.memory)): p.read_text()
        for p in d.memory.rglob("*.md")
        if p.name != "README.md"
    }
    # Nothing lost: every local file is in the cloud with its final content ...
    assert {path: row["content"] for path, row in rows.items() if not row["deleted"]} == local
    assert not any(f"topics/f{i:03}.md" in rows for i in range(190, 200))
    # ... every queued operation arrived exactly once, and none that a newer one replaced ...
    op_ids = [e["op_id"] for e in events]
    assert len(op_ids) == len(set(op_ids))
    sent = set(op_ids)
    assert {op_id for op_id, _, _ in after.values()} <= sent
    replaced = {v[0] for k, v in before.items() if after.get(k, ("",))[0] != v[0]}
    assert len(replaced) == 100 + 10 and not replaced & sent
    # ... and in order per file: versions only grow, the last event is the stored row.
    by_path: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_path.setdefault(e["path"], []).append(e)
    for path, evs in by_path.items():
        versions = [e["version"] for e in evs]
        assert versions == sorted(set(versions)), (path, versions)
        assert evs[-1]["sha256"] == rows[path]["sha256"] and evs[-1]["op_id"] == rows[path]["op_id"]
    for path, (op_id, version, _) in after.items():
        assert rows[path]["op_id"] == op_id and rows[path]["version"] == version
