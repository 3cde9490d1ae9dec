"""A retried `ingest` stores nothing twice: turns without ids get ids from their content (and the
client's `request_id` when it gives one), and a full disk is said plainly."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from memd.core.errors import DiskFull
from tests.conversations.test_durable_turns import pushed_dir
from tests.daemon.test_disk_full import daemon_on, fill, tiny_disk
from tests.utils import DaemonProcess

__all__ = ["tiny_disk"]


def batch(session: str, n: int = 4) -> list[dict[str, Any]]:
    return [
        {"session_id": session, "role": "user" if i % 2 == 0 else "assistant",
         "content": f"retry me {i} osprey"}
        for i in range(n)
    ]  # fmt: skip


def stored(d: DaemonProcess, session: str) -> list[str]:
    res = d.call("recall", {"session_id": session, "limit": 100})
    return [t["text"] for t in res["sessions"][0]["turns"]]


def test_a_retried_request_without_ids_adds_nothing(module_daemon: DaemonProcess) -> None:
    first = module_daemon.call("ingest", {"turns": batch("r1")})
    again = module_daemon.call("ingest", {"turns": batch("r1")})  # the client timed out and retried
    assert (first["added"], again["added"], again["accepted"]) == (4, 0, 4)
    assert stored(module_daemon, "r1") == [f"retry me {i} osprey" for i in range(4)]
    one = {"session_id": "r1", "role": "user", "content": "single osprey"}
    assert module_daemon.call("ingest", one)["added"] == 1
    assert module_daemon.call("ingest", one)["added"] == 0
    assert len(stored(module_daemon, "r1")) == 5


def test_request_ids_tell_a_retry_from_a_new_turn(module_daemon: DaemonProcess) -> None:
    yes = {"session_id": "r2", "role": "user", "content": "yes"}
    assert module_daemon.call("ingest", {**yes, "request_id": "req-1"})["added"] == 1
    assert module_daemon.call("ingest", {**yes, "request_id": "req-1"})["added"] == 0  # a retry
    assert module_daemon.call("ingest", {**yes, "request_id": "req-2"})["added"] == 1  # said again
    assert stored(module_daemon, "r2") == ["yes", "yes"]


def test_turns_with_their_own_ids_or_times_are_kept_apart(module_daemon: DaemonProcess) -> None:
    now = time.time()
    for i in range(2):
        module_daemon.call(
            "ingest", {"session_id": "r3", "role": "user", "content": "ok", "ts": now + i}
        )
        module_daemon.call(
            "ingest", {"session_id": "r3", "role": "user", "content": "ok", "id": f"x{i}"}
        )
    assert stored(module_daemon, "r3") == ["ok"] * 4


def test_a_full_disk_is_said_plainly_and_a_retry_after_it_stores_once(
    tiny_disk: Path, tmp_path: Path
) -> None:
    d = daemon_on(tiny_disk, tmp_path).start()
    try:
        d.call(
            "ingest", {"session_id": "warm", "role": "user", "content": "before the disk filled"}
        )
        filler = fill(tiny_disk)
        turns = [{**t, "content": t["content"] + " words" * 400} for t in batch("full", 20)]
        with pytest.raises(DiskFull, match="^disk full") as info:
            d.call("ingest", {"turns": turns})
        assert "Errno" not in str(info.value) and "internal error" not in str(info.value)
        filler.unlink()
        assert d.call("ingest", {"turns": turns})["added"] == 20
        assert d.call("ingest", {"turns": turns})["added"] == 0
        assert len(stored(d, "full")) == 20
        on_disk = "".join(p.read_text() for p in pushed_dir(d.home).glob("*.jsonl"))
        assert on_disk.count("retry me 3 osprey") == 1
    finally:
        d.stop()
