"""The method signatures: each method's name with its params and result types, and the table
of them all by name (`SIGNATURES`)."""

from __future__ import annotations

from typing import Any

from memd.api.messages.base import Document, NoParams, Signature
from memd.api.messages.conversations import (
    ForgetConversationParams,
    ForgetConversationResult,
    ImportParams,
    IngestParams,
    IngestResult,
    RecallParams,
    RecallResult,
)
from memd.api.messages.daemon import (
    JobRunsParams,
    JobRunsResult,
    ReindexParams,
    ReindexResult,
    RunJobParams,
)
from memd.api.messages.extraction import (
    ExtractionProgressParams,
    ExtractionProgressResult,
    RelationshipParams,
    RelationshipResult,
)
from memd.api.messages.history import (
    HistoryParams,
    HistoryResult,
    ShowChangeParams,
    ShowChangeResult,
    UndoParams,
    UndoResult,
)
from memd.api.messages.memory import (
    ContextParams,
    ContextResult,
    EditItemParams,
    EditItemResult,
    ForgetParams,
    ForgetResult,
    MemoriesParams,
    MemoriesResult,
    RememberParams,
    RememberResult,
    SearchParams,
    SearchResult,
    SetEnabledParams,
    SetEnabledResult,
)
from memd.api.messages.status import StatusResult
from memd.api.messages.sync import SyncNowParams, SyncNowResult, SyncSchemaResult, SyncStatus
from memd.api.messages.transfer import ExportParams, ExportResult
from memd.core.models import JobResult

CONTEXT = Signature("context", ContextParams, ContextResult)
SEARCH = Signature("search", SearchParams, SearchResult)
REMEMBER = Signature("remember", RememberParams, RememberResult)
FORGET = Signature("forget", ForgetParams, ForgetResult)
MEMORIES = Signature("memories", MemoriesParams, MemoriesResult)
SET_ENABLED = Signature("set_enabled", SetEnabledParams, SetEnabledResult)
EDIT_ITEM = Signature("edit_item", EditItemParams, EditItemResult)
STATUS = Signature("status", NoParams, StatusResult)
REINDEX = Signature("reindex", ReindexParams, ReindexResult)
RUN_JOB = Signature("run_job", RunJobParams, JobResult)  # the job's own result
JOB_RUNS = Signature("job_runs", JobRunsParams, JobRunsResult)
INGEST = Signature("ingest", IngestParams, IngestResult)
RECALL = Signature("recall", RecallParams, RecallResult)
FORGET_CONVERSATION = Signature(
    "forget_conversation", ForgetConversationParams, ForgetConversationResult
)
IMPORT = Signature("import", ImportParams, Document)  # memd export or conversation logs
EXPORT = Signature("export", ExportParams, ExportResult)
SYNC_STATUS = Signature("sync_status", NoParams, SyncStatus)
SYNC_NOW = Signature("sync_now", SyncNowParams, SyncNowResult)
SYNC_INIT_SCHEMA = Signature("sync_init_schema", NoParams, SyncSchemaResult)
RELATIONSHIP = Signature("relationship", RelationshipParams, RelationshipResult)
EXTRACTION_PROGRESS = Signature(
    "extraction_progress", ExtractionProgressParams, ExtractionProgressResult
)
HISTORY = Signature("history", HistoryParams, HistoryResult)
SHOW_CHANGE = Signature("show_change", ShowChangeParams, ShowChangeResult)
UNDO = Signature("undo", UndoParams, UndoResult)

SIGNATURES: dict[str, Signature[Any, Any]] = {
    s.name: s
    for s in (
        CONTEXT, SEARCH, REMEMBER, FORGET, MEMORIES, SET_ENABLED, EDIT_ITEM, STATUS, REINDEX,
        RUN_JOB, JOB_RUNS, INGEST, RECALL, FORGET_CONVERSATION, IMPORT, EXPORT, SYNC_STATUS,
        SYNC_NOW, SYNC_INIT_SCHEMA, RELATIONSHIP, EXTRACTION_PROGRESS, HISTORY, SHOW_CHANGE, UNDO,
    )
}  # fmt: skip
