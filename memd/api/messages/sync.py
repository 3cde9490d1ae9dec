"""Messages of `sync_now` (`sync_status` and `sync_init_schema` take no params and answer a
`Document`)."""

from __future__ import annotations

from memd.api.messages.base import Document, Params
from memd.api.messages.daemon import RunJobResult


class SyncNowParams(Params, frozen=True, kw_only=True):
    retry_parked: bool = False


class SyncNowResult(RunJobResult, kw_only=True):
    status: Document
