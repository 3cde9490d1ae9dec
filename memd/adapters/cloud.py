"""The cloud sync interface: one row type, one backend protocol, one SQL schema.

Two backends implement `CloudBackend`: `cloud_postgres.PostgresBackend` (a direct psycopg
connection to any Postgres, Supabase's database URL included) and
`cloud_supabase.SupabaseBackend` (supabase-py over the REST API). Both talk to the tables in
`sql/schema.sql`, whose trigger decides how replays, stale versions and cursors behave (see
the comment at the top of that file). Backends raise only `SyncRetryable` (try again later)
and `SyncPermanent` (park the operation and tell the user).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memd.errors import SyncError, SyncPermanent, SyncRetryable

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
)
PULL_COLUMNS = (*PUSH_COLUMNS, "synced_at")

# SQLSTATE classes worth retrying: connection exception, transaction rollback (deadlock,
# serialization), insufficient resources, operator intervention (admin shutdown, statement
# timeout, starting up), system error; plus lock_not_available.
_RETRYABLE_SQLSTATE_CLASSES = ("08", "40", "53", "57", "58")
_RETRYABLE_SQLSTATES = ("55P03",)

_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,40}")
INIT_SCHEMA_HINT = "create the tables with `memd sync init-schema`"


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


class CloudBackend(Protocol):
    """A place to push file changes to and pull other devices' changes from.

    Errors are `SyncRetryable` (network, server down, 5xx) or `SyncPermanent` (bad
    credentials, schema missing, row rejected); nothing else escapes on purpose.
    """

    name: str

    def push(self, rows: Sequence[SyncRow]) -> None:
        """Write rows (upsert on namespace+path). Idempotent per op_id; one transaction per
        batch where the backend allows it. Stale rows (a lower version from the device that
        wrote the stored one) are dropped by the server, silently."""
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
