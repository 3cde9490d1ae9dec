"""`memd sync status`: the queue, the errors and the next attempt of every sync target.

Read-only: built from the outbox tables on any read connection, so the CLI can answer without
a daemon.
"""

from __future__ import annotations

import datetime as dt

from memd.api.messages import (
    ParkedOp,
    SyncStatus,
    SyncSummary,
    SyncTotals,
    TargetStatus,
    UnsetType,
    or_default,
)
from memd.core.settings import Settings
from memd.db import Connection
from memd.db.connection import has_table
from memd.sync import outbox
from memd.sync.rules import namespace_of

REFUSED_HINT = "fix the sync settings (or the cloud tables), then `memd sync --now --retry-parked`"
OFF_HINT = "set sync.backend (postgres or supabase) and its connection settings; see docs/sync.md"


def describe(
    conn: Connection,
    settings: Settings,
    *,
    device_id: str,
    fingerprint: str,
    next_run: str | None,
    now: float,
) -> SyncStatus:
    """The full status: the configured target's fields at the top, other targets in `targets`.

    `next_run` is the scheduler's next run of the job (ISO time) when a daemon runs it.
    """
    out = SyncStatus(state="on" if settings.sync_backend else "off", device_id=device_id or None)
    if not has_table(conn, "sync_outbox"):
        out.note = "this index predates sync: start the daemon once to add its tables"
        return out
    active = ""
    if not settings.sync_backend:
        out.hint = OFF_HINT
    else:
        s = settings
        # Before the first write there is no device id yet (and so no queue either).
        namespace = namespace_of(s, device_id)
        active = f"{s.sync_backend}:{s.sync_table}:{namespace}"
        out.backend, out.table, out.target = s.sync_backend, s.sync_table, active
        out.user_id, out.namespace = s.sync_user_id or None, namespace or None
    others: list[TargetStatus] = []
    for target in outbox.targets(conn):
        if target != active:
            others.append(TargetStatus(target=target))
            _fill(conn, others[-1], target, now)
    if active:
        _fill_active(conn, out, active, fingerprint=fingerprint, next_run=next_run, now=now)
    out.targets = others
    return out


def shorten(full: SyncStatus) -> SyncSummary:
    """The short form for the daemon's `status`: counts and times, no lists."""
    short = SyncSummary(
        state=or_default(full.state, "off"),
        backend=full.backend, namespace=full.namespace, device_id=full.device_id,
        note=full.note, hint=full.hint, pending=full.pending, parked=full.parked,
        oldest_pending_age_s=full.oldest_pending_age_s, last_success_at=full.last_success_at,
        last_error=full.last_error, last_error_at=full.last_error_at,
        next_attempt_at=full.next_attempt_at,
    )  # fmt: skip
    if not isinstance(full.totals, UnsetType):
        short.conflicts = full.totals.conflicts
        short.other_targets_queued = sum(
            or_default(t.pending, 0) + or_default(t.parked, 0) for t in or_default(full.targets, [])
        )
    return short


def _fill_active(
    conn: Connection,
    out: SyncStatus,
    target: str,
    *,
    fingerprint: str,
    next_run: str | None,
    now: float,
) -> None:
    """The configured target's figures, its parked ops and conflicts, and its next attempt."""
    st = _fill(conn, out, target, now)
    out.parked_ops = [
        ParkedOp(path=op.path, op_id=op.op_id, version=op.version, attempts=op.attempts,
                 deleted=op.deleted, parked_at=op.parked_at, error=op.last_error)
        for op in outbox.parked(conn, target)
    ]  # fmt: skip
    out.conflicts = outbox.conflicts(conn, target)
    if st.refused_config == fingerprint:
        out.state, out.hint = "refused", REFUSED_HINT
    scheduled = dt.datetime.fromisoformat(next_run).timestamp() if next_run else 0.0
    out.next_run_at = scheduled or None
    # A scheduled run inside a backoff only reports the wait: the real next attempt is the
    # later of the two.
    out.next_attempt_at = max(scheduled, st.retry_at or 0.0) or None


def _fill(conn: Connection, entry: TargetStatus, target: str, now: float) -> outbox.TargetState:
    """Set a target's queue, times and totals on `entry`; its stored state is returned."""
    st = outbox.target_state(conn, target)
    q = outbox.queue_stats(conn, target, now)
    oldest = q.oldest_pending_at
    entry.backend = st.backend or target.split(":", 1)[0]
    entry.pending, entry.due, entry.parked = q.pending, q.due, q.parked
    entry.oldest_pending_at = oldest
    entry.oldest_pending_age_s = round(now - oldest, 1) if oldest else None
    entry.next_retry_at = q.next_retry_at
    entry.retry_at = st.retry_at or None
    entry.last_attempt_at = st.last_attempt_at or None
    entry.last_success_at = st.last_success_at or None
    entry.last_error = st.last_error or None
    entry.last_error_at = st.last_error_at or None
    entry.last_push_at = st.last_push_at or None
    entry.last_pull_at = st.last_pull_at or None
    entry.totals = SyncTotals(pushed=st.pushed, pulled=st.pulled, conflicts=st.conflicts)
    return st
