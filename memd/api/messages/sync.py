"""Messages of `sync_now` and `sync_init_schema` (`sync_status` takes no params and answers a
`Document`)."""

from __future__ import annotations

from msgspec import UNSET, Struct, UnsetType

from memd.api.messages.base import Document, Params, Result
from memd.core.models import JobResult


class SyncNowParams(Params, frozen=True, kw_only=True):
    retry_parked: bool = False


class SyncNowResult(JobResult, frozen=True, kw_only=True):
    """The sync run's result (`run_job`'s) and the sync status after it."""

    status: Document


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
