"""The sync feature's storage: the outbox, per-file and per-target sync state, conflicts.

Every SQL statement of sync lives here (the tables of migration m020_sync_outbox, and the two
reads it makes of others' tables: indexed files not synced yet, session summaries to publish).

Every local change of a synced file becomes one *operation* row, written in the same
transaction as the index change that caused it. An operation carries its idempotency key
(`op_id`, a fresh uuid per operation), the per-file `version`, the redacted content and its
hash. A file has at most one queued operation per target: a newer change replaces the queued
one (coalescing) with a new op_id and a higher version, so what is sent is always the file's
latest state and versions only grow.

A *target* is one backend + table + namespace (``postgres:memd_files:user:alice``); the queue,
the file states and the pull cursor are kept per target, so switching backends neither loses
nor mixes anything.

`sync_files` remembers, per target and path, the local bytes known to equal the cloud copy
(`base_sha`): a file whose hash still equals it is "unchanged since the last sync". While a
pulled version is being written to disk its hash sits in `incoming_sha`, so the indexer's hook
can tell memd's own write from a user's edit even across a crash. `remote_sha` is the sha256 of
the cloud row last pulled for the path: the base a push names for the server's
compare-and-swap.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from memd.api.messages import SyncConflict

TOMBSTONE = "-"  # base/incoming sha of a file that is deleted on both sides

_OP_COLUMNS = (
    "seq, target, path, op_id, version, deleted, content, sha256, local_sha, updated_at,"
    " enqueued_at, attempts, next_at, last_error, last_attempt_at, parked_at"
)


@dataclass(frozen=True, slots=True)
class Op:
    """One queued operation: the state of one file to write to the cloud."""

    seq: int
    target: str
    path: str
    op_id: str
    version: int
    deleted: bool
    content: str
    sha256: str  # of `content` (what the cloud stores)
    local_sha: str  # of the local file bytes it was made from; TOMBSTONE when deleted
    updated_at: float
    enqueued_at: float
    attempts: int = 0
    next_at: float = 0.0
    last_error: str = ""
    last_attempt_at: float = 0.0
    parked_at: float = 0.0

    @property
    def parked(self) -> bool:
        return self.parked_at > 0


@dataclass(frozen=True, slots=True)
class FileState:
    """What sync knows about one path of one target."""

    path: str
    version: int  # highest version this device assigned or saw for the path
    base_sha: str  # local bytes equal to the cloud copy ("" = never synced)
    incoming_sha: str  # a pulled version being written ("" = none)
    remote_device: str
    remote_sha: str  # sha256 of the cloud row last pulled ("" = none): the push's base


def _op(row: sqlite3.Row | tuple[Any, ...]) -> Op:
    r = tuple(row)
    return Op(
        seq=r[0], target=r[1], path=r[2], op_id=r[3], version=r[4], deleted=bool(r[5]),
        content=r[6], sha256=r[7], local_sha=r[8], updated_at=r[9], enqueued_at=r[10],
        attempts=r[11], next_at=r[12], last_error=r[13], last_attempt_at=r[14], parked_at=r[15],
    )  # fmt: skip


# -- operations -----------------------------------------------------------------------------
def enqueue(
    conn: sqlite3.Connection,
    target: str,
    path: str,
    *,
    op_id: str,
    content: str,
    sha256: str,
    local_sha: str,
    deleted: bool,
    updated_at: float,
    now: float | None = None,
) -> Op:
    """Queue the new state of `path`, replacing any operation still queued for it.

    The version is one more than any version this device assigned or saw for the path, so the
    server's per-device order check keeps the newest state even if an older, replaced
    operation was already in flight.
    """
    now = time.time() if now is None else now
    version = bump_version(conn, target, path)
    conn.execute("DELETE FROM sync_outbox WHERE target = ? AND path = ?", (target, path))
    cur = conn.execute(
        "INSERT INTO sync_outbox(target, path, op_id, version, deleted, content, sha256,"
        " local_sha, updated_at, enqueued_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (target, path, op_id, version, int(deleted), content, sha256, local_sha, updated_at, now),
    )
    return Op(
        int(cur.lastrowid or 0), target, path, op_id, version, deleted, content, sha256,
        local_sha, updated_at, now,
    )  # fmt: skip


def queued(conn: sqlite3.Connection, target: str, path: str) -> Op | None:
    """The operation queued for `path` (pending or parked), if any."""
    row = conn.execute(
        f"SELECT {_OP_COLUMNS} FROM sync_outbox WHERE target = ? AND path = ?", (target, path)
    ).fetchone()
    return _op(row) if row else None


def drop(conn: sqlite3.Connection, seqs: Iterable[int]) -> int:
    """Remove operations that will never be sent (a file created and deleted between runs)."""
    cur = conn.executemany("DELETE FROM sync_outbox WHERE seq = ?", [(s,) for s in seqs])
    return cur.rowcount


def due(conn: sqlite3.Connection, target: str, now: float, limit: int) -> list[Op]:
    """Operations ready to send, in enqueue order (parked and backing-off ones left out)."""
    return [
        _op(r)
        for r in conn.execute(
            f"SELECT {_OP_COLUMNS} FROM sync_outbox WHERE target = ? AND parked_at = 0"
            " AND next_at <= ? ORDER BY seq LIMIT ?",
            (target, now, limit),
        )
    ]


def mark_attempt(conn: sqlite3.Connection, seqs: Sequence[int], now: float) -> None:
    """Count a try before the network call: an op with attempts > 0 may have reached the cloud."""
    conn.executemany(
        "UPDATE sync_outbox SET attempts = attempts + 1, last_attempt_at = ? WHERE seq = ?",
        [(now, s) for s in seqs],
    )


def unmark_attempt(conn: sqlite3.Connection, seqs: Sequence[int]) -> None:
    """Take back the try counted for operations the server provably did not apply."""
    conn.executemany(
        "UPDATE sync_outbox SET attempts = max(attempts - 1, 0) WHERE seq = ?",
        [(s,) for s in seqs],
    )


def complete(conn: sqlite3.Connection, ops: Sequence[Op]) -> None:
    """The cloud has these operations: remove them and record each file's synced bytes.

    An operation replaced while it was in flight is already gone; its file's base still moves
    to what was sent, because that is what the cloud now holds.
    """
    conn.executemany("DELETE FROM sync_outbox WHERE seq = ?", [(op.seq,) for op in ops])
    for op in ops:
        set_base(conn, op.target, op.path, op.local_sha)


def retry_later(conn: sqlite3.Connection, delays: dict[int, float], error: str, now: float) -> None:
    """Back off each operation (seq → seconds from now) after a retryable failure."""
    conn.executemany(
        "UPDATE sync_outbox SET next_at = ?, last_error = ? WHERE seq = ?",
        [(now + d, error, seq) for seq, d in delays.items()],
    )


def park(
    conn: sqlite3.Connection, seqs: Sequence[int], error: str, config: str, now: float
) -> None:
    """Stop retrying these operations until the user acts; keep them with the error."""
    conn.executemany(
        "UPDATE sync_outbox SET parked_at = ?, parked_config = ?, last_error = ? WHERE seq = ?",
        [(now, config, error, s) for s in seqs],
    )


def park_all(conn: sqlite3.Connection, target: str, error: str, config: str, now: float) -> int:
    """Park every queued operation of a target (a credentials or schema problem)."""
    cur = conn.execute(
        "UPDATE sync_outbox SET parked_at = ?, parked_config = ?, last_error = ?"
        " WHERE target = ? AND parked_at = 0",
        (now, config, error, target),
    )
    return cur.rowcount


def unpark(conn: sqlite3.Connection, target: str, *, unless_config: str | None = None) -> int:
    """Queue parked operations again (all, or those parked under another configuration)."""
    sql = "UPDATE sync_outbox SET parked_at = 0, next_at = 0 WHERE target = ? AND parked_at > 0"
    params: tuple[Any, ...] = (target,)
    if unless_config is not None:
        sql += " AND parked_config != ?"
        params = (target, unless_config)
    return conn.execute(sql, params).rowcount


def make_due(conn: sqlite3.Connection, target: str) -> int:
    """Cancel the backoff of every pending operation (`memd sync --now`)."""
    return conn.execute(
        "UPDATE sync_outbox SET next_at = 0 WHERE target = ? AND parked_at = 0 AND next_at > 0",
        (target,),
    ).rowcount


def parked(conn: sqlite3.Connection, target: str, limit: int = 50) -> list[Op]:
    """Parked operations of a target, oldest first."""
    return [
        _op(r)
        for r in conn.execute(
            f"SELECT {_OP_COLUMNS} FROM sync_outbox WHERE target = ? AND parked_at > 0"
            " ORDER BY seq LIMIT ?",
            (target, limit),
        )
    ]


def ops(conn: sqlite3.Connection, target: str) -> list[Op]:
    """Every queued operation of a target, in enqueue order."""
    return [
        _op(r)
        for r in conn.execute(
            f"SELECT {_OP_COLUMNS} FROM sync_outbox WHERE target = ? ORDER BY seq", (target,)
        )
    ]


@dataclass(frozen=True, slots=True)
class QueueStats:
    """One target's queue: pending, due now, parked, the oldest pending's enqueue time and the
    earliest retry still ahead (None: none), the most attempts of a pending op."""

    pending: int
    due: int
    parked: int
    oldest_pending_at: float | None
    next_retry_at: float | None
    max_attempts: int


def queue_stats(conn: sqlite3.Connection, target: str, now: float) -> QueueStats:
    """Depth, due, parked, oldest pending and earliest retry of one target's queue."""
    r = conn.execute(
        "SELECT count(*) FILTER (WHERE parked_at = 0),"
        " count(*) FILTER (WHERE parked_at = 0 AND next_at <= ?),"
        " count(*) FILTER (WHERE parked_at > 0),"
        " min(enqueued_at) FILTER (WHERE parked_at = 0),"
        " min(next_at) FILTER (WHERE parked_at = 0 AND next_at > ?),"
        " max(attempts) FILTER (WHERE parked_at = 0)"
        " FROM sync_outbox WHERE target = ?",
        (now, now, target),
    ).fetchone()
    return QueueStats(pending=r[0], due=r[1], parked=r[2], oldest_pending_at=r[3],
                      next_retry_at=r[4], max_attempts=r[5] or 0)  # fmt: skip


