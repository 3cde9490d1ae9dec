"""SupabaseBackend: the real postgrest-py client against a local fake PostgREST server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from memd.core.errors import SyncError, SyncPermanent, SyncRetryable
from memd.sync.backend import PUSH_COLUMNS, SyncRow, schema_path
from memd.sync.supabase import SupabaseBackend, classify_api_error
from tests.fakes.postgrest_server import FakePostgrest, Fault, RecordedRequest
from tests.sync.rows import make_row

KEY = "sb_secret_T3stKeyDoNotLeak0123456789"


@pytest.fixture
def server() -> Iterator[FakePostgrest]:
    with FakePostgrest(api_key=KEY) as fake:
        yield fake


@pytest.fixture
def backend(server: FakePostgrest) -> Iterator[SupabaseBackend]:
    b = SupabaseBackend(server.url, KEY, timeout=2)
    yield b
    b.close()


def posts(server: FakePostgrest) -> list[RecordedRequest]:
    return [r for r in server.requests if r.method == "POST"]


def assert_no_key(exc: BaseException) -> None:
    assert KEY not in str(exc)
    assert KEY not in getattr(exc, "hint", "")


# push / pull --------------------------------------------------------------------------------


def test_push_sends_one_upsert_without_synced_at(
    backend: SupabaseBackend, server: FakePostgrest
) -> None:
    rows = [make_row("core/me.md", "# Me\n\n- 日本語 ✓\n"), make_row("topics/x.md", version=4)]
    backend.push(rows)
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/rest/v1/memd_files")
    assert request.param("on_conflict") == "namespace,path"
    columns = {c.strip('"') for c in (request.param("columns") or "").split(",")}
    assert columns == set(PUSH_COLUMNS)
    assert {"resolution=merge-duplicates", "return=representation"} <= request.prefer
    assert request.param("select") == "op_id"  # the applied op_ids, not the content again
    assert request.headers["apikey"] == KEY
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == [{c: getattr(r, c) for c in PUSH_COLUMNS} for r in rows]
    stored = server.rows()
    assert [r["path"] for r in stored] == ["core/me.md", "topics/x.md"]
    assert all(r["synced_at"] > 0 for r in stored)


def test_pull_round_trip_and_query(backend: SupabaseBackend, server: FakePostgrest) -> None:
    rows = [make_row("a.md"), make_row("b.md", version=2), make_row("c.md", ns="other")]
    backend.push(rows)
    pulled = backend.pull("ns", 0.0, limit=10)
    assert [(r.path, r.version) for r in pulled] == [("a.md", 1), ("b.md", 2)]
    for sent, got in zip(rows, pulled, strict=False):
        assert got == SyncRow(**{**_fields(sent), "synced_at": got.synced_at})
    request = server.requests[-1]
    assert request.method == "GET"
    assert request.param("namespace") == "eq.ns"
    assert request.param("synced_at") == "gt.0.0"
    assert request.param("order") == "synced_at.asc,path.asc"
    assert request.param("limit") == "10"
    assert request.headers["apikey"] == KEY


def _fields(row: SyncRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in SyncRow.__slots__}


def test_pull_cursor_pages_and_sees_deletes(backend: SupabaseBackend) -> None:
    backend.push([make_row(f"f{i}.md") for i in range(5)])
    backend.push([make_row("f0.md", version=2, deleted=True)])
    seen: list[SyncRow] = []
    since = 0.0
    while page := backend.pull("ns", since, limit=2):
        seen += page
        since = page[-1].synced_at
    assert [r.path for r in seen] == ["f1.md", "f2.md", "f3.md", "f4.md", "f0.md"]
    assert seen[-1].deleted and seen[-1].content == ""
    # The cursor survives the float -> query string -> float trip exactly.
    assert backend.pull("ns", seen[-2].synced_at) == [seen[-1]]


def test_replays_and_stale_versions_change_nothing(
    backend: SupabaseBackend, server: FakePostgrest
) -> None:
    v2 = make_row("a.md", "new", version=2)
    backend.push([v2])
    backend.push([v2])
    backend.push([make_row("a.md", "old", version=1)])
    assert [e["op_id"] for e in server.events()] == [v2.op_id]
    assert backend.pull("ns", 0)[0].content == "new"


def test_same_file_twice_in_a_batch_is_split_in_order(
    backend: SupabaseBackend, server: FakePostgrest
) -> None:
    batch = [make_row("a.md", "one"), make_row("b.md"), make_row("a.md", "two", version=2)]
    backend.push(batch)
    bodies = [[row["op_id"] for row in r.body] for r in posts(server)]
    assert bodies == [[batch[0].op_id, batch[1].op_id], [batch[2].op_id]]
    assert {r.path: r.content for r in backend.pull("ns", 0)}["a.md"] == "two"


def test_bad_row_rejects_the_whole_request(backend: SupabaseBackend, server: FakePostgrest) -> None:
    with pytest.raises(SyncPermanent, match="23514"):
        backend.push([make_row("ok.md"), make_row("bad.md", version=-1)])
    assert server.rows() == []


def test_non_finite_time_is_rejected_before_sending(
    backend: SupabaseBackend, server: FakePostgrest
) -> None:
    bad = SyncRow(**{**_fields(make_row("a.md")), "updated_at": float("inf")})
    with pytest.raises(SyncPermanent, match="not finite"):
        backend.push([bad])
    assert server.requests == []


def test_empty_push_sends_nothing(backend: SupabaseBackend, server: FakePostgrest) -> None:
    backend.push([])
    assert server.requests == []


# faults -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "expected", "text", "hint"),
    [
        (Fault.http_503_html(), SyncRetryable, "HTTP 503", ""),
        (Fault.gateway_json(502), SyncRetryable, "HTTP 502", ""),
        (Fault.json(429, {"message": "Too many requests"}), SyncRetryable, "HTTP 429", ""),
        (Fault.json(503, {"code": "PGRST001", "message": "Could not connect to the database"}),
         SyncRetryable, "PGRST001", ""),
        (Fault.json(500, {"code": "57014", "message": "canceling statement due to statement timeout"}),
         SyncRetryable, "57014", ""),
        (Fault.disconnect(), SyncRetryable, "RemoteProtocolError", ""),
        (Fault.conflict_23505(), SyncPermanent, "HTTP 409, 23505", ""),
        (Fault.jwt_invalid(), SyncPermanent, "PGRST301", "service_role"),
        (Fault.invalid_api_key(), SyncPermanent, "Invalid API key", "service_role"),
        (Fault.missing_table(), SyncPermanent, "PGRST205", "schema.sql"),
        (Fault.json(404, {"code": "42P01", "message": 'relation "memd_files" does not exist'}),
         SyncPermanent, "42P01", "SQL editor"),
        (Fault.json(403, {"code": "42501",
                          "message": 'new row violates row-level security policy for table "memd_files"'}),
         SyncPermanent, "42501", "service_role"),
        (Fault.json(400, {"code": "22P02", "message": "invalid input syntax for type bigint"}),
         SyncPermanent, "22P02", ""),
    ],
)  # fmt: skip
def test_push_fault_mapping_then_retry_succeeds(
    backend: SupabaseBackend,
    server: FakePostgrest,
    fault: Fault,
    expected: type[SyncError],
    text: str,
    hint: str,
) -> None:
    row = make_row("a.md")
    server.fail_next(fault)
    with pytest.raises(expected) as info:
        backend.push([row])
    assert type(info.value) is expected
    assert text in str(info.value)
    assert hint in info.value.hint
    assert_no_key(info.value)
    assert len(server.requests) == 1  # no hidden client-side retry: the outbox decides
    backend.push([row])  # what the outbox does on its next attempt
    assert [e["op_id"] for e in server.events()] == [row.op_id]


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault.http_503_html(method="GET"), SyncRetryable),
        (Fault.disconnect(method="GET"), SyncRetryable),
        (Fault.jwt_invalid(method="GET"), SyncPermanent),
        (Fault.missing_table(method="GET"), SyncPermanent),
    ],
)
def test_pull_fault_mapping(
    backend: SupabaseBackend, server: FakePostgrest, fault: Fault, expected: type[Exception]
) -> None:
    backend.push([make_row("a.md")])
    server.fail_next(fault)
    with pytest.raises(expected):
        backend.pull("ns", 0)
    # postgrest-py would retry a GET on 503 with sleeps of its own; memd turns that off.
    assert [r.method for r in server.requests] == ["POST", "GET"]
    assert len(backend.pull("ns", 0)) == 1


def test_connection_refused_is_retryable_and_recovers(
    backend: SupabaseBackend, server: FakePostgrest
) -> None:
    backend.push([make_row("before.md")])  # leaves a keep-alive connection open
    with server.outage():
        with pytest.raises(SyncRetryable, match="ConnectError") as info:
            backend.push([make_row("during.md")])
        assert_no_key(info.value)
        with pytest.raises(SyncRetryable):
            backend.pull("ns", 0)
        with pytest.raises(SyncRetryable):
            backend.check()
    backend.push([make_row("during.md")])
    assert [r.path for r in backend.pull("ns", 0)] == ["before.md", "during.md"]


@pytest.mark.serial  # asserts a wall-clock bound (scripts/test runs it alone)
def test_timeout_is_honoured_and_a_late_write_is_not_duplicated(server: FakePostgrest) -> None:
    backend = SupabaseBackend(server.url, KEY, timeout=0.3)
    try:
        row = make_row("slow.md")
        server.fail_next(Fault.slow(0.8))
        started = time.monotonic()
        with pytest.raises(SyncRetryable, match="ReadTimeout"):
            backend.push([row])
        elapsed = time.monotonic() - started
        assert 0.25 < elapsed < 0.75  # fractional timeouts are kept, not rounded to seconds
        # The server applied the write after the client gave up; the retry must be a no-op.
        deadline = time.monotonic() + 5
        while not server.events() and time.monotonic() < deadline:
            time.sleep(0.02)
        backend.push([row])
        assert [e["op_id"] for e in server.events()] == [row.op_id]
    finally:
        backend.close()


def test_wrong_key_is_permanent_and_never_echoed(server: FakePostgrest) -> None:
    wrong = "sb_secret_Wr0ngKeyAlsoSecret999999"
    backend = SupabaseBackend(server.url, wrong)
    try:
        with pytest.raises(SyncPermanent, match="Invalid API key") as info:
            backend.push([make_row("a.md")])
        assert wrong not in str(info.value) and wrong not in info.value.hint
        assert server.requests[-1].headers["apikey"] == wrong
    finally:
        backend.close()


# schema and settings ----------------------------------------------------------------------------


def test_init_schema_points_to_the_sql_file(backend: SupabaseBackend) -> None:
    with pytest.raises(SyncPermanent, match="REST") as info:
        backend.init_schema()
    assert str(schema_path()) in info.value.hint
    assert schema_path().is_file()
    assert_no_key(info.value)


def test_check_describes_the_target(backend: SupabaseBackend, server: FakePostgrest) -> None:
    assert backend.check() == f"supabase {server.url}, table memd_files"
    assert server.requests[-1].param("limit") == "1"


def test_check_reports_a_missing_table(server: FakePostgrest) -> None:
    backend = SupabaseBackend(server.url, KEY, table="not_there")
    try:
        with pytest.raises(SyncPermanent, match="PGRST205") as info:
            backend.check()
        assert "SQL editor" in info.value.hint
    finally:
        backend.close()


@pytest.mark.parametrize("url", ["", "127.0.0.1:5432", "ftp://example.com"])
def test_invalid_url_is_permanent(url: str) -> None:
    with pytest.raises(SyncPermanent, match="invalid Supabase settings") as info:
        SupabaseBackend(url, KEY)
    assert_no_key(info.value)


def test_invalid_table_name_is_permanent() -> None:
    with pytest.raises(SyncPermanent, match="invalid sync table name"):
        SupabaseBackend("http://127.0.0.1:9", KEY, table="Files")


@pytest.mark.parametrize(
    ("status", "code", "message", "expected", "hint"),
    [
        (503, "503", "Service Unavailable", SyncRetryable, ""),
        (None, "503", "Service Unavailable", SyncRetryable, ""),  # status only in the code
        (None, "520", "", SyncRetryable, ""),
        (504, None, "Gateway timeout", SyncRetryable, ""),
        (408, None, "", SyncRetryable, ""),
        (429, None, "rate limited", SyncRetryable, ""),
        (503, "PGRST002", "schema cache", SyncRetryable, ""),
        (500, "40001", "could not serialize access", SyncRetryable, ""),
        (503, "08006", "connection failure", SyncRetryable, ""),
        (409, "23505", "duplicate key", SyncPermanent, ""),
        (400, "23502", "null value", SyncPermanent, ""),
        (400, "PGRST204", "column not found", SyncPermanent, "SQL editor"),
        (401, "PGRST301", "JWT invalid", SyncPermanent, "key"),
        (401, "PGRST303", "JWT expired", SyncPermanent, "key"),
        (401, None, "Invalid API key", SyncPermanent, "key"),
        (None, None, "Invalid API key", SyncPermanent, "key"),
        (403, None, "forbidden", SyncPermanent, "key"),
        (404, None, "not found", SyncPermanent, "SQL editor"),
        (400, "400", "Bad Request", SyncPermanent, ""),
        (None, None, "", SyncPermanent, ""),
        (500, "PGRST999", "unknown", SyncPermanent, ""),
    ],
)
def test_classify_api_error(
    status: int | None, code: str | None, message: str, expected: type[Exception], hint: str
) -> None:
    kind, got_hint = classify_api_error(status, code, message)
    assert kind is expected
    assert hint in got_hint


# the fake itself: what the tests above rely on ---------------------------------------------------


def test_fake_stores_nothing_for_a_plain_insert_conflict(server: FakePostgrest) -> None:
    import httpx

    row = {c: getattr(make_row("a.md"), c) for c in PUSH_COLUMNS}
    headers = {"apikey": KEY, "Prefer": "return=representation"}
    with httpx.Client(base_url=server.url) as client:
        first = client.post("/rest/v1/memd_files", json=[row], headers=headers)
        second = client.post(
            "/rest/v1/memd_files", json=[{**row, "op_id": "other"}], headers=headers
        )
    assert first.status_code == 201 and first.json()[0]["synced_at"] > 0
    assert second.status_code == 409 and second.json()["code"] == "23505"
    assert len(server.rows()) == 1


# compare-and-swap --------------------------------------------------------------------------------


def test_a_push_on_a_stale_base_is_refused_and_a_null_base_wins(
    backend: SupabaseBackend, server: FakePostgrest
) -> None:
    first = make_row("a,(b).md", "from a", device="dev-a")  # a path PostgREST must quote
    assert backend.push([first]).applied == {first.op_id}
    theirs = make_row("a,(b).md", "from b", device="dev-b", base=first.sha256)
    assert backend.push([theirs]).applied == {theirs.op_id}
    stale = make_row("a,(b).md", "from a again", device="dev-a", version=2, base=first.sha256)
    unseen = make_row("new.md", device="dev-a", base="")
    result = backend.push([stale, unseen])
    assert result.refused == {stale.op_id} and result.applied == {unseen.op_id}
    assert [r["content"] for r in server.rows() if r["path"] == "a,(b).md"] == ["from b"]
    assert stale.op_id not in [e["op_id"] for e in server.events()]
    replay = backend.push([unseen])  # dropped, not refused: the server has it
    assert replay.applied == frozenset() and replay.refused == frozenset()
    old_client = make_row("a,(b).md", "old client", device="dev-a", version=3)
    assert backend.push([old_client]).applied == {old_client.op_id}
    assert all(r["base_sha256"] is None for r in server.rows())


def test_an_outdated_table_is_reported_with_the_sql_editor_hint() -> None:
    with FakePostgrest(api_key=KEY, base_column=False) as old:
        backend = SupabaseBackend(old.url, KEY, timeout=2)
        try:
            with pytest.raises(SyncPermanent, match="schema outdated") as info:
                backend.check()
            assert "SQL editor" in info.value.hint
            with pytest.raises(SyncPermanent, match="PGRST204") as info:
                backend.push([make_row("a.md", base="")])
            assert "SQL editor" in info.value.hint
        finally:
            backend.close()
