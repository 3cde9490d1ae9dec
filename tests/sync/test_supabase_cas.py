"""Compare-and-swap through the supabase backend (real postgrest-py) and the fake PostgREST."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import planted
from tests.fakes.postgrest_server import FakePostgrest
from tests.sync.conftest import SUPABASE_KEY, Device, race_on_push, supabase_settings

RUST_A = "# Rust\n\n## Notes\n- prefers cargo nextest\n"
RUST_B = "# Rust\n\n## Notes\n- prefers cargo test\n"


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[Any]:
    made: list[Device] = []

    def make(name: str, server: FakePostgrest) -> Device:
        made.append(Device(tmp_path / name, **supabase_settings(server), **{"sync.timeout_s": 2}))
        return made[-1]

    yield make
    for device in made:
        device.close()


def test_a_push_racing_another_devices_push_is_refused_then_resolved_without_loss(
    devices: Any, server: FakePostgrest
) -> None:
    a, b = devices("a", server), devices("b", server)
    a.write("topics/rust.md", "# Rust\n")
    a.sync()
    b.sync()
    a.write("topics/rust.md", RUST_A)
    (a_op,) = [op for op in a.queue() if op.path == "topics/rust.md"]
    seen: dict[str, Any] = {}

    def b_pushes_in_the_window() -> None:
        b.write("topics/rust.md", RUST_B)
        assert b.sync()["counts"]["pushed"] == 1

    def cloud_after_a_push(result: Any) -> None:
        seen["refused"] = set(result.refused)
        seen["row"] = next(r for r in server.rows() if r["path"] == "topics/rust.md")

    race = race_on_push(a, b_pushes_in_the_window, cloud_after_a_push)
    res = a.sync()
    assert seen["refused"] == {a_op.op_id}
    assert (seen["row"]["content"], seen["row"]["device_id"]) == (RUST_B, b.syncer.device_id())
    assert res["counts"]["refused"] == 1 and res["counts"]["conflicts"] == 1, res
    assert a_op.op_id in race.results[1].applied
    (a_copy,) = a.memory.glob("topics/rust.conflict-*.md")
    assert (a.read("topics/rust.md"), a_copy.read_text()) == (RUST_A, RUST_B)
    rows = {r["path"]: r for r in server.rows()}
    assert rows["topics/rust.md"]["content"] == RUST_A
    assert rows[f"topics/{a_copy.name}"]["content"] == RUST_B
    b.sync()
    assert b.read("topics/rust.md") == RUST_A
    assert (b.memory / "topics" / a_copy.name).read_text() == RUST_B
    assert a.queue() == [] and b.queue() == []
    log = [(e["device_id"], e["sha256"]) for e in server.events() if e["path"] == "topics/rust.md"]
    sha = {t: hashlib.sha256(t.encode()).hexdigest() for t in (RUST_A, RUST_B)}
    assert log[-2:] == [(b.syncer.device_id(), sha[RUST_B]), (a.syncer.device_id(), sha[RUST_A])]
    # Every operation landed once.
    assert len({e["op_id"] for e in server.events()}) == len(server.events())


def test_a_table_without_the_base_column_refuses_sync_with_the_sql_editor_hint(
    devices: Any,
) -> None:
    with FakePostgrest(api_key=SUPABASE_KEY, base_column=False) as old:
        a: Device = devices("a", old)
        a.write("topics/rust.md", RUST_A)
        res = a.sync()
        assert res["outcome"] == "config_error", res
        st = a.status()
        assert st["state"] == "refused" and st["parked"] == len(a.queue()) > 0
        assert "schema outdated" in st["last_error"] and "SQL editor" in st["last_error"]
        assert old.rows() == []


def test_hand_written_secrets_and_private_blocks_never_reach_supabase(
    tmp_path: Path, devices: Any, server: FakePostgrest
) -> None:
    off = Device(tmp_path / "a")  # sync off: the run catches up with this file
    off.write("topics/before.md", planted.TEXT)
    off.close()
    a = devices("a", server)
    a.write("topics/live.md", planted.TEXT)  # sync on: queued by the indexer's hook
    assert a.sync()["outcome"] == "success"
    posted = [r for r in server.requests if r.method == "POST"]
    assert posted
    for r in server.requests:
        assert planted.leaked(json.dumps([r.path, r.query, r.body])) == []
    stored = {row["path"]: row["content"] for row in server.rows()}
    for rel in ("topics/before.md", "topics/live.md"):
        assert planted.carried(stored[rel]) == list(planted.PUBLIC), rel