# -- per-file state -----------------------------------------------------------------------
def file_state(conn: sqlite3.Connection, target: str, path: str) -> FileState | None:
    row = conn.execute(
        "SELECT path, version, base_sha, incoming_sha, remote_device, remote_sha"
        " FROM sync_files WHERE target = ? AND path = ?",
        (target, path),
    ).fetchone()
    return FileState(*tuple(row)) if row else None


def push_base(conn: sqlite3.Connection, target: str, path: str) -> str:
    """The cloud state a push of `path` is based on ("" when this device never saw a row).

    Pull records every row it reads, this device's own included, so after a pull this is
    the row the cloud held; a version another device stores later is not it, and the server
    refuses the push.
    """
    row = conn.execute(
        "SELECT remote_sha FROM sync_files WHERE target = ? AND path = ?", (target, path)
    ).fetchone()
    return str(row[0]) if row else ""


def bump_version(conn: sqlite3.Connection, target: str, path: str, seen: int = 0) -> int:
    """The next version for a local change of `path` (also above any version `seen`)."""
    conn.execute(
        "INSERT INTO sync_files(target, path, version) VALUES (?, ?, ?)"
        " ON CONFLICT(target, path) DO UPDATE SET version = max(version, excluded.version - 1) + 1",
        (target, path, seen + 1),
    )
    return int(
        conn.execute(
            "SELECT version FROM sync_files WHERE target = ? AND path = ?", (target, path)
        ).fetchone()[0]
    )


