"""Messages of `sync_now` and `sync_init_schema` (`sync_status` takes no params and answers a
`Document`)."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

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
