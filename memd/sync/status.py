"""`memd sync status`: the queue, the errors and the next attempt of every sync target.

Read-only: built from the outbox tables on any read connection, so the CLI can answer without
a daemon.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from memd.api.messages import SyncSummary
from memd.core.settings import Settings
from memd.db import Connection
from memd.db.connection import has_table
from memd.sync import outbox
from memd.sync.rules import namespace_of

REFUSED_HINT = "fix the sync settings (or the cloud tables), then `memd sync --now --retry-parked`"
OFF_HINT = "set sync.backend (postgres or supabase) and its connection settings; see docs/sync.md"
_SHORT = (
    "state", "backend", "namespace", "device_id", "note", "hint", "pending", "parked",
    "oldest_pending_age_s", "last_success_at", "last_error", "last_error_at", "next_attempt_at",
)  # fmt: skip


def describe(
    conn: Connection,
    settings: Settings,
    *,
    device_id: str,
    fingerprint: str,
    next_run: str | None,
    now: float,
) -> dict[str, Any]:
    """The full status: the configured target's fields at the top, other targets in `targets`.

    `next_run` is the scheduler's next run of the job (ISO time) when a daemon runs it.
    """
    out: dict[str, Any] = {
        "state": "on" if settings.sync_backend else "off",
        "device_id": device_id or None,
    }
    if not has_table(conn, "sync_outbox"):
        out["note"] = "this index predates sync: start the daemon once to add its tables"
        return out
    active = ""
    if not settings.sync_backend:
        out["hint"] = OFF_HINT
    else:
        s = settings
        # Before the first write there is no device id yet (and so no queue either).
        namespace = namespace_of(s, device_id)
        active = f"{s.sync_backend}:{s.sync_table}:{namespace}"
        out.update(
            backend=s.sync_backend, table=s.sync_table, user_id=s.sync_user_id or None,
            namespace=namespace or None, target=active,
        )  # fmt: skip
    known = outbox.targets(conn)
    per_target = [_target(conn, t, now, detail=t == active) for t in known]
    if active and active not in known:
        per_target.insert(0, _target(conn, active, now, detail=True))
    current = next((t for t in per_target if t["target"] == active), None)
    if current is not None:
        refused = current.pop("refused_config") == fingerprint
        out.update({k: v for k, v in current.items() if k != "target"})
        if refused:
            out.update(state="refused", hint=REFUSED_HINT)
        scheduled = dt.datetime.fromisoformat(next_run).timestamp() if next_run else 0.0
        out["next_run_at"] = scheduled or None
        # A scheduled run inside a backoff only reports the wait: the real next attempt is
        # the later of the two.
        out["next_attempt_at"] = max(scheduled, current["retry_at"] or 0.0) or None
    for t in per_target:
        t.pop("refused_config", None)
    out["targets"] = [t for t in per_target if t["target"] != active]
    return out


def shorten(full: dict[str, Any]) -> SyncSummary:
    """The short form for the daemon's `status`: counts and times, no lists."""
    short = {k: full[k] for k in _SHORT if k in full}
    if "totals" in full:
        short["conflicts"] = full["totals"]["conflicts"]
        short["other_targets_queued"] = sum(t["pending"] + t["parked"] for t in full["targets"])
    return SyncSummary(**short)  # the values as they are: the full form's types


def _target(conn: Connection, target: str, now: float, *, detail: bool) -> dict[str, Any]:
    st = outbox.target_state(conn, target)
    q = outbox.queue_stats(conn, target, now)
    oldest = q.oldest_pending_at
    out: dict[str, Any] = {
        "target": target,
        "backend": st.backend or target.split(":", 1)[0],
        "pending": q.pending,
        "due": q.due,
        "parked": q.parked,
        "oldest_pending_at": oldest,
        "oldest_pending_age_s": round(now - oldest, 1) if oldest else None,
        "next_retry_at": q.next_retry_at,
        "retry_at": st.retry_at or None,
        "last_attempt_at": st.last_attempt_at or None,
        "last_success_at": st.last_success_at or None,
        "last_error": st.last_error or None,
        "last_error_at": st.last_error_at or None,
        "last_push_at": st.last_push_at or None,
        "last_pull_at": st.last_pull_at or None,
        "refused_config": st.refused_config,
        "totals": {"pushed": st.pushed, "pulled": st.pulled, "conflicts": st.conflicts},
    }
    if detail:
        out["parked_ops"] = [
            {"path": op.path, "op_id": op.op_id, "version": op.version, "attempts": op.attempts,
             "deleted": op.deleted, "parked_at": op.parked_at, "error": op.last_error}
            for op in outbox.parked(conn, target)
        ]  # fmt: skip
        out["conflicts"] = outbox.conflicts(conn, target)
    return out