def set_base(conn: sqlite3.Connection, target: str, path: str, sha: str) -> None:
    conn.execute(
        "INSERT INTO sync_files(target, path, base_sha) VALUES (?, ?, ?)"
        " ON CONFLICT(target, path) DO UPDATE SET base_sha = excluded.base_sha",
        (target, path, sha),
    )


def set_incoming(conn: sqlite3.Connection, target: str, path: str, sha: str) -> None:
    """Announce that memd is about to write (or delete, TOMBSTONE) this version of `path`."""
    conn.execute(
        "INSERT INTO sync_files(target, path, incoming_sha) VALUES (?, ?, ?)"
        " ON CONFLICT(target, path) DO UPDATE SET incoming_sha = excluded.incoming_sha",
        (target, path, sha),
    )


def settle(
    conn: sqlite3.Connection,
    target: str,
    path: str,
    *,
    base_sha: str | None,
    remote_version: int,
    remote_device: str,
    remote_sha: str,
) -> None:
    """After a pulled row was handled: record what the cloud holds (and the new base)."""
    conn.execute(
        "INSERT INTO sync_files(target, path, version, base_sha, incoming_sha, remote_device,"
        " remote_sha) VALUES (?1, ?2, ?3, coalesce(?4, ''), '', ?5, ?6)"
        " ON CONFLICT(target, path) DO UPDATE SET version = max(version, excluded.version),"
        " base_sha = coalesce(?4, base_sha), incoming_sha = '', remote_device = excluded.remote_device,"
        " remote_sha = excluded.remote_sha",
        (target, path, remote_version, base_sha, remote_device, remote_sha),
    )


