"""PostgresBackend against a real PostgreSQL server (one cluster per session, one table per test)."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memd.core.errors import SyncPermanent, SyncRetryable
from memd.sync.backend import SyncRow, schema_path, schema_sql
from memd.sync.postgres import PostgresBackend, classify_error
from tests.pgserver import PgServer
from tests.sync.rows import make_row

pytestmark = pytest.mark.postgres


@pytest.fixture
def server(pg: PgServer) -> PgServer:
    pg.start()  # an earlier outage test may have failed before restarting it
    return pg


@pytest.fixture
def table() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def backend(server: PgServer, table: str) -> Iterator[PostgresBackend]:
    b = PostgresBackend(server.dsn, table=table, timeout=5)
    b.init_schema()
    yield b
    b.close()


@pytest.fixture
def db(server: PgServer) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        yield conn


def events(db: psycopg.Connection[Any], table: str) -> list[tuple[Any, ...]]:
    return db.execute(
        f"select op_id, path, version, device_id, deleted from {table}_events order by received_at"
    ).fetchall()


def pull_all(backend: PostgresBackend, ns: str = "ns", limit: int = 500) -> list[SyncRow]:
    rows: list[SyncRow] = []
    since = 0.0
    while page := backend.pull(ns, since, limit):
        rows += page
        since = page[-1].synced_at
    return rows


# schema ------------------------------------------------------------------------------


def test_init_schema_twice_with_the_default_table_and_shipped_file(server: PgServer) -> None:
    dsn = server.create_database(f"schema_{uuid.uuid4().hex[:8]}")
    backend = PostgresBackend(dsn)
    try:
        backend.init_schema()
        backend.init_schema()
        description = backend.check()
        backend.push([make_row("a.md")])
        assert [r.path for r in backend.pull("ns", 0)] == ["a.md"]
    finally:
        backend.close()
    assert "table memd_files" in description and "postgres 15" in description
    assert schema_sql() == schema_path().read_text()
    # The file as shipped (what users paste into the Supabase SQL editor) runs again cleanly.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(schema_path().read_text())
        triggers = conn.execute(
            "select tgname from pg_trigger where tgrelid = 'memd_files'::regclass "
            "and not tgisinternal order by 1"
        ).fetchall()
        assert triggers == [("memd_files_after_write_trg",), ("memd_files_before_write_trg",)]
        assert conn.execute("select count(*) from memd_file_events").fetchone() == (1,)


def test_renamed_schema_keeps_tables_apart(backend: PostgresBackend, table: str, db: Any) -> None:
    backend.init_schema()  # again, on a table with data: nothing lost
    backend.push([make_row("a.md")])
    backend.init_schema()
    assert len(backend.pull("ns", 0)) == 1
    names = {r[0] for r in db.execute("select tablename from pg_tables where tablename like %s",
                                      (f"{table}%",))}  # fmt: skip
    assert names == {table, f"{table}_events"}


def test_invalid_table_name_is_permanent(server: PgServer) -> None:
    with pytest.raises(SyncPermanent, match="invalid sync table name"):
        PostgresBackend(server.dsn, table="files; drop table x")


# push / pull ---------------------------------------------------------------------------


def test_push_pull_round_trip(backend: PostgresBackend, table: str, db: Any) -> None:
    rows = [
        make_row("core/me.md", "# Me\n\n- prefers tabs — 日本語 ✓\n"),
        make_row("topics/rust.md", version=3),
    ]
    before = time.time()
    backend.push(rows)
    pulled = backend.pull("ns", 0)
    assert [r.path for r in pulled] == ["core/me.md", "topics/rust.md"]
    for sent, got in zip(rows, pulled, strict=True):
        assert got.synced_at >= before - 1
        assert got == SyncRow(**{**_fields(sent), "synced_at": got.synced_at})
    assert pulled[0].synced_at < pulled[1].synced_at
    assert [e[0] for e in events(db, table)] == [r.op_id for r in rows]
    assert backend.pull("other-ns", 0) == []


def _fields(row: SyncRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in SyncRow.__slots__}


def test_synced_at_is_assigned_by_the_server(backend: PostgresBackend) -> None:
    backend.push([make_row("a.md", synced_at=99.0)])
    first = backend.pull("ns", 0)[0].synced_at
    assert abs(first - time.time()) < 60
    backend.push([make_row("a.md", version=2, synced_at=first + 10_000)])
    second = backend.pull("ns", 0)[0]
    assert second.version == 2
    assert first < second.synced_at < first + 60


def test_batch_is_one_transaction(backend: PostgresBackend, table: str, db: Any) -> None:
    good = make_row("good.md")
    bad = make_row("bad.md", version=-1)  # violates the version >= 0 check
    with pytest.raises(SyncPermanent, match=r"\[23514\]") as info:
        backend.push([good, bad, make_row("later.md")])
    assert "push failed" in str(info.value)
    assert backend.pull("ns", 0) == []
    assert events(db, table) == []
    # A value PostgreSQL text cannot hold is rejected client-side; still nothing applied.
    with pytest.raises(SyncPermanent):
        backend.push([good, make_row("nul.md", "a\x00b")])
    assert backend.pull("ns", 0) == []
    backend.push([good])  # the connection is still usable
    assert [r.path for r in backend.pull("ns", 0)] == ["good.md"]


def test_non_finite_time_is_rejected_before_sending(backend: PostgresBackend) -> None:
    row = make_row("a.md")
    bad = SyncRow(**{**_fields(row), "updated_at": float("nan")})
    with pytest.raises(SyncPermanent, match="not finite"):
        backend.push([bad])


def test_repushed_op_is_a_no_op(backend: PostgresBackend, table: str, db: Any) -> None:
    first = make_row("a.md")
    backend.push([first])
    stored = backend.pull("ns", 0)
    backend.push([first])  # the outbox retried after a lost acknowledgement
    backend.push([first, make_row("b.md")])
    again = backend.pull("ns", 0)
    assert again[0] == stored[0]  # same synced_at: a replay does not look like a new change
    assert [e[0] for e in events(db, table)].count(first.op_id) == 1
    assert len(events(db, table)) == 2


def test_older_version_from_the_same_device_does_not_overwrite(
    backend: PostgresBackend, table: str, db: Any
) -> None:
    v2 = make_row("a.md", "new", version=2)
    backend.push([v2])
    backend.push([make_row("a.md", "old", version=1)])
    (row,) = backend.pull("ns", 0)
    assert (row.content, row.version, row.op_id) == ("new", 2, v2.op_id)

    # Another device writes in between (last arrival wins across devices) ...
    other = make_row("a.md", "from b", version=1, device="dev-b")
    backend.push([other])
    # ... and a late, older op from dev-a must still not undo anything.
    backend.push([make_row("a.md", "stale", version=1)])
    (row,) = backend.pull("ns", 0)
    assert (row.content, row.device_id) == ("from b", "dev-b")
    assert [e[0] for e in events(db, table)] == [v2.op_id, other.op_id]

    newer = make_row("a.md", "newest", version=3)
    backend.push([newer])
    assert backend.pull("ns", 0)[0].content == "newest"


def test_same_file_twice_in_one_batch_keeps_the_last(
    backend: PostgresBackend, table: str, db: Any
) -> None:
    batch = [make_row("a.md", "one", version=1), make_row("a.md", "two", version=2)]
    backend.push(batch)
    (row,) = backend.pull("ns", 0)
    assert row.content == "two"
    assert [e[0] for e in events(db, table)] == [r.op_id for r in batch]


def test_deletes_are_pulled_as_tombstones(backend: PostgresBackend) -> None:
    backend.push([make_row("gone.md"), make_row("kept.md")])
    cursor = backend.pull("ns", 0)[-1].synced_at
    backend.push([make_row("gone.md", version=2, deleted=True)])
    (tombstone,) = backend.pull("ns", cursor)
    assert (tombstone.path, tombstone.deleted, tombstone.content) == ("gone.md", True, "")
    assert {r.path: r.deleted for r in backend.pull("ns", 0)} == {"kept.md": False, "gone.md": True}


def test_pull_cursor_pages_through_everything_once(backend: PostgresBackend) -> None:
    for batch in range(3):
        backend.push([make_row(f"f{batch}-{i}.md") for i in range(4)])
    backend.push([make_row("x.md", ns="elsewhere")])
    backend.push([make_row("f0-0.md", version=2)])  # an update moves the file to the end
    rows = pull_all(backend, limit=5)
    assert len(rows) == 12 and len({r.path for r in rows}) == 12
    assert rows[-1].path == "f0-0.md" and rows[-1].version == 2
    stamps = [r.synced_at for r in rows]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert backend.pull("ns", stamps[-1]) == []
    assert [r.path for r in backend.pull("elsewhere", 0)] == ["x.md"]


def test_cursor_follows_commit_order(
    backend: PostgresBackend, server: PgServer, table: str
) -> None:
    """A write that starts later cannot get a smaller synced_at than one still uncommitted,
    so a puller that saw the later row can never skip the earlier one."""
    with psycopg.connect(server.dsn) as slow:  # not autocommit: holds the transaction open
        slow.execute(
            f"insert into {table} (namespace, path, content, sha256, updated_at, device_id, "
            "version, op_id) values ('ns', 'slow.md', '', 'x', 0, 'dev-z', 1, 'slow-op')"
        )
        done = threading.Event()
        errors: list[BaseException] = []

        def push_fast() -> None:
            try:
                backend.push([make_row("fast.md")])
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)
            done.set()

        worker = threading.Thread(target=push_fast)
        worker.start()
        assert not done.wait(0.3), "the second writer should wait for the first to commit"
        assert backend_pull_raw(server, table) == []  # nothing visible yet
        slow.commit()
        worker.join(5)
    assert not errors
    rows = backend_pull_raw(server, table)
    assert [r[0] for r in rows] == ["slow.md", "fast.md"]


def backend_pull_raw(server: PgServer, table: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        return conn.execute(f"select path, synced_at from {table} order by synced_at").fetchall()


def test_lock_wait_beyond_the_timeout_is_retryable(server: PgServer, table: str) -> None:
    impatient = PostgresBackend(server.dsn, table=table, timeout=0.3)
    impatient.init_schema()
    try:
        with psycopg.connect(server.dsn) as slow:
            slow.execute(
                f"insert into {table} (namespace, path, content, sha256, updated_at, "
                "device_id, version, op_id) values ('ns', 's.md', '', 'x', 0, 'd', 1, 'o')"
            )
            with pytest.raises(SyncRetryable, match="57014"):
                impatient.push([make_row("a.md")])
            slow.rollback()
        impatient.push([make_row("a.md")])
    finally:
        impatient.close()


# failures --------------------------------------------------------------------------------


def test_outage_is_retryable_and_the_backend_reconnects(
    backend: PostgresBackend, server: PgServer
) -> None:
    backend.push([make_row("before.md")])
    server.stop()
    try:
        with pytest.raises(SyncRetryable, match="Connection refused"):
            backend.push([make_row("during.md")])
        with pytest.raises(SyncRetryable):
            backend.pull("ns", 0)
        with pytest.raises(SyncRetryable):
            backend.check()
    finally:
        server.start()
    backend.push([make_row("during.md")])  # the outbox's retry, on a fresh connection
    assert [r.path for r in backend.pull("ns", 0)] == ["before.md", "during.md"]


def test_server_restart_between_calls_is_transparent(
    backend: PostgresBackend, server: PgServer
) -> None:
    backend.push([make_row("a.md")])
    server.stop()
    server.start()
    # The idle connection died with the old server; push retries once on a new one.
    backend.push([make_row("b.md")])
    assert len(backend.pull("ns", 0)) == 2


def test_missing_table_is_permanent_with_a_hint(server: PgServer) -> None:
    backend = PostgresBackend(server.dsn, table="never_created")
    try:
        with pytest.raises(SyncPermanent, match=r"\[42P01\]") as info:
            backend.push([make_row("a.md")])
        assert "memd sync init-schema" in info.value.hint
        with pytest.raises(SyncPermanent, match="42P01"):
            backend.pull("ns", 0)
        with pytest.raises(SyncPermanent, match="never_created is missing") as info:
            backend.check()
        assert "init-schema" in info.value.hint
    finally:
        backend.close()


def test_check_notices_missing_triggers(backend: PostgresBackend, table: str, db: Any) -> None:
    assert f"table {table}" in backend.check()
    db.execute(f"drop trigger {table}_after_write_trg on {table}")
    with pytest.raises(SyncPermanent, match="lacks its triggers"):
        backend.check()


@pytest.mark.parametrize(
    ("change", "text"),
    [
        ("user=postgres", "user=nobody_here"),
        ("dbname=postgres", "dbname=no_such_db"),
    ],
)
def test_bad_credentials_are_permanent(server: PgServer, change: str, text: str) -> None:
    backend = PostgresBackend(server.dsn.replace(change, text))
    try:
        with pytest.raises(SyncPermanent, match="does not exist") as info:
            backend.push([make_row("a.md")])
        assert "database URL" in info.value.hint
    finally:
        backend.close()


def test_password_never_appears_in_errors() -> None:
    from tests.pgserver import free_port

    secret = "s3cr3t-Pa55"
    backend = PostgresBackend(f"postgresql://memd:{secret}@127.0.0.1:{free_port()}/memd", timeout=1)
    with pytest.raises(SyncRetryable) as info:
        backend.check()
    assert secret not in str(info.value) and secret not in info.value.hint
    assert "connect failed" in str(info.value)


@pytest.mark.parametrize(
    "dsn",
    [
        "host=127.0.0.1 port",
        "host=127.0.0.1 port=abc",
        "host=127.0.0.1 bogus_option=1",
        "postgresql://memd:s3cr3t-Pa55@[bad",
    ],
)
def test_malformed_dsn_is_permanent_and_hides_the_password(dsn: str) -> None:
    with pytest.raises(SyncPermanent) as info:
        PostgresBackend(dsn).check()
    assert "database URL" in info.value.hint
    assert "s3cr3t" not in str(info.value)


@pytest.mark.parametrize(
    ("sqlstate", "message", "connecting", "operational", "expected", "hint"),
    [
        ("08006", "connection failure", False, True, SyncRetryable, ""),
        ("57P01", "terminating connection due to administrator command", False, True,
         SyncRetryable, ""),
        ("57014", "canceling statement due to statement timeout", False, True, SyncRetryable, ""),
        ("40P01", "deadlock detected", False, True, SyncRetryable, ""),
        ("53300", "too many connections", False, True, SyncRetryable, ""),
        ("55P03", "lock not available", False, True, SyncRetryable, ""),
        ("42P01", 'relation "memd_files" does not exist', False, False, SyncPermanent,
         "init-schema"),
        ("42703", 'column "synced_at" does not exist', False, False, SyncPermanent,
         "init-schema"),
        ("28P01", "password authentication failed", False, True, SyncPermanent, "password"),
        ("28000", "no pg_hba.conf entry", False, True, SyncPermanent, "password"),
        ("42501", "permission denied for table memd_files", False, False, SyncPermanent,
         "service_role"),
        ("23505", "duplicate key", False, False, SyncPermanent, ""),
        ("23514", "check constraint", False, False, SyncPermanent, ""),
        ("22P02", "invalid input syntax", False, False, SyncPermanent, ""),
        (None, "Connection refused", True, True, SyncRetryable, ""),
        (None, "could not translate host name", True, True, SyncRetryable, ""),
        (None, 'FATAL:  password authentication failed for user "x"', True, True,
         SyncPermanent, "database URL"),
        (None, "FATAL:  Tenant or user not found", True, True, SyncPermanent, "database URL"),
        (None, "the connection is closed", False, True, SyncRetryable, ""),
        (None, "PostgreSQL text fields cannot contain NUL (0x00) bytes", False, False,
         SyncPermanent, ""),
        (None, 'missing "=" after "port" in connection info string', True, False,
         SyncPermanent, "database URL"),
    ],
)  # fmt: skip
def test_classify_error(
    sqlstate: str | None,
    message: str,
    connecting: bool,
    operational: bool,
    expected: type[Exception],
    hint: str,
) -> None:
    kind, got_hint = classify_error(
        sqlstate, message, connecting=connecting, operational=operational
    )
    assert kind is expected
    assert hint in got_hint


# compare-and-swap --------------------------------------------------------------------------


def test_a_push_on_a_stale_base_is_refused_and_a_null_base_wins(
    backend: PostgresBackend, table: str, db: Any
) -> None:
    first = make_row("a.md", "# A\n\nfrom a\n", device="dev-a")
    assert backend.push([first]).applied == {first.op_id}
    theirs = make_row("a.md", "# A\n\nfrom b\n", device="dev-b", base=first.sha256)
    assert backend.push([theirs]).applied == {theirs.op_id}
    # dev-a still thinks the cloud holds its first version: refused, nothing written or logged.
    stale = make_row("a.md", "# A\n\nfrom a, again\n", device="dev-a", version=2, base=first.sha256)
    unseen = make_row("new.md", device="dev-a", base="")  # no stored row: nothing to compare
    result = backend.push([stale, unseen])
    assert result.refused == {stale.op_id} and result.applied == {unseen.op_id}
    assert backend.pull("ns", 0)[0].content == "# A\n\nfrom b\n"
    assert stale.op_id not in [e[0] for e in events(db, table)]
    # The same bytes as the stored row are no conflict; nor is a replay, which is dropped.
    same = make_row("a.md", "# A\n\nfrom b\n", device="dev-c", base="unrelated")
    assert backend.push([same]).applied == {same.op_id}
    replay = backend.push([unseen])
    assert replay.applied == frozenset() and replay.refused == frozenset()
    # A NULL base (an older memd, hand-written SQL): the last write wins, as before.
    old_client = make_row("a.md", "# A\n\nold client\n", device="dev-a", version=3)
    assert backend.push([old_client]).applied == {old_client.op_id}
    assert [r.content for r in backend.pull("ns", 0) if r.path == "a.md"] == ["# A\n\nold client\n"]
    # On the right base the write goes through; the base itself is never stored.
    fixed = make_row("a.md", "# A\n\nmerged\n", device="dev-b", version=2, base=old_client.sha256)
    assert backend.push([fixed]).applied == {fixed.op_id}
    assert db.execute(f"select count(*) from {table} where base_sha256 is not null").fetchone() == (
        0,
    )


def test_init_schema_upgrades_a_table_of_the_schema_before_compare_and_swap(
    server: PgServer, table: str, db: Any
) -> None:
    old = (Path(__file__).with_name("sql") / "schema_before_cas.sql").read_text()
    old = re.sub(r"\bmemd_files", table, re.sub(r"\bmemd_file_events", f"{table}_events", old))
    db.execute(old)
    db.execute(
        f"insert into {table} (namespace, path, content, sha256, updated_at, device_id, version,"
        " op_id) values ('ns', 'a.md', 'from b', 'sha-b', 1, 'dev-b', 1, 'op-old')"
    )
    backend = PostgresBackend(server.dsn, table=table, timeout=5)
    try:
        with pytest.raises(SyncPermanent, match="schema outdated") as info:
            backend.check()
        assert "memd sync init-schema" in info.value.hint
        with pytest.raises(SyncPermanent, match=r"\[42703\]") as info:
            backend.push([make_row("b.md", base="")])
        assert "outdated" in info.value.hint and "memd sync init-schema" in info.value.hint
        backend.init_schema()
        assert "table " + table in backend.check()
        (kept,) = backend.pull("ns", 0)  # the old row is still there and readable
        assert (kept.content, kept.op_id) == ("from b", "op-old")
        stale = make_row("a.md", "from a", device="dev-a", base="sha-a")
        assert backend.push([stale]).refused == {stale.op_id}
        ok = make_row("a.md", "from a", device="dev-a", base="sha-b")
        assert backend.push([ok]).applied == {ok.op_id}
        assert [e[0] for e in events(db, table)] == ["op-old", ok.op_id]
    finally:
        backend.close()
