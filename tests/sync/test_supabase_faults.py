"""The supabase backend (real postgrest-py and httpx) against a local PostgREST that fails on cue.

Connection refused, 503, timeouts, 409/23505 and 401: what is retried (with backoff), what is
parked, and what `sync status` says about it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.postgrest_server import FakePostgrest, Fault
from tests.sync.conftest import SUPABASE_KEY as KEY
from tests.sync.conftest import Device, supabase_settings


@pytest.fixture
def device(tmp_path: Path, server: FakePostgrest) -> Iterator[Any]:
    made: list[Device] = []

    def make(key: str = KEY, name: str = "a") -> Device:
        for old in made:
            old.close()
        d = Device(
            tmp_path / name,
            **supabase_settings(server, key, **{"sync.timeout_s": 0.5, "sync.backoff_cap_s": 60}),
        )
        made.append(d)
        return d

    yield make
    made[-1].close()


def posts(server: FakePostgrest) -> int:
    return sum(1 for r in server.requests if r.method == "POST")


def test_connection_refused_backs_off_then_delivers(device: Any, server: FakePostgrest) -> None:
    d: Device = device()
    wakes: list[float] = []
    d.syncer.wake = wakes.append  # what the daemon's scheduler is asked for
    queued = len(d.queue())
    assert queued >= 2  # the first-start templates
    with server.outage():
        job = d.syncer.run()
        assert job.outcome.value == "retry_later" and "ConnectError" in job.message
        st = d.status()
        assert st["pending"] == queued and st["last_success_at"] is None
        assert "ConnectError" in st["last_error"]
        # The retry is scheduled at the end of the backoff (1–2 s after a first failure).
        assert len(wakes) == 1 and 1.0 <= wakes[0] <= 2.0
        assert st["next_attempt_at"] == pytest.approx(time.time() + wakes[0], abs=0.5)
    # Back up, but a run inside the backoff does not even try, and keeps the retry scheduled.
    requests = len(server.requests)
    assert "backing off" in d.syncer.run().message and len(server.requests) == requests
    assert len(wakes) == 2 and wakes[1] <= wakes[0]
    res = d.sync()  # --now ignores the backoff
    assert res["outcome"] == "success" and res["counts"]["pushed"] == queued
    st = d.status()
    assert st["pending"] == 0 and st["last_success_at"] and st["next_attempt_at"] is None
    assert len(server.rows()) == queued


def test_503_and_timeouts_are_retried_per_operation_and_land_once(
    device: Any, server: FakePostgrest
) -> None:
    d: Device = device()
    d.write("topics/rust.md", "# Rust\n")
    n = len(d.queue())
    server.fail_next(Fault.http_503_html(method="POST"))
    job = d.syncer.run()
    assert job.outcome.value == "retry_later" and "HTTP 503" in job.message
    ops = d.queue()
    assert all(
        op.attempts == 1 and op.next_at > time.time() and "503" in op.last_error for op in ops
    )
    assert d.status()["due"] == 0
    # The server applies the write but answers too late: the client times out and retries
    # the same operations, which the server recognises as replays.
    server.fail_next(Fault.slow(1.2, method="POST"))
    res = d.sync()
    assert res["outcome"] == "retry_later" and "Timeout" in res["message"]
    assert all(op.attempts == 2 for op in d.queue())
    res = d.sync()
    assert res["outcome"] == "success" and res["counts"]["pushed"] == n
    server.stop()  # joins the slow handler: its late write is in by now
    events = server.events()
    assert len(events) == n and len({e["op_id"] for e in events}) == n
    assert {e["op_id"] for e in events} == {op.op_id for op in ops}


def test_a_refused_row_is_parked_and_shown_while_the_rest_goes_through(
    device: Any, server: FakePostgrest
) -> None:
    d: Device = device()
    d.sync()
    d.write("topics/a.md", "# A\n")
    d.write("topics/b.md", "# B\n")
    d.write("topics/c.md", "# C\n")
    # The batch is refused, the backend itself works (check), then the rows go one by one
    # and only the first is refused again.
    server.fail_next(Fault.conflict_23505(method="POST"), Fault.conflict_23505(method="POST"))
    res = d.sync()
    assert (
        res["outcome"] == "success"
        and res["counts"]["parked"] == 1
        and res["counts"]["pushed"] == 2
    )
    st = d.status()
    assert st["pending"] == 0 and st["parked"] == 1
    (parked,) = st["parked_ops"]
    assert (
        parked["path"] == "topics/a.md"
        and "23505" in parked["error"]
        and "HTTP 409" in parked["error"]
    )
    assert {r["path"] for r in server.rows()} >= {"topics/b.md", "topics/c.md"}
    assert "topics/a.md" not in {r["path"] for r in server.rows()}
    # Parked means not retried by the schedule ...
    before = posts(server)
    assert d.syncer.run().outcome.value == "nothing_to_do" and posts(server) == before
    # ... until the user retries it, or edits the file again.
    res = d.sync(retry_parked=True)
    assert res["counts"]["pushed"] == 1 and d.status()["parked"] == 0
    assert "topics/a.md" in {r["path"] for r in server.rows()}


def test_a_wrong_key_parks_everything_until_the_settings_change(
    device: Any, server: FakePostgrest
) -> None:
    d: Device = device(key="sb_secret_WrongKey000000000000000")
    d.write("topics/rust.md", "# Rust\n")
    n = len(d.queue())
    res = d.syncer.run()
    assert (
        res.outcome.value == "config_error"
        and "HTTP 401" in res.message
        and "service_role" in res.message
    )
    st = d.status()
    assert st["state"] == "refused" and st["parked"] == n and st["pending"] == 0
    assert all("HTTP 401" in op["error"] for op in st["parked_ops"])
    assert "WrongKey" not in str(st)  # the key never shows up in errors
    # Refused means not retried by the schedule: no request at all.
    before = len(server.requests)
    assert d.syncer.run().outcome.value == "config_error" and len(server.requests) == before
    d.write("topics/go.md", "# Go\n")  # changes still queue up meanwhile
    assert d.status()["pending"] == 1
    # With the right key (a settings change) everything parked is queued again and sent.
    d = device(key=KEY)
    res = d.syncer.run()
    assert res.outcome.value == "success" and res.counts["pushed"] == n + 1
    st = d.status()
    assert st["state"] == "on" and st["parked"] == 0 and st["pending"] == 0
    assert {r["path"] for r in server.rows()} >= {"topics/rust.md", "topics/go.md"}


def test_a_401_on_one_push_is_checked_before_anything_is_parked(
    device: Any, server: FakePostgrest
) -> None:
    d: Device = device()
    n = len(d.queue())
    server.fail_next(Fault.jwt_invalid(method="POST"))
    res = d.sync()
    # The key works (check() reads fine), so the rows are sent one by one and all land.
    assert (
        res["outcome"] == "success"
        and res["counts"]["pushed"] == n
        and res["counts"]["parked"] == 0
    )
    assert d.status()["parked"] == 0 and len(server.rows()) == n