def unsynced_files(conn: sqlite3.Connection, target: str, root: str) -> list[tuple[str, str]]:
    """(rel, indexed sha) of indexed files of `root` whose bytes differ from the synced ones
    and that have no queued operation: changes made while sync was off or not yet wired."""
    return [
        (r[0], r[1])
        for r in conn.execute(
            "SELECT f.rel, f.sha256 FROM files f"
            " LEFT JOIN sync_files s ON s.target = ?1 AND s.path = f.rel"
            " WHERE f.root = ?2 AND f.sha256 != '' AND (s.base_sha IS NULL OR s.base_sha != f.sha256)"
            " AND NOT EXISTS (SELECT 1 FROM sync_outbox o WHERE o.target = ?1 AND o.path = f.rel)"
            " ORDER BY f.rel",
            (target, root),
        )
    ]


def vanished_files(conn: sqlite3.Connection, target: str, root: str) -> list[str]:
    """Paths synced as present whose file is no longer indexed and have no queued operation."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT s.path FROM sync_files s WHERE s.target = ?1 AND s.base_sha NOT IN ('', ?3)"
            " AND NOT EXISTS (SELECT 1 FROM files f WHERE f.root = ?2 AND f.rel = s.path)"
            " AND NOT EXISTS (SELECT 1 FROM sync_outbox o WHERE o.target = ?1 AND o.path = s.path)"
            " ORDER BY s.path",
            (target, root, TOMBSTONE),
        )
    ]


# -- per-target state ---------------------------------------------------------------------


@dataclass(slots=True)
class TargetState:
    """The stored state of a sync target (a row of `sync_targets`): its cursors, its last
    attempt, success and error, its backoff, its totals and the configuration it refused."""

    backend: str = ""
    pull_cursor: float = 0
    summaries_cursor: float = 0
    last_attempt_at: float = 0
    last_success_at: float = 0
    last_error: str = ""
    last_error_at: float = 0
    last_push_at: float = 0
    last_pull_at: float = 0
    failures: int = 0
    retry_at: float = 0
    pushed: int = 0
    pulled: int = 0
    conflicts: int = 0
    refused_config: str = ""


_TARGET_FIELDS = tuple(f.name for f in fields(TargetState))  # the columns, in this order


def target_state(conn: sqlite3.Connection, target: str) -> TargetState:
    """The stored state of a target (zeros and empty strings when never used)."""
    row = conn.execute(
        f"SELECT {', '.join(_TARGET_FIELDS)} FROM sync_targets WHERE target = ?", (target,)
    ).fetchone()
    return TargetState() if row is None else TargetState(*tuple(row))


def update_target(conn: sqlite3.Connection, target: str, backend: str, **fields: Any) -> None:
    """Set fields of a target's state; `add_<counter>=n` adds to pushed/pulled/conflicts."""
    conn.execute(
        "INSERT INTO sync_targets(target, backend) VALUES (?, ?) ON CONFLICT(target) DO NOTHING",
        (target, backend),
    )
    sets, params = [], []
    for name, value in fields.items():
        if name.startswith("add_"):
            col = name[4:]
            if col not in ("pushed", "pulled", "conflicts"):
                raise ValueError(f"not a counter: {col}")
            sets.append(f"{col} = {col} + ?")
        elif name in _TARGET_FIELDS:
            sets.append(f"{name} = ?")
        else:
            raise ValueError(f"unknown sync target field {name}")
        params.append(value)
    if sets:
        conn.execute(
            f"UPDATE sync_targets SET {', '.join(sets)} WHERE target = ?", (*params, target)
        )


