"""Messages of `sync_status`, `sync_now` and `sync_init_schema`, and sync's part of `status`."""

from __future__ import annotations

from msgspec import UNSET, Struct, UnsetType

from memd.api.messages.base import Params, Result
from memd.core.models import JobResult


class SyncNowParams(Params, frozen=True, kw_only=True):
    retry_parked: bool = False


class SyncTotals(Struct, kw_only=True):
    """What a target has pushed, pulled and met as conflicts, ever."""

    pushed: int
    pulled: int
    conflicts: int


class ParkedOp(Struct, kw_only=True):
    """A queued write the cloud kept refusing, parked until `--retry-parked`."""

    path: str
    op_id: str
    version: int
    attempts: int
    deleted: bool
    parked_at: float
    error: str


class SyncConflict(Struct, kw_only=True):
    """A conflict met on a pull (the local file was kept): the cloud's version is in `copy`
    (None: there was nothing to copy)."""

    path: str
    kind: str
    copy: str | None
    remote_device: str
    remote_version: int
    at: float


class TargetStatus(Result, kw_only=True):
    """A sync target's queue, times and totals (an entry of `targets`), and the fields only the
    configured target has in the full status: the state, this device, the settings, its parked
    ops and conflicts and the hint. Each field is there only when the status has it; the keys
    come in this order."""

    state: str | UnsetType = UNSET  # on, off or refused
    device_id: str | None | UnsetType = UNSET
    note: str | UnsetType = UNSET  # the index predates sync
    backend: str | UnsetType = UNSET
    table: str | UnsetType = UNSET
    user_id: str | None | UnsetType = UNSET
    namespace: str | None | UnsetType = UNSET
    target: str | UnsetType = UNSET  # backend:table:namespace
    pending: int | UnsetType = UNSET
    due: int | UnsetType = UNSET
    parked: int | UnsetType = UNSET
    oldest_pending_at: float | None | UnsetType = UNSET
    oldest_pending_age_s: float | None | UnsetType = UNSET
    next_retry_at: float | None | UnsetType = UNSET
    retry_at: float | None | UnsetType = UNSET
    last_attempt_at: float | None | UnsetType = UNSET
    last_success_at: float | None | UnsetType = UNSET
    last_error: str | None | UnsetType = UNSET
    last_error_at: float | None | UnsetType = UNSET
    last_push_at: float | None | UnsetType = UNSET
    last_pull_at: float | None | UnsetType = UNSET
    totals: SyncTotals | UnsetType = UNSET
    parked_ops: list[ParkedOp] | UnsetType = UNSET
    conflicts: list[SyncConflict] | UnsetType = UNSET
    hint: str | UnsetType = UNSET  # what to do when sync is off or refused


class SyncStatus(TargetStatus, kw_only=True):
    """`sync_status`: the configured target's status at the top, then when the scheduler runs
    the job next, the next attempt (the later of that and a backoff) and the other targets."""

    next_run_at: float | None | UnsetType = UNSET
    next_attempt_at: float | None | UnsetType = UNSET
    targets: list[TargetStatus] | UnsetType = UNSET


class SyncNowResult(JobResult, frozen=True, kw_only=True):
    """The sync run's result (`run_job`'s) and the sync status after it."""

    status: SyncStatus


class SyncSchemaResult(Result, kw_only=True):
    """`sync_init_schema`: whether the cloud tables were created here (postgres; for supabase
    `message` says where to paste the schema), the schema file, and the ops waiting for the
    tables that were queued again (`unparked`, only when they were created)."""

    backend: str
    created: bool
    schema_path: str
    message: str
    unparked: int | UnsetType = UNSET


class SyncSummary(Struct, kw_only=True):
    """Cloud sync in `status` (`memd sync status` has the details): on, off or refused, the
    target, the queue's counts and its times (each only when the full status has it), the
    conflicts counted and what other targets still hold."""

    state: str
    backend: str | UnsetType = UNSET
    namespace: str | None | UnsetType = UNSET
    device_id: str | None | UnsetType = UNSET
    note: str | UnsetType = UNSET
    hint: str | UnsetType = UNSET
    pending: int | UnsetType = UNSET
    parked: int | UnsetType = UNSET
    oldest_pending_age_s: float | None | UnsetType = UNSET
    last_success_at: float | None | UnsetType = UNSET
    last_error: str | None | UnsetType = UNSET
    last_error_at: float | None | UnsetType = UNSET
    next_attempt_at: float | None | UnsetType = UNSET
    conflicts: int | UnsetType = UNSET
    other_targets_queued: int | UnsetType = UNSET
