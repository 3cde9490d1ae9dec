"""The `postgres` sync backend: a direct psycopg 3 connection to any PostgreSQL.

Works with a self-hosted server or Supabase's database URL (direct or pooled: server-side
prepared statements are off, and timeouts are set per transaction, not as startup options,
so transaction poolers accept it). One lazily opened connection, reopened after a drop.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memd.core.errors import SyncError, SyncPermanent, SyncRetryable
from memd.sync.backend import (
    BASE_COLUMN,
    DEFAULT_TABLE,
    INIT_SCHEMA_HINT,
    OUTDATED_SCHEMA,
    PULL_COLUMNS,
    PUSH_COLUMNS,
    PushResult,
    StoredRow,
    SyncRow,
    check_table_name,
    classify_sqlstate,
    events_table,
    missing_extra,
    schema_sql,
    sort_skipped,
)

T = TypeVar("T")

# libpq reports connection-time failures without a SQLSTATE; these texts mean retrying
# cannot help until the user fixes the DSN.
_PERMANENT_CONNECT_TEXTS = (
    "authentication failed",  # password, SCRAM, peer
    "no pg_hba.conf entry",
    "does not exist",  # role or database
    "tenant or user not found",  # Supabase pooler
    "invalid",  # connection option, sslmode, port number...
    "password is required",
    "no password supplied",
)

_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")

_CONNECT_DEFAULTS = {
    "application_name": "memd",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
}


def classify_error(
    sqlstate: str | None, message: str, *, connecting: bool = False, operational: bool = False
) -> tuple[type[SyncError], str]:
    """Decide retryable vs permanent for a database error, and the hint to show.

    `operational` is true for psycopg.OperationalError/InterfaceError (network, server gone).
    """
    if sqlstate:
        return classify_sqlstate(sqlstate, schema_hint=INIT_SCHEMA_HINT)
    lowered = message.lower()
    if connecting and (
        not operational or any(text in lowered for text in _PERMANENT_CONNECT_TEXTS)
    ):
        return SyncPermanent, "check the database URL (user, password, database name)"
    if operational:
        return SyncRetryable, ""
    return SyncPermanent, ""


class PostgresBackend:
    """Sync rows to `table` in a PostgreSQL database reached by a libpq DSN or URL.

    Thread-safe (calls are serialised on one connection). Raises only SyncRetryable and
    SyncPermanent; the password never appears in their messages.
    """

    name = "postgres"

    def __init__(self, dsn: str, table: str = DEFAULT_TABLE, timeout: float = 10) -> None:
        try:
            import psycopg
            from psycopg import sql
        except ImportError as exc:
            raise missing_extra("postgres", exc) from exc

        self._psycopg = psycopg
        self._dsn = dsn
        self._table = check_table_name(table)
        self._timeout = timeout
        self._conn: Any = None
        self._lock = threading.Lock()
        self._secret = _password_of(dsn)
        ident = sql.Identifier(table)
        assignments = sql.SQL(", ").join(
            sql.SQL("{0} = excluded.{0}").format(sql.Identifier(col))
            for col in PUSH_COLUMNS
            if col not in ("namespace", "path")
        )
        self._upsert_sql = sql.SQL(
            "insert into {table} ({cols}) values ({params}) "
            "on conflict (namespace, path) do update set {assignments} returning op_id"
        ).format(
            table=ident,
            cols=sql.SQL(", ").join(map(sql.Identifier, PUSH_COLUMNS)),
            params=sql.SQL(", ").join(sql.Placeholder() * len(PUSH_COLUMNS)),
            assignments=assignments,
        )
        self._pull_sql = sql.SQL(
            "select {cols} from {table} where namespace = %s and synced_at > %s "
            "order by synced_at, path limit %s"
        ).format(table=ident, cols=sql.SQL(", ").join(map(sql.Identifier, PULL_COLUMNS)))
        self._stored_sql = sql.SQL(
            "select f.namespace, f.path, f.device_id, f.sha256 from {table} f "
            "join unnest(%s::text[], %s::text[]) as k(namespace, path) using (namespace, path)"
        ).format(table=ident)
        self._replayed_sql = sql.SQL("select op_id from {events} where op_id = any(%s)").format(
            events=sql.Identifier(events_table(table))
        )

    def push(self, rows: Sequence[SyncRow]) -> PushResult:
        """Upsert all rows in one transaction: either every row is applied (or skipped by the
        trigger as a replay, a stale version or by compare-and-swap) or none is."""
        if not rows:
            return PushResult()
        for row in rows:
            if not math.isfinite(row.updated_at):
                raise SyncPermanent(f"row rejected: updated_at is not finite (op {row.op_id})")
        params = [tuple(getattr(row, col) for col in PUSH_COLUMNS) for row in rows]

        def write(conn: Any) -> PushResult:
            with conn.transaction():
                self._set_local_timeout(conn)
                with conn.cursor() as cur:
                    cur.executemany(self._upsert_sql, params, returning=True)
                    applied = {str(r[0]) for _ in cur.results() for r in cur.fetchall()}
                    skipped = [row for row in rows if row.op_id not in applied]
                    if not skipped:
                        return PushResult(applied=frozenset(applied))
                    # Read inside the transaction: the namespace lock taken by the trigger is
                    # still held, so this is the state that made the trigger skip the rows.
                    cur.execute(
                        self._stored_sql,
                        ([r.namespace for r in skipped], [r.path for r in skipped]),
                    )
                    stored = {(ns, path): StoredRow(dev, sha) for ns, path, dev, sha in cur}
                    cur.execute(self._replayed_sql, ([r.op_id for r in skipped],))
                    replayed = {str(r[0]) for r in cur}
            return sort_skipped(rows, applied, stored, replayed)

        return self._run("push", write)

    def pull(self, namespace: str, since: float, limit: int = 500) -> list[SyncRow]:
        """Rows of `namespace` with synced_at > since, in synced_at order."""

        def read(conn: Any) -> list[SyncRow]:
            with conn.transaction():
                self._set_local_timeout(conn)
                records = conn.execute(self._pull_sql, (namespace, since, limit)).fetchall()
            return [_row_from_record(record) for record in records]

        return self._run("pull", read)

    def init_schema(self) -> None:
        """Create or upgrade the tables, indexes and triggers of schema.sql (idempotent)."""
        script = schema_sql(self._table)

        def create(conn: Any) -> None:
            with conn.transaction():
                # Two daemons initialising at once would race on `create ... if not exists`.
                conn.execute("select pg_advisory_xact_lock(hashtext('memd:init-schema'))")
                conn.execute(script)

        self._run("init-schema", create)

    def check(self) -> str:
        """Connect and verify the table and its triggers exist; describe the target."""
        table, events = self._table, events_table(self._table)

        def probe(conn: Any) -> str:
            with conn.transaction():
                self._set_local_timeout(conn)
                found = conn.execute(
                    "select to_regclass(%s)::text, to_regclass(%s)::text, "
                    "current_setting('server_version'), current_database(), current_user",
                    (table, events),
                ).fetchone()
                rel, events_rel, version, database, user = found
                if rel is None or events_rel is None:
                    missing = table if rel is None else events
                    raise SyncPermanent(
                        f"sync table {missing} is missing in database {database}",
                        hint=INIT_SCHEMA_HINT,
                    )
                triggers = conn.execute(
                    "select count(*) from pg_trigger where tgrelid = to_regclass(%s) "
                    "and tgname in (%s, %s)",
                    (table, f"{table}_before_write_trg", f"{table}_after_write_trg"),
                ).fetchone()[0]
                if triggers != 2:
                    raise SyncPermanent(
                        f"sync table {table} lacks its triggers", hint=INIT_SCHEMA_HINT
                    )
                has_base = conn.execute(
                    "select count(*) from pg_attribute where attrelid = to_regclass(%s) "
                    "and attname = %s and not attisdropped",
                    (table, BASE_COLUMN),
                ).fetchone()[0]
                if not has_base:
                    raise SyncPermanent(OUTDATED_SCHEMA.format(table=table), hint=INIT_SCHEMA_HINT)
            info = conn.info
            where = f"{info.host}:{info.port}/{database}"
            return f"postgres {version.split()[0]} at {where} as {user}, table {table}"

        return self._run("check", probe)

    def close(self) -> None:
        """Close the connection (the backend reconnects if used again)."""
        with self._lock:
            self._drop_connection()

    def _run(self, action: str, body: Callable[[Any], T]) -> T:
        psycopg = self._psycopg
        with self._lock:
            reused = self._conn is not None
            conn = self._connect()
            try:
                return body(conn)
            except psycopg.Error as exc:
                if not (reused and self._connection_lost(exc)):
                    raise self._translate(action, exc) from exc
            # The connection died while idle (server restart, pooler timeout). Every action is
            # idempotent, so one retry on a fresh connection is safe.
            conn = self._connect()
            try:
                return body(conn)
            except psycopg.Error as exc:
                raise self._translate(action, exc) from exc

    def _connect(self) -> Any:
        psycopg = self._psycopg
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        self._drop_connection()
        try:
            params = psycopg.conninfo.conninfo_to_dict(self._dsn)
            for key, value in _CONNECT_DEFAULTS.items():
                params.setdefault(key, value)
            params.setdefault("connect_timeout", str(max(2, math.ceil(self._timeout))))
            self._conn = psycopg.connect(autocommit=True, prepare_threshold=None, **params)
        except psycopg.Error as exc:
            raise self._translate("connect", exc, connecting=True) from exc
        return self._conn

    def _set_local_timeout(self, conn: Any) -> None:
        conn.execute(
            "select set_config('statement_timeout', %s, true)",
            (f"{max(1, int(self._timeout * 1000))}ms",),
        )

    def _connection_lost(self, exc: Exception) -> bool:
        psycopg = self._psycopg
        broken = self._conn is None or self._conn.closed or self._conn.broken
        return broken and isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except self._psycopg.Error:
                pass  # already broken; nothing left to release

    def _translate(self, action: str, exc: Exception, *, connecting: bool = False) -> SyncError:
        psycopg = self._psycopg
        operational = isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
        if operational:
            self._drop_connection()
        sqlstate = getattr(exc, "sqlstate", None)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = _URL_PASSWORD.sub(r"\1***@", message.replace(self._dsn, "<database URL>"))
        if len(self._secret) >= 4:  # shorter ones would garble ordinary words
            message = message.replace(self._secret, "***")
        kind, hint = classify_error(
            sqlstate, message, connecting=connecting, operational=operational
        )
        state = f" [{sqlstate}]" if sqlstate else ""
        if sqlstate == "42P01":
            message = f"sync table {self._table} is missing ({message})"
        return kind(f"postgres {action} failed{state}: {message}", hint=hint)


def _password_of(dsn: str) -> str:
    import psycopg

    try:
        return str(psycopg.conninfo.conninfo_to_dict(dsn).get("password") or "")
    except psycopg.Error:
        return ""


def _row_from_record(record: Sequence[Any]) -> SyncRow:
    values = dict(zip(PULL_COLUMNS, record, strict=True))
    return SyncRow(
        namespace=str(values["namespace"]),
        path=str(values["path"]),
        content=str(values["content"]),
        sha256=str(values["sha256"]),
        updated_at=float(values["updated_at"]),
        deleted=bool(values["deleted"]),
        device_id=str(values["device_id"]),
        version=int(values["version"]),
        op_id=str(values["op_id"]),
        synced_at=float(values["synced_at"]),
    )
