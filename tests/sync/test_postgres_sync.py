"""Sync between devices through a real PostgreSQL: push, pull, conflicts, deletes, redaction.

Each device is an Engine over its own MEMD_HOME (real files, real SQLite); the cloud is a
fresh table of the session's PostgreSQL cluster.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
from typing import Any

import pytest

from memd.core.errors import SyncRetryable
from memd.core.settings import Settings
from memd.memory.tree import TEMPLATES
from memd.sync import outbox
from memd.sync.backend import PushResult, SyncRow
from memd.sync.postgres import PostgresBackend
from tests import planted
from tests.sync.conftest import Device, cloud_events, cloud_rows, race_on_push

pytestmark = pytest.mark.postgres

RUST_A = "# Rust\n\n## Notes\n- prefers cargo nextest\n"
RUST_B = "# Rust\n\n## Notes\n- prefers cargo test\n"


def test_push_then_a_second_device_pulls_everything(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a: Device = devices("a")
    a.write("topics/rust.md", RUST_A)
    a.write("_core/profile.md", TEMPLATES["_core/profile.md"] + "- name: Alice\n")
    res = a.sync()
    assert res["outcome"] == "success", res
    rows = cloud_rows(sync_dsn, table)
    assert rows["topics/rust.md"]["content"] == RUST_A
    assert {r["namespace"] for r in rows.values()} == {"alice"}
    assert {r["device_id"] for r in rows.values()} == {a.syncer.device_id()}
    assert a.status()["pending"] == 0 and a.status()["totals"]["pushed"] == len(rows)

    b: Device = devices("b")
    assert b.syncer.device_id() != a.syncer.device_id()
    res = b.sync()
    assert res["outcome"] == "success", res
    assert b.read("topics/rust.md") == RUST_A
    # B's untouched first-start template gives way to A's profile: no conflict copy for it.
    assert "Alice" in b.read("_core/profile.md")
    assert not list(b.memory.rglob("*.conflict-*"))
    # Pulled files are indexed and searchable, and not queued again as B's own changes.
    hits = b.engine.handle("search", {"query": "nextest"})["hits"]
    assert [h["path"] for h in hits] == [str(b.path("topics/rust.md"))]
    assert b.queue() == []
    assert b.sync()["counts"]["pushed"] == 0
    events = cloud_events(sync_dsn, table)
    assert [e["path"] for e in events if e["device_id"] != a.syncer.device_id()] == []


def test_changed_on_both_sides_keeps_local_and_writes_a_conflict_copy(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a, b = devices("a"), devices("b")
    a.write("topics/rust.md", "# Rust\n")
    a.sync()
    b.sync()
    a.write("topics/rust.md", RUST_A)
    b.write("topics/rust.md", RUST_B)
    a.sync()
    res = b.sync()
    assert res["counts"]["conflicts"] == 1
    assert b.read("topics/rust.md") == RUST_B  # local kept
    copies = list(b.memory.glob("topics/rust.conflict-*.md"))
    assert len(copies) == 1 and copies[0].read_text() == RUST_A
    assert copies[0].name.startswith(f"rust.conflict-{a.syncer.device_id().replace('-', '')[:8]}-")
    conflict = b.status()["conflicts"][0]
    assert conflict["path"] == "topics/rust.md" and conflict["kind"] == "changed-both"
    assert conflict["copy"] == f"topics/{copies[0].name}"
    assert res["message"].endswith(f"conflict copies: topics/{copies[0].name}")
    # B's version won in the cloud; A was unchanged since its push, so it takes B's version
    # and the conflict copy: every device ends with both texts.
    assert cloud_rows(sync_dsn, table)["topics/rust.md"]["content"] == RUST_B
    a.sync()
    assert a.read("topics/rust.md") == RUST_B
    assert (a.memory / "topics" / copies[0].name).read_text() == RUST_A
    assert a.status()["conflicts"] == []
    # Pulling the same page again (nothing new) writes no second copy.
    assert b.sync()["counts"]["conflicts"] == 0
    assert len(list(b.memory.glob("topics/rust.conflict-*.md"))) == 1


def test_deletes_propagate_only_onto_unchanged_files(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a, b = devices("a"), devices("b")
    a.write("topics/go.md", "# Go\n")
    a.write("topics/zig.md", "# Zig\n")
    a.sync()
    b.sync()
    assert b.path("topics/go.md").exists()
    a.delete("topics/go.md")
    a.delete("topics/zig.md")
    b.write("topics/zig.md", "# Zig\n\n- comptime is neat\n")  # edited on B meanwhile
    a.sync()
    rows = cloud_rows(sync_dsn, table)
    assert rows["topics/go.md"]["deleted"] and rows["topics/go.md"]["content"] == ""
    res = b.sync()
    assert not b.path("topics/go.md").exists()  # unchanged on B: deleted
    assert not any(
        h["path"].endswith("go.md") for h in b.engine.handle("search", {"query": "Go"})["hits"]
    )
    assert b.read("topics/zig.md").endswith("comptime is neat\n")  # changed on B: kept
    assert res["counts"]["deleted"] == 1 and res["counts"]["conflicts"] == 1
    assert b.status()["conflicts"][0] == {**b.status()["conflicts"][0], "path": "topics/zig.md",
                                          "kind": "deleted-remotely", "copy": None}  # fmt: skip
    # B's kept version goes back to the cloud, and A gets it back.
    assert not cloud_rows(sync_dsn, table)["topics/zig.md"]["deleted"]
    a.sync()
    assert a.read("topics/zig.md").endswith("comptime is neat\n")
    assert not a.path("topics/go.md").exists()


def test_edit_there_while_deleted_here_keeps_the_edit_as_a_copy(devices: Any) -> None:
    a, b = devices("a"), devices("b")
    a.write("topics/go.md", "# Go\n")
    a.sync()
    b.sync()
    a.write("topics/go.md", "# Go\n\n- channels\n")
    b.delete("topics/go.md")
    a.sync()
    res = b.sync()
    assert res["counts"]["conflicts"] == 1
    assert not b.path("topics/go.md").exists()  # B's delete stands
    (copy,) = b.memory.glob("topics/go.conflict-*.md")
    assert copy.read_text().endswith("- channels\n")
    assert b.status()["conflicts"][0]["kind"] == "deleted-locally"


def test_queue_coalesces_and_versions_only_grow(devices: Any, sync_dsn: str, table: str) -> None:
    a: Device = devices("a")
    a.sync()
    for i in range(5):
        a.write("topics/rust.md", f"# Rust\n\n- edit {i}\n")
    (op,) = [op for op in a.queue() if op.path == "topics/rust.md"]
    assert op.content.endswith("- edit 4\n") and op.version == 5 and op.attempts == 0
    a.sync()
    a.write("topics/rust.md", "# Rust\n\n- edit 5\n")
    assert a.queue()[0].version == 6
    a.sync()
    events = [e for e in cloud_events(sync_dsn, table) if e["path"] == "topics/rust.md"]
    assert [e["version"] for e in events] == [5, 6]


def test_a_change_back_to_the_synced_bytes_is_not_sent(devices: Any) -> None:
    a: Device = devices("a")
    a.write("topics/rust.md", RUST_A)
    a.sync()
    a.write("topics/rust.md", RUST_B)
    a.write("topics/rust.md", RUST_A)  # replaces the queued change: the cloud already has it
    assert [op.content for op in a.queue()] == [RUST_A]
    a.write("topics/new.md", "# New\n")
    a.delete("topics/new.md")  # created and deleted before any push: nothing to send
    assert [op.path for op in a.queue()] == ["topics/rust.md"]


def test_secrets_are_redacted_and_excluded_paths_never_leave(
    devices: Any, sync_dsn: str, table: str
) -> None:
    key = "sk-ant-api03-" + "A" * 93 + "AA"
    a: Device = devices("a", **{"sync.exclude": ["journal/*", "*.private.md"]})
    a.write("topics/keys.md", f"# Keys\n\n- anthropic {key}\n")
    a.write("journal/2026-01-05.md", "# Journal\n")
    a.write("topics/diary.private.md", "# Private\n")
    a.sync()
    rows = cloud_rows(sync_dsn, table)
    assert key not in rows["topics/keys.md"]["content"]
    assert "[REDACTED:anthropic-key:" in rows["topics/keys.md"]["content"]
    assert (
        rows["topics/keys.md"]["sha256"]
        == hashlib.sha256(rows["topics/keys.md"]["content"].encode()).hexdigest()
    )
    assert "journal/2026-01-05.md" not in rows and "topics/diary.private.md" not in rows
    # The local file keeps its secret; the redacted copy is what other devices get.
    assert key in a.read("topics/keys.md")


def test_unsafe_and_excluded_cloud_rows_are_never_written(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a: Device = devices("a", **{"sync.exclude": ["journal/*"]})
    backend = PostgresBackend(sync_dsn, table)
    rows = [
        SyncRow(
            "alice",
            path,
            "# x\n",
            hashlib.sha256(b"# x\n").hexdigest(),
            1.0,
            False,
            "evil",
            1,
            f"op-{i}",
        )
        for i, path in enumerate(
            ["topics/../../escape.md", "journal/x.md", "topics/run.sh", "topics/ok.md"]
        )
    ]
    backend.push(rows)
    backend.close()
    res = a.sync()
    assert res["counts"]["skipped"] == 3 and res["counts"]["applied"] == 1
    assert a.read("topics/ok.md") == "# x\n"
    assert not (a.home / "escape.md").exists() and not a.path("journal/x.md").exists()
    assert not a.path("topics/run.sh").exists()


def test_files_changed_while_sync_was_off_are_queued_on_the_first_run(
    tmp_path: Any, devices: Any, sync_dsn: str, table: str
) -> None:
    off = Device(tmp_path / "a")
    assert off.engine.jobs.get("sync") is None and off.engine.indexer.hooks == []
    off.write("topics/rust.md", RUST_A)
    assert off.engine.handle("status")["sync"]["state"] == "off"
    off.close()
    a: Device = devices("a")  # same home, now with sync on
    assert a.queue() == []
    a.sync()
    assert cloud_rows(sync_dsn, table)["topics/rust.md"]["content"] == RUST_A
    a.path("topics/rust.md").unlink()  # deleted while no watcher was looking
    res = a.sync()  # no daemon: the run catches up with the files first
    assert res["counts"]["pushed"] == 1
    assert cloud_rows(sync_dsn, table)["topics/rust.md"]["deleted"]


def test_session_summaries_are_synced_when_enabled(devices: Any, sync_dsn: str, table: str) -> None:
    a: Device = devices("a", **{"sync.summaries": True})

    def add(conn: Any, sid: str, summary: str, at: float) -> None:
        conn.execute(
            "INSERT INTO sessions(session_id, source, title, started_at, updated_at, summary,"
            " summary_kind, summary_at) VALUES (?, 'claude-code', 'Fix the tests', 1.0, 2.0, ?, 'llm', ?)"
            " ON CONFLICT(session_id) DO UPDATE SET summary = excluded.summary, summary_at = excluded.summary_at",
            (sid, summary, at),
        )

    a.store.w.run(lambda c: add(c, "s1", "We fixed the flaky tests.", 10.0))
    a.sync()
    row = cloud_rows(sync_dsn, table)["_sessions/s1.md"]
    assert "We fixed the flaky tests." in row["content"] and "# Fix the tests" in row["content"]
    a.store.w.run(lambda c: add(c, "s1", "We fixed the flaky tests and the CI.", 20.0))
    assert a.sync()["counts"]["pushed"] == 1
    assert "and the CI" in cloud_rows(sync_dsn, table)["_sessions/s1.md"]["content"]
    b: Device = devices("b")
    b.sync()
    assert not (b.memory / "_sessions").exists()  # a cloud copy only: never pulled into a tree


class _AckLost:
    """The network edge losing the answer of a push that the server committed."""

    name = "postgres"

    def __init__(self, real: PostgresBackend, times: int) -> None:
        self.real, self.times = real, times

    def push(self, rows: Any) -> PushResult:
        result = self.real.push(rows)
        if self.times:
            self.times -= 1
            raise SyncRetryable("postgres push failed: connection lost after commit")
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_lost_acknowledgement_is_replayed_and_applied_exactly_once(
    tmp_path: Any, sync_dsn: str, table: str
) -> None:
    def factory(settings: Settings) -> Any:
        return _AckLost(PostgresBackend(settings.sync_dsn, settings.sync_table), times=2)

    a = Device(tmp_path / "a", **{"sync.backend": "postgres", "sync.dsn": sync_dsn, "sync.table": table,
                                  "sync.push_delay_s": 0.0})  # fmt: skip
    a.syncer.backend_factory = factory
    a.write("topics/rust.md", RUST_A)
    sent = {op.path: op.op_id for op in a.queue()}
    first = a.sync()
    assert first["outcome"] == "retry_later" and first["status"]["pending"] == len(sent)
    assert all(op.attempts == 1 and op.next_at > 0 for op in a.queue())
    assert "connection lost after commit" in first["status"]["last_error"]
    a.sync()  # --now ignores the backoff; the answer is lost once more
    assert all(op.attempts == 2 for op in a.queue())
    a.sync()
    assert a.queue() == []
    events = cloud_events(sync_dsn, table)
    assert sorted(e["op_id"] for e in events) == sorted(sent.values())  # each op once
    assert len(cloud_rows(sync_dsn, table)) == len(sent)
    a.close()


def test_own_rows_seen_by_pull_complete_their_operations(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a: Device = devices("a")
    a.write("topics/rust.md", RUST_A)
    (op,) = [op for op in a.queue() if op.path == "topics/rust.md"]
    backend = PostgresBackend(sync_dsn, table)
    backend.push([SyncRow("alice", op.path, op.content, op.sha256, op.updated_at, False,
                          a.syncer.device_id(), op.version, op.op_id)])  # fmt: skip
    backend.close()
    a.sync()  # e.g. memd died after the server committed: the pull recognises the op
    assert [e["op_id"] for e in cloud_events(sync_dsn, table) if e["path"] == "topics/rust.md"] == [
        op.op_id
    ]
    assert outbox.queued(a.store.read(), a.syncer.target(), "topics/rust.md") is None


def _save_on_operation(syncer: Any, path: Any, text: str) -> None:
    """The user saving a file at the moment the pull opens its operation to write it."""
    files = syncer.files
    operation = type(files).operation

    def save_first(*args: Any, **kwargs: Any) -> Any:
        path.write_text(text)
        return operation(files, *args, **kwargs)

    files.operation = save_first


def test_a_file_saved_while_the_pull_applies_is_never_overwritten(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a, b = devices("a"), devices("b")
    a.write("topics/rust.md", "# Rust\n")
    a.sync()
    b.sync()
    a.write("topics/rust.md", RUST_A)
    a.sync()
    _save_on_operation(b.syncer, b.path("topics/rust.md"), RUST_B)
    res = b.sync()
    assert res["counts"]["conflicts"] == 1 and res["counts"]["applied"] == 0
    assert b.read("topics/rust.md") == RUST_B
    (copy,) = b.memory.glob("topics/rust.conflict-*.md")
    assert copy.read_text() == RUST_A
    _save_on_operation(b.syncer, copy, RUST_A)  # harmless from now on
    b.sync()  # the run catches up with the saved file and sends it
    assert cloud_rows(sync_dsn, table)["topics/rust.md"]["content"] == RUST_B


def test_missing_tables_park_everything_until_init_schema(devices: Any, sync_dsn: str) -> None:
    a: Device = devices("a", **{"sync.table": "not_created_yet"})
    a.write("topics/rust.md", RUST_A)
    n = len(a.queue())
    res = a.syncer.run()
    assert res.outcome.value == "config_error" and "memd sync init-schema" in res.message
    st = a.status()
    assert st["state"] == "refused" and st["parked"] == n and "not_created_yet" in st["last_error"]
    assert a.syncer.run().message.startswith("refused: ")  # no retry on the schedule
    out = a.engine.handle("sync_init_schema")
    assert out["created"] and out["unparked"] == n and "table not_created_yet" in out["message"]
    res = a.syncer.run()  # the next scheduled run goes through
    assert res.outcome.value == "success" and res.counts["pushed"] == n
    assert cloud_rows(sync_dsn, "not_created_yet")["topics/rust.md"]["content"] == RUST_A


def test_a_push_racing_another_devices_push_is_refused_then_resolved_without_loss(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a, b = devices("a"), devices("b")
    a.write("topics/rust.md", "# Rust\n")
    a.sync()
    b.sync()
    a.write("topics/rust.md", RUST_A)
    (a_op,) = [op for op in a.queue() if op.path == "topics/rust.md"]
    seen: dict[str, Any] = {}

    def b_pushes_in_the_window() -> None:  # after A's pull, before A's push
        b.write("topics/rust.md", RUST_B)
        assert b.sync()["counts"]["pushed"] == 1

    def cloud_after_a_push(result: Any) -> None:
        seen["refused"] = set(result.refused)
        seen["row"] = cloud_rows(sync_dsn, table)["topics/rust.md"]

    race = race_on_push(a, b_pushes_in_the_window, cloud_after_a_push)
    res = a.sync()
    # A's push was refused: the cloud still held B's version, and A's op was not logged then.
    assert seen["refused"] == {a_op.op_id}
    assert (seen["row"]["content"], seen["row"]["device_id"]) == (RUST_B, b.syncer.device_id())
    # In the same run A pulled B's version as a conflict copy and pushed its own on top.
    assert res["outcome"] == "success", res
    assert res["counts"]["refused"] == 1 and res["counts"]["conflicts"] == 1, res
    assert a_op.op_id in race.results[1].applied
    assert a.read("topics/rust.md") == RUST_A
    (a_copy,) = a.memory.glob("topics/rust.conflict-*.md")
    assert a_copy.read_text() == RUST_B
    assert a.queue() == []
    rows = cloud_rows(sync_dsn, table)
    assert rows["topics/rust.md"]["content"] == RUST_A
    assert rows[f"topics/{a_copy.name}"]["content"] == RUST_B
    # B was unchanged since its push: it takes A's version and receives the copy.
    b.sync()
    assert b.read("topics/rust.md") == RUST_A
    assert (b.memory / "topics" / a_copy.name).read_text() == RUST_B
    assert b.queue() == [] and not [
        c for c in b.status()["conflicts"] if c["path"] == "topics/rust.md"
    ]
    # Every operation of the file arrived exactly once, A's after B's.
    log = [
        (e["device_id"], e["sha256"])
        for e in cloud_events(sync_dsn, table)
        if e["path"] == "topics/rust.md"
    ]
    sha = {t: hashlib.sha256(t.encode()).hexdigest() for t in (RUST_A, RUST_B)}
    assert log[-2:] == [(b.syncer.device_id(), sha[RUST_B]), (a.syncer.device_id(), sha[RUST_A])]
    assert a.sync()["counts"]["pushed"] == 0 and b.sync()["counts"]["pushed"] == 0


def test_a_push_refused_twice_stays_queued_without_penalty_and_asks_for_an_early_run(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a, b = devices("a"), devices("b")  # push_delay_s = 0: local changes ask for no run
    a.write("topics/rust.md", "# Rust\n")
    a.sync()
    b.sync()
    a.write("topics/rust.md", RUST_A)
    edits = iter([RUST_B, RUST_B + "- and clippy\n"])

    def b_pushes_in_the_window() -> None:  # before both of A's pushes in its run
        b.write("topics/rust.md", next(edits))
        b.sync()

    race = race_on_push(a, b_pushes_in_the_window, lambda result: None, times=2)
    wakes: list[float] = []
    a.syncer.wake = wakes.append
    res = a.syncer.run()
    assert res.counts["refused"] == 2 and len(race.results) == 2  # bounded: one pull and retry
    assert wakes == [1.0]  # still refused: the next run comes in a second, not an interval
    (op,) = [op for op in a.queue() if op.path == "topics/rust.md"]
    assert (op.attempts, op.next_at, op.parked_at) == (0, 0, 0)
    assert cloud_rows(sync_dsn, table)["topics/rust.md"]["content"] == RUST_B + "- and clippy\n"
    a.sync()  # the next run takes B's newest version as a copy and lands A's
    assert cloud_rows(sync_dsn, table)["topics/rust.md"]["content"] == RUST_A
    copies = sorted(p.read_text() for p in a.memory.glob("topics/rust.conflict-*.md"))
    assert RUST_B + "- and clippy\n" in copies and a.queue() == []


def test_hand_written_secrets_and_private_blocks_never_reach_the_cloud(
    tmp_path: Any, devices: Any, sync_dsn: str, table: str
) -> None:
    """Both ways a file is queued: written while sync was off (read when the run catches up)
    and written while it is on (the indexer's hook), and what another device pulls."""
    off = Device(tmp_path / "a")
    off.write("topics/before.md", planted.TEXT)
    off.close()
    a: Device = devices("a")
    a.write("topics/live.md", planted.TEXT)
    assert a.sync()["outcome"] == "success"
    rows = cloud_rows(sync_dsn, table)
    for rel in ("topics/before.md", "topics/live.md"):
        assert planted.leaked(json.dumps(rows[rel], default=str)) == [], rel
        assert planted.carried(rows[rel]["content"]) == list(planted.PUBLIC), rel
    events = cloud_events(sync_dsn, table)
    assert planted.leaked(json.dumps(events, default=str)) == []
    b: Device = devices("b")
    b.sync()
    assert planted.leaked(b.read("topics/live.md")) == []
    assert planted.leaked(a.read("topics/live.md")) == list(planted.fragments())  # kept at home


def test_a_fifo_where_a_pulled_file_goes_never_stops_the_run(
    devices: Any, sync_dsn: str, table: str
) -> None:
    a: Device = devices("a")
    a.write("topics/pipe.md", RUST_A)
    a.sync()
    b: Device = devices("b")
    fifo = b.path("topics/pipe.md")
    os.mkfifo(fifo)
    done: list[dict[str, Any]] = []
    run = threading.Thread(target=lambda: done.append(b.sync()), daemon=True)
    run.start()
    try:
        run.join(60)  # a run stuck opening the FIFO would never end
        assert done and done[0]["outcome"] == "success", done
        # Not a file memd can read: kept, the cloud version written beside it.
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        copies = list(b.memory.glob("topics/pipe.conflict-*.md"))
        assert [c.read_text() for c in copies] == [RUST_A]
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # frees a stuck reader
