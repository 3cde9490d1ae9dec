"""The cloud sync interface: one row type, one backend protocol, one SQL schema.

Two backends implement `CloudBackend`: `postgres.PostgresBackend` (a direct psycopg
connection to any Postgres, Supabase's database URL included) and
`supabase.SupabaseBackend` (postgrest-py over the REST API). Each needs its client
library, installed with the matching extra (`memd[postgres]`, `memd[supabase]`) and imported
only when the backend is built; without it the backend raises `missing_extra`.
`make_backend` opens the configured one. Both talk to the tables in
`sql/schema.sql`, whose trigger decides how replays, stale versions, compare-and-swap and
cursors behave (see the comment at the top of that file). Backends raise only `SyncRetryable`
(try again later) and `SyncPermanent` (park the operation and tell the user).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memd.core.errors import SyncError, SyncPermanent, SyncRetryable
from memd.core.settings import Settings

DEFAULT_TABLE = "memd_files"
_EVENTS_TABLE = "memd_file_events"

# Every column a client writes; synced_at is left out on purpose because the server sets it.
PUSH_COLUMNS = (
    "namespace",
    "path",
    "content",
    "sha256",
    "updated_at",
    "deleted",
    "device_id",
    "version",
    "op_id",
    "base_sha256",
)
# base_sha256 is only an instruction to the trigger (which stores NULL): never pulled.
PULL_COLUMNS = (*PUSH_COLUMNS[:-1], "synced_at")
BASE_COLUMN = "base_sha256"

# SQLSTATE classes worth retrying: connection exception, transaction rollback (deadlock,
# serialization), insufficient resources, operator intervention (admin shutdown, statement
# timeout, starting up), system error; plus lock_not_available.
_RETRYABLE_SQLSTATE_CLASSES = ("08", "40", "53", "57", "58")
_RETRYABLE_SQLSTATES = ("55P03",)

_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,40}")
INIT_SCHEMA_HINT = "create the tables with `memd sync init-schema`"
OUTDATED_SCHEMA = "sync table {table} lacks the base_sha256 column (schema outdated)"


@dataclass(frozen=True, slots=True)
class SyncRow:
    """One file's state as stored in the cloud table (a tombstone when `deleted`)."""

    namespace: str  # user_id when set (shared across devices), else device_id
    path: str  # memory-tree relative path, posix
    content: str
    sha256: str
    updated_at: float  # epoch seconds, local change time
    deleted: bool
    device_id: str  # the device that made the change
    version: int  # per-(namespace, path) counter from the writing device
    op_id: str  # idempotency key of the outbox operation
    synced_at: float = 0.0  # assigned by the server on write (used as the pull cursor)
    # Pushed rows only: sha256 of the cloud row this change is based on ("" = none seen).
    # The server refuses the write if another device stored something else since; None
    # skips the check (last write wins).
    base_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class PushResult:
    """What the server did with the rows of one `push`, by op_id.

    Every row of the batch is in exactly one of three groups: `applied` (written now),
    `refused` (compare-and-swap: another device stored a different version after the one the
    row is based on; nothing was written, send it again after a pull), or neither: dropped as
    a replay or a stale version, because the server already has this operation or a newer one
    of the same device, so there is nothing left to send.
    """

    applied: frozenset[str] = frozenset()
    refused: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class StoredRow:
    """The part of a stored row that explains why a pushed row was not applied."""

    device_id: str
    sha256: str


class CloudBackend(Protocol):
    """A place to push file changes to and pull other devices' changes from.

    Errors are `SyncRetryable` (network, server down, 5xx) or `SyncPermanent` (bad
    credentials, schema missing, row rejected); nothing else escapes on purpose.
    """

    name: str

    def push(self, rows: Sequence[SyncRow]) -> PushResult:
        """Write rows (upsert on namespace+path); say which were applied and which refused.

        Idempotent per op_id; one transaction per batch where the backend allows it. Replays
        and stale rows (a lower version from the device that wrote the stored one) are
        dropped by the server; a row whose `base_sha256` no longer matches another device's
        stored row is refused (see `PushResult`)."""
        ...

    def pull(self, namespace: str, since: float, limit: int = 500) -> list[SyncRow]:
        """Rows of `namespace` with synced_at > since, oldest first, at most `limit`.
        Pass the last row's synced_at as the next `since`."""
        ...

    def init_schema(self) -> None:
        """Create or upgrade the tables and triggers (idempotent)."""
        ...

    def check(self) -> str:
        """Cheap reachability and schema check; returns a one-line description."""
        ...

    def close(self) -> None:
        """Release connections. The backend must not be used afterwards."""
        ...