def targets(conn: sqlite3.Connection) -> list[str]:
    """Every target that has state or queued operations."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT target FROM sync_targets UNION SELECT DISTINCT target FROM sync_outbox"
            " ORDER BY 1"
        )
    ]


# -- conflicts ------------------------------------------------------------------------------
def conflict_recorded(
    conn: sqlite3.Connection, target: str, path: str, remote_version: int, remote_device: str
) -> bool:
    """Whether this conflict (the same remote version of the path) is recorded already."""
    return (
        conn.execute(
            "SELECT 1 FROM sync_conflicts WHERE target = ? AND path = ? AND remote_version = ?"
            " AND remote_device = ?",
            (target, path, remote_version, remote_device),
        ).fetchone()
        is not None
    )


def add_conflict(
    conn: sqlite3.Connection,
    target: str,
    path: str,
    *,
    kind: str,
    copy_path: str,
    remote_device: str,
    remote_version: int,
    at: float,
) -> None:
    conn.execute(
        "INSERT INTO sync_conflicts(target, path, kind, copy_path, remote_device, remote_version, at)"
        " VALUES (?,?,?,?,?,?,?)",
        (target, path, kind, copy_path, remote_device, remote_version, at),
    )


def conflicts(conn: sqlite3.Connection, target: str, limit: int = 20) -> list[SyncConflict]:
    """The most recent conflicts of a target, newest first."""
    return [
        SyncConflict(
            path=r[0],
            kind=r[1],
            copy=r[2] or None,
            remote_device=r[3],
            remote_version=r[4],
            at=r[5],
        )
        for r in conn.execute(
            "SELECT path, kind, copy_path, remote_device, remote_version, at FROM sync_conflicts"
            " WHERE target = ? ORDER BY id DESC LIMIT ?",
            (target, limit),
        )
    ]


# -- session summaries (synced as documents) -------------------------------------------------
@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A session's summary as sync publishes it (read from the conversation tables)."""

    session_id: str
    title: str
    source: str
    agent_id: str
    project: str
    started_at: float
    summary: str
    summary_kind: str
    summary_at: float


def summaries_since(conn: sqlite3.Connection, cursor: float, limit: int) -> list[SessionSummary]:
    """Sessions whose summary was written after `cursor`, oldest summary first."""
    return [
        SessionSummary(*tuple(r))
        for r in conn.execute(
            "SELECT session_id, title, source, agent_id, project, started_at, summary,"
            " summary_kind, summary_at FROM sessions WHERE summary != '' AND summary_at > ?"
            " ORDER BY summary_at LIMIT ?",
            (cursor, limit),
        ).fetchall()
    ]
