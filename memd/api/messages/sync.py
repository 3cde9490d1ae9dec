"""Messages of `sync_now` (`sync_status` and `sync_init_schema` take no params and answer a
`Document`)."""

from __future__ import annotations

from memd.api.messages.base import Document, Params
from memd.core.models import JobResult


class SyncNowParams(Params, frozen=True, kw_only=True):
    retry_parked: bool = False


class SyncNowResult(JobResult, frozen=True, kw_only=True):
    """The sync run's result (`run_job`'s) and the sync status after it."""

    status: Document
