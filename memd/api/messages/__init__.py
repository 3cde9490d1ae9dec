"""The typed messages of the socket: one params type and one result type per method.

Shared by the daemon (which decodes params and encodes results with them), the client, the
CLI, MCP and the hooks. They are msgspec `Struct`s: decoding and validating a `context`
request costs ~4 µs and its ~20 KB answer ~67 µs, against ~21 µs and ~850 µs for
dataclasses checked by a generic validator (`bench/api_decode.py`, figures in
docs/benchmarks-log.md).

Conventions:

- Params ignore unknown fields (older and newer clients keep working) and a ``null`` param is
  the same as leaving it out (`decode_params`). A wrong type or range is `InvalidParams`
  (-32602) naming the field: ``param 'budget_tokens': expected int >= 0``.
- Result fields typed ``X | UnsetType`` are left out of the answer when unset: they are the
  provenance keys a section or hit carries only for some kinds.
- A result typed ``dict[str, Any]`` (`Document`) is an open document owned by a feature whose
  fields are listed in docs/protocol.md (imports).

The types live in one module per feature (`memory`, `daemon`, `conversations`, `transfer`,
`extraction`, `sync`, `history`; `status` gathers a part of each) over `base` (`Params`,
`Result`, `Signature`, the shared limits); `signatures` pairs them per method and `decode` turns JSON values into them and back. Callers
use the names below (`msg.ContextParams`, `msg.CONTEXT`, `msg.decode_params`), not the modules.
"""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from memd.api.messages.base import (
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    Budget,
    Document,
    Limit,
    NonNegative,
    NoParams,
    Params,
    Result,
    Scope,
    Signature,
    check_path,
    or_default,
)
from memd.api.messages.conversations import (
    ChatGPTImported,
    ForgetConversationParams,
    ForgetConversationResult,
    ImportParams,
    IngestParams,
    IngestResult,
    LogsImported,
    RecalledSession,
    RecalledTurn,
    RecallParams,
    RecallResult,
)
from memd.api.messages.daemon import (
    MAX_JOB_RUNS,
    JobRun,
    JobRunsParams,
    JobRunsResult,
    ReindexParams,
    ReindexResult,
    RunJobParams,
)
from memd.api.messages.decode import decode_params, decode_result, to_builtins, validation_message
from memd.api.messages.extraction import (
    ExtractionProgressParams,
    ExtractionProgressResult,
    MemoryPoint,
    RelationshipParams,
    RelationshipResult,
)
from memd.api.messages.history import (
    ChangeFile,
    ChangeInfo,
    FileDiff,
    HistoryParams,
    HistoryResult,
    ShowChangeParams,
    ShowChangeResult,
    UndoFile,
    UndoParams,
    UndoResult,
)
from memd.api.messages.memory import (
    AgentSeen,
    ContextParams,
    ContextResult,
    ContextSection,
    DroppedSection,
    EditItemParams,
    EditItemResult,
    ForgetParams,
    ForgetResult,
    MemoriesParams,
    MemoriesResult,
    MemoryItem,
    MoveTo,
    Provenance,
    RememberParams,
    RememberResult,
    RemovedItem,
    SearchParams,
    SearchResult,
    SetEnabledParams,
    SetEnabledResult,
    TierQuotas,
)
from memd.api.messages.signatures import (
    CONTEXT,
    EDIT_ITEM,
    EXPORT,
    EXTRACTION_PROGRESS,
    FORGET,
    FORGET_CONVERSATION,
    HISTORY,
    IMPORT,
    INGEST,
    JOB_RUNS,
    MEMORIES,
    RECALL,
    REINDEX,
    RELATIONSHIP,
    REMEMBER,
    RUN_JOB,
    SEARCH,
    SET_ENABLED,
    SHOW_CHANGE,
    SIGNATURES,
    STATUS,
    SYNC_INIT_SCHEMA,
    SYNC_NOW,
    SYNC_STATUS,
    UNDO,
)
from memd.api.messages.status import (
    AssistantSeen,
    BackfillProgress,
    DaemonStatus,
    FileProblem,
    HistoryStatus,
    IndexStatus,
    IndexUpdates,
    InstructionsFile,
    JobStatus,
    LLMRun,
    LLMStatus,
    LogSource,
    LogsStatus,
    QueryCache,
    RootStatus,
    SemanticStatus,
    StatusResult,
    VectorIndexFigures,
    WatcherStatus,
)
from memd.api.messages.sync import (
    ParkedOp,
    SyncConflict,
    SyncNowParams,
    SyncNowResult,
    SyncSchemaResult,
    SyncStatus,
    SyncSummary,
    SyncTotals,
    TargetStatus,
)
from memd.api.messages.transfer import (
    ExportParams,
    ExportResult,
    MergedFiles,
    MergedMemories,
    MergeResult,
)

__all__ = [
    "UNSET", "UnsetType",
    "Document", "MAX_PATH_BYTES", "MAX_NAME_BYTES", "NonNegative", "Limit", "Budget", "Scope",
    "Params", "Result", "Signature", "check_path", "or_default", "NoParams",
    "ContextParams", "Provenance", "ContextSection", "DroppedSection", "TierQuotas",
    "ContextResult", "SearchParams", "SearchResult", "RememberParams",
    "RememberResult", "ForgetParams", "MemoryItem", "RemovedItem", "ForgetResult",
    "MemoriesParams", "AgentSeen", "MemoriesResult", "MoveTo", "EditItemParams", "EditItemResult",
    "SetEnabledParams", "SetEnabledResult",
    "ReindexParams", "ReindexResult", "RunJobParams", "MAX_JOB_RUNS",
    "JobRunsParams", "JobRun", "JobRunsResult", "StatusResult", "DaemonStatus", "JobStatus", "RootStatus", "IndexStatus", "WatcherStatus", "FileProblem", "HistoryStatus", "InstructionsFile", "LLMRun", "LLMStatus", "LogSource", "AssistantSeen", "LogsStatus", "SemanticStatus", "BackfillProgress", "QueryCache", "VectorIndexFigures", "IndexUpdates",
    "IngestParams", "IngestResult", "LogsImported", "ChatGPTImported", "RecallParams", "RecalledTurn", "RecalledSession", "RecallResult", "ForgetConversationParams",
    "ForgetConversationResult", "ImportParams",
    "ExportParams", "ExportResult", "MergeResult", "MergedFiles", "MergedMemories",
    "RelationshipParams", "MemoryPoint", "RelationshipResult", "ExtractionProgressParams",
    "ExtractionProgressResult",
    "SyncNowParams", "SyncNowResult", "SyncSchemaResult", "SyncSummary", "SyncStatus",
    "TargetStatus", "SyncTotals", "ParkedOp", "SyncConflict",
    "HistoryParams", "ChangeFile", "ChangeInfo", "HistoryResult", "ShowChangeParams", "FileDiff",
    "ShowChangeResult", "UndoParams", "UndoFile", "UndoResult",
    "CONTEXT", "SEARCH", "REMEMBER", "FORGET", "MEMORIES", "SET_ENABLED", "EDIT_ITEM", "STATUS",
    "REINDEX", "RUN_JOB", "JOB_RUNS", "INGEST", "RECALL", "FORGET_CONVERSATION", "IMPORT",
    "EXPORT", "SYNC_STATUS", "SYNC_NOW", "SYNC_INIT_SCHEMA", "RELATIONSHIP",
    "EXTRACTION_PROGRESS", "HISTORY",
    "SHOW_CHANGE", "UNDO", "SIGNATURES",
    "decode_params", "decode_result", "to_builtins", "validation_message",
]  # fmt: skip