def missing_extra(backend: str, exc: ImportError) -> SyncPermanent:
    """The error for a backend whose client library is not installed: names the extra."""
    what = exc.name or str(exc)
    return SyncPermanent(
        f"sync.backend is {backend} but its client library is not installed ({what}: {exc})",
        hint=f"install it into memd's environment: pip install 'memd[{backend}]', restart the"
        " daemon, then `memd sync --now --retry-parked`",
    )


def make_backend(settings: Settings, timeout: float | None = None) -> CloudBackend:
    """The configured backend, its requests bounded by `timeout` seconds (`sync.timeout_s` by
    default); SyncPermanent when its settings are incomplete."""
    timeout = settings.sync_timeout_s if timeout is None else timeout
    kind = settings.sync_backend
    if kind == "postgres":
        if not settings.sync_dsn:
            raise SyncPermanent(
                "sync.backend is postgres but sync.dsn is empty",
                hint="set sync.dsn (MEMD_SYNC_DSN) to a postgresql:// URL or libpq DSN",
            )
        from memd.sync.postgres import PostgresBackend

        return PostgresBackend(settings.sync_dsn, settings.sync_table, timeout)
    if kind == "supabase":
        if not (settings.sync_url and settings.sync_key):
            raise SyncPermanent(
                "sync.backend is supabase but the project URL or key is missing",
                hint="set sync.url and sync.key (SUPABASE_URL, SUPABASE_KEY)",
            )
        from memd.sync.supabase import SupabaseBackend

        return SupabaseBackend(settings.sync_url, settings.sync_key, settings.sync_table, timeout)
    raise SyncPermanent(
        f"unknown sync.backend {kind!r}", hint='use "postgres", "supabase", or "" to turn sync off'
    )


def check_table_name(table: str) -> str:
    """Return `table` if it is a plain lower-case SQL identifier, else raise SyncPermanent."""
    if not _TABLE_NAME.fullmatch(table):
        raise SyncPermanent(
            f"invalid sync table name {table!r}",
            hint="use lower-case letters, digits and underscores, starting with a letter",
        )
    return table


def events_table(table: str) -> str:
    """The event-log table that goes with `table` (memd_file_events for the default)."""
    return _EVENTS_TABLE if table == DEFAULT_TABLE else f"{table}_events"


def schema_path() -> Path:
    """Path of the shipped SQL schema (for the Supabase SQL editor)."""
    return Path(__file__).with_name("sql") / "schema.sql"


def schema_sql(table: str = DEFAULT_TABLE) -> str:
    """The schema script, with its objects renamed for `table` when it is not the default."""
    text = schema_path().read_text(encoding="utf-8")
    check_table_name(table)
    if table == DEFAULT_TABLE:
        return text
    text = re.sub(r"\bmemd_file_events", events_table(table), text)
    return re.sub(r"\bmemd_files", table, text)


def sort_skipped(
    rows: Sequence[SyncRow],
    applied: set[str],
    stored: Mapping[tuple[str, str], StoredRow],
    replayed: set[str],
) -> PushResult:
    """Tell refused rows from dropped ones among the rows the server did not apply.

    `stored` holds the rows now stored for the skipped rows' (namespace, path), read after
    the write; `replayed` the skipped op_ids found in the event log. The test is the
    trigger's compare-and-swap rule. A row that was both stale and would fail the rule (the
    outbox never sends an older version after a newer one, so only in theory) counts as
    refused: it is sent again after a pull, then dropped, which is safe.
    """
    refused = set()
    for row in rows:
        if row.op_id in applied or row.op_id in replayed or row.base_sha256 is None:
            continue
        found = stored.get((row.namespace, row.path))
        if (
            found is not None
            and found.device_id != row.device_id
            and found.sha256 not in (row.base_sha256, row.sha256)
        ):
            refused.add(row.op_id)
    return PushResult(applied=frozenset(applied), refused=frozenset(refused))


def classify_sqlstate(sqlstate: str, *, schema_hint: str) -> tuple[type[SyncError], str]:
    """Retryable or permanent for a PostgreSQL error code, with a hint for the user.

    `schema_hint` tells the user how to create the tables with this backend.
    """
    if sqlstate.startswith(_RETRYABLE_SQLSTATE_CLASSES) or sqlstate in _RETRYABLE_SQLSTATES:
        return SyncRetryable, ""
    if sqlstate in ("42P01", "42703", "42883"):  # undefined table / column / function
        return SyncPermanent, f"sync schema missing or outdated: {schema_hint}"
    if sqlstate.startswith("28"):
        return SyncPermanent, "check the user and password of the sync connection"
    if sqlstate == "3D000":
        return SyncPermanent, "check the database name in the database URL"
    if sqlstate == "42501":
        return SyncPermanent, (
            "permission denied on the sync tables (row level security is on: use the "
            "table owner or the Supabase service_role / secret key)"
        )
    return SyncPermanent, ""
