"""The typed messages of the socket: one params type and one result type per method.

Shared by the daemon (which decodes params and encodes results with them), the client, the
CLI, MCP and the hooks. They are msgspec `Struct`s: decoding and validating a `context`
request costs ~4 µs and its ~20 KB answer ~67 µs, against ~21 µs and ~850 µs for
dataclasses checked by a generic validator (`bench/api_decode.py`, figures in
docs/benchmarks.md).

Conventions:

- Params ignore unknown fields (older and newer clients keep working) and a ``null`` param is
  the same as leaving it out (`decode_params`). A wrong type or range is `InvalidParams`
  (-32602) naming the field: ``param 'budget_tokens': expected int >= 0``.
- Result fields typed ``X | UnsetType`` are left out of the answer when unset: they are the
  provenance keys a section or hit carries only for some kinds.
- A result typed ``dict[str, Any]`` (`Document`) is an open document owned by a feature whose
  fields are listed in docs/protocol.md (sync status, imports).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

import msgspec
from msgspec import UNSET as UNSET
from msgspec import Meta, Struct
from msgspec import UnsetType as UnsetType

from memd.core.errors import InvalidParams
from memd.core.models import MAX_TS

Document = dict[str, Any]
# Past these a path cannot name a file on Linux or macOS (PATH_MAX, NAME_MAX): refuse it as
# invalid params rather than let the OS fail inside a handler.
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
NonNegative = Annotated[int, Meta(ge=0)]
Limit = Annotated[int, Meta(ge=1, le=1000)]
Budget = Annotated[int, Meta(ge=0, le=200_000)]
Scope = Literal["user", "project", "agent"]


class Params(Struct, frozen=True, kw_only=True):
    """Base of every params type."""


class Result(Struct, kw_only=True):
    """Base of every result type."""


P = TypeVar("P", bound=Params)
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Signature(Generic[P, R]):
    """A method's name with its params and result types (what client and server agree on)."""

    name: str
    params: type[P]
    result: type[R]


# -- memory ---------------------------------------------------------------------------------
def check_path(value: str, field: str) -> None:
    """Refuse a path param no file can have: a NUL byte, or over PATH_MAX / NAME_MAX."""
    if "\x00" in value:
        raise InvalidParams(f"param {field!r}: a path cannot hold a NUL byte")
    raw = value.encode("utf-8", "surrogateescape")
    if len(raw) > MAX_PATH_BYTES:
        raise InvalidParams(f"param {field!r}: path longer than {MAX_PATH_BYTES} bytes")
    if any(len(part) > MAX_NAME_BYTES for part in raw.split(b"/")):
        raise InvalidParams(f"param {field!r}: a path name is longer than {MAX_NAME_BYTES} bytes")


class ContextParams(Params, frozen=True, kw_only=True):
    query: str = ""
    budget_tokens: Budget | UnsetType = UNSET  # default: `context.budget_tokens` of the daemon
    agent_id: str = ""
    project: str = ""  # a workspace path or a project slug
    session_id: str = ""
    relevant_only: bool = False

    def __post_init__(self) -> None:
        check_path(self.project, "project")


class Provenance(Struct, kw_only=True):
    """Where a context section comes from: a Markdown section, or a conversation."""

    path: str | UnsetType = UNSET
    rel: str | UnsetType = UNSET
    heading: str | UnsetType = UNSET
    start_line: int | UnsetType = UNSET
    end_line: int | UnsetType = UNSET
    truncated: bool | UnsetType = UNSET
    lines_kept: int | UnsetType = UNSET
    lines_total: int | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    source_path: str | UnsetType = UNSET
    turn_ids: list[str] | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    # With recall by meaning on: the rankings that found it ("fts", "fts:bridged", "vector").
    found_by: list[str] | UnsetType = UNSET


class ContextSection(Provenance, kw_only=True):
    tier: str
    source: str
    title: str
    tokens: int
    score: float
    reason: str


class DroppedSection(Provenance, kw_only=True):
    tier: str
    source: str
    title: str
    tokens: int
    reason: str


class TierQuotas(Struct, kw_only=True):
    """Tokens each tier may use in one `context` call by its own share of the budget."""

    user: int
    project: int
    conversation: int


class ContextResult(Result, kw_only=True):
    enabled: bool
    text: str
    tokens: int
    budget: int
    sections: list[ContextSection]
    dropped: list[DroppedSection]
    project: str | UnsetType = UNSET  # the resolved project slug; unset when memory is off
    # Always set by this daemon (all 0 when memory is off); unset in answers of older daemons.
    quotas: TierQuotas | UnsetType = UNSET


class SearchParams(Params, frozen=True, kw_only=True):
    query: str = ""
    limit: Limit = 10
    scope: Literal["all", "memory", "conversations"] = "all"
    # Filters of conversation turns.
    session_id: str = ""
    project: str = ""
    agent_id: str = ""


class SearchHit(Struct, kw_only=True):
    kind: str  # "section" | "turn"
    path: str
    heading: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    text: str = ""
    file_kind: str = ""
    session_id: str = ""
    turn_id: str = ""
    ts: float = 0.0
    session_title: str = ""
    role: str = ""
    archived: bool = False
    # With recall by meaning on: the rankings that found it ("fts", "fts:bridged", "vector").
    found_by: list[str] | UnsetType = UNSET


class SearchResult(Result, kw_only=True):
    query: str
    hits: list[SearchHit]


class RememberParams(Params, frozen=True, kw_only=True):
    text: str = ""
    scope: Scope = "user"
    project: str = ""
    agent_id: str = ""
    type: str = ""
    # A client's id for this request: a retry with the same id gets the first answer back
    # (within one daemon run) instead of remembering again.
    request_id: Annotated[str, Meta(max_length=200)] = ""

    def __post_init__(self) -> None:
        check_path(self.project, "project")


class RememberResult(Result, kw_only=True):
    id: str
    path: str
    line: int
    scope: str
    text: str
    existed: bool = False  # the same item was there already: its hits were bumped instead


class ForgetParams(Params, frozen=True, kw_only=True):
    id: str = ""
    query: str = ""
    confirm: bool = False


class MemoryItem(Struct, kw_only=True):
    id: str
    text: str
    path: str
    rel: str
    line: int
    type: str
    scope: str
    owner: str
    meta: dict[str, str]


class RemovedItem(Struct, kw_only=True):
    id: str
    text: str
    path: str


class ForgetResult(Result, kw_only=True):
    removed: list[RemovedItem]
    candidates: list[MemoryItem]


class MemoriesParams(Params, frozen=True, kw_only=True):
    scope: Literal["", "user", "project", "agent"] = ""
    all: bool = False  # include superseded items
    limit: NonNegative = 0  # at most this many items (0: all of them)
    offset: NonNegative = 0  # skip this many first (paging: offset += limit)


class AgentSeen(Struct, kw_only=True):
    """An agent seen in the conversations: its interactions, and the familiarity and trust last
    written to its relationship file (null before the first)."""

    agent_id: str
    subagent: bool  # only Claude Code sub-agent runs: the user never spoke to it
    sessions: int
    turns: int
    first_at: float
    last_at: float
    familiarity: int | None
    trust: int | None


class MemoriesResult(Result, kw_only=True):
    enabled: bool
    items: list[MemoryItem]
    agents: list[AgentSeen] | UnsetType = UNSET  # with scope "agent": every agent seen
    total: int = 0  # items in effect before `offset` and `limit`
    offset: int = 0


class MoveTo(Struct, frozen=True, kw_only=True):
    path: str  # a Markdown file relative to the memory root, e.g. "topics/vue.md"
    section: str = "Notes"

    def __post_init__(self) -> None:
        check_path(self.path, "move_to.path")


class EditItemParams(Params, frozen=True, kw_only=True):
    """`edit_item`: change one item in place; fields left out stay as they are."""

    id: str = ""
    expect_text: str | UnsetType = UNSET  # the text the caller showed: refuse if it changed
    text: str | UnsetType = UNSET
    importance: Annotated[int, Meta(ge=1, le=10)] | UnsetType = UNSET
    pinned: bool | UnsetType = UNSET
    expires: str | UnsetType = UNSET  # YYYY-MM-DD, or "" to clear
    move_to: MoveTo | UnsetType = UNSET


class EditItemResult(Result, kw_only=True):
    id: str
    path: str
    line: int
    text: str
    meta: dict[str, str]
    moved_from: str  # the file it left, or "" when it stayed


class SetEnabledParams(Params, frozen=True, kw_only=True):
    enabled: bool


class SetEnabledResult(Result, kw_only=True):
    enabled: bool


# -- the daemon's own -----------------------------------------------------------------------
class NoParams(Params, frozen=True, kw_only=True):
    pass


class ReindexParams(Params, frozen=True, kw_only=True):
    full: bool = False


class ReindexResult(Result, kw_only=True):
    full: bool = False
    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    problems: int = 0
    bytes: int = 0
    seconds: float = 0.0


class RunJobParams(Params, frozen=True, kw_only=True):
    name: str = ""


class RunJobResult(Result, kw_only=True):
    job: str
    outcome: str
    message: str
    counts: dict[str, Any]


MAX_JOB_RUNS = 200  # the daemon keeps at most this many runs per job


class JobRunsParams(Params, frozen=True, kw_only=True):
    name: str = ""  # one job's runs; every job's by default
    limit: Annotated[int, Meta(ge=1, le=MAX_JOB_RUNS)] = 50


class JobRun(Struct, kw_only=True):
    """One recorded run of a scheduled job (times in epoch seconds)."""

    id: int
    job: str
    started: float
    finished: float
    seconds: float
    outcome: str
    message: str
    counts: dict[str, Any]  # as the job reported them (`run` names an extraction or archival run)


class JobRunsResult(Result, kw_only=True):
    runs: list[JobRun]  # newest first


class StatusResult(Result, kw_only=True):
    """`status`: the daemon's part, then one part per feature (`index`, `logs`, `sync`, …)."""

    version: str
    daemon: dict[str, Any]
    socket: str
    jobs: dict[str, dict[str, Any]] = {}
    enabled: bool | UnsetType = UNSET
    memory_root: str | UnsetType = UNSET
    roots: list[dict[str, Any]] | UnsetType = UNSET
    index: dict[str, Any] | UnsetType = UNSET
    watcher: dict[str, Any] | UnsetType = UNSET
    problems: list[dict[str, Any]] | UnsetType = UNSET
    logs: dict[str, Any] | UnsetType = UNSET
    llm: dict[str, Any] | UnsetType = UNSET
    sync: dict[str, Any] | UnsetType = UNSET
    semantic: dict[str, Any] | UnsetType = UNSET
    # A damaged index moved aside and rebuilt: {"at", "moved_to", "reason"}.
    recovered: dict[str, Any] | UnsetType = UNSET
    # Why the daemon runs read-only (answers queries, refuses writes), e.g. a full disk.
    read_only: str | UnsetType = UNSET
    agents: list[AgentSeen] | UnsetType = UNSET
    # Whether changes of the memory tree are being recorded (`HistoryStatus`).
    history: dict[str, Any] | UnsetType = UNSET


# -- conversations --------------------------------------------------------------------------
class IngestParams(Params, frozen=True, kw_only=True):
    """Turns in the generic JSONL shape: a list in `turns`, or one turn as the params itself.

    The turns' fields are checked by the generic JSONL parser, which names the turn and field.
    """

    turns: list[Any] | UnsetType = UNSET
    # The same request sent again (a retry after a timeout) stores nothing twice: turns without
    # an id get one from the request id and their place in the request.
    request_id: str | UnsetType = UNSET
    session_id: Any = UNSET
    role: Any = UNSET
    content: Any = UNSET
    ts: Any = UNSET
    id: Any = UNSET
    agent_id: Any = UNSET
    project: Any = UNSET
    title: Any = UNSET
    name: Any = UNSET


class IngestResult(Result, kw_only=True):
    enabled: bool
    accepted: int
    added: int
    updated: int | UnsetType = UNSET  # not counted when memory is off
    sessions: list[str]


class RecallParams(Params, frozen=True, kw_only=True):
    mode: Literal["", "sessions", "topic", "session", "within"] = ""
    query: str = ""
    session_id: str = ""
    limit: Limit = 20
    per_session: Annotated[int, Meta(ge=1, le=100)] = 5
    project: str = ""
    agent_id: str = ""


class RecallResult(Result, kw_only=True):
    mode: str
    query: str
    session_id: str
    terms: list[str]
    sessions: list[dict[str, Any]]
    text: str


class ForgetConversationParams(Params, frozen=True, kw_only=True):
    """A session (its id, or the short id the journal prints) or some of its turns."""

    session_id: str = ""
    turn_ids: list[str] = []
    confirm: bool = False  # without it, only say what would be removed


class ForgetConversationResult(Result, kw_only=True):
    session_id: str
    title: str
    turn_ids: list[str]
    whole_session: bool
    removed: bool
    journal_entries: int = 0


class ImportParams(Params, frozen=True, kw_only=True):
    path: str = ""
    format: Literal["", "memd", "chatgpt", "claude-code", "jsonl", "openai"] = ""

    def __post_init__(self) -> None:
        check_path(self.path, "path")


# -- transfer -------------------------------------------------------------------------------
class ExportParams(Params, frozen=True, kw_only=True):
    path: str = ""
    tree: bool = True
    overwrite: bool = False  # replace an existing file (never one in memd's own folders)

    def __post_init__(self) -> None:
        check_path(self.path, "path")


class ExportResult(Result, kw_only=True):
    path: str
    sessions: int
    chats: int
    memories: int
    files: int
    bytes: int
    seconds: float


# -- agents ---------------------------------------------------------------------------------
class RelationshipParams(Params, frozen=True, kw_only=True):
    agent_id: str = ""


class MemoryPoint(Struct, kw_only=True):
    """A memory point: how the user wants this agent to work with them (a live list item)."""

    text: str
    id: str
    line: int
    meta: dict[str, str]


class RelationshipResult(Result, kw_only=True):
    """An agent's relationship: counts and familiarity computed from the conversations now;
    trust, mood and memory points as its `relationship.md` says them (`trust` null when the
    file has no trust value memd can read, `trust_text` then says what it has)."""

    agent_id: str
    path: str
    exists: bool
    subagent: bool
    sessions: int
    turns: int
    first_at: float | None
    last_at: float | None
    familiarity: int
    trust: int | None
    trust_text: str
    mood: str
    mood_note: str
    points: list[MemoryPoint]


# -- sync -----------------------------------------------------------------------------------
class SyncNowParams(Params, frozen=True, kw_only=True):
    retry_parked: bool = False


class SyncNowResult(RunJobResult, kw_only=True):
    status: Document


# -- history --------------------------------------------------------------------------------
class HistoryParams(Params, frozen=True, kw_only=True):
    path: str = ""  # a file or folder of the memory tree (absolute, or relative to it)
    since: str | float = ""  # epoch seconds, an ISO date/time, or git's "2 days ago"
    limit: Limit = 50

    def __post_init__(self) -> None:
        check_path(self.path, "path")
        if not isinstance(self.since, str) and not 0 <= self.since <= MAX_TS:
            raise InvalidParams("param 'since': epoch seconds between 1970 and the year 9999")


class ChangeFile(Struct, kw_only=True):
    path: str  # relative to the memory tree
    status: str  # A (added), M (modified), D (deleted)


class ChangeInfo(Struct, kw_only=True):
    """One recorded change of the memory tree."""

    id: str  # what `show_change` and `undo` take
    commit: str
    at: float
    cause: str  # remember, forget, extract, supersede, archive, import, sync, journal, edit, …
    detail: str
    summary: str
    author: str
    files: list[ChangeFile]
    undoes: str = ""  # for an undo: the ids it reversed
    run: str = ""  # the job run that made it (`undo` takes `run`)


class HistoryResult(Result, kw_only=True):
    changes: list[ChangeInfo]  # newest first


class ShowChangeParams(Params, frozen=True, kw_only=True):
    change: str = ""


class FileDiff(Struct, kw_only=True):
    path: str
    status: str
    diff: str  # unified diff, as recorded (secrets redacted)
    binary: bool = False


class ShowChangeResult(Result, kw_only=True):
    change: ChangeInfo
    diffs: list[FileDiff]


class UndoParams(Params, frozen=True, kw_only=True):
    """`undo`: one change, several, or every change of a job run (exactly one of them)."""

    change: str = ""
    changes: list[str] = []
    run: str = ""
    dry_run: bool = False


class UndoFile(Struct, kw_only=True):
    path: str
    rel: str
    delete: bool
    create: bool


class UndoResult(Result, kw_only=True):
    changes: list[ChangeInfo]  # what is (or would be) undone, newest first
    files: list[UndoFile]
    warnings: list[str]
    dry_run: bool
    written: list[str]  # files written (none on a dry run)


# -- the method signatures ------------------------------------------------------------------
CONTEXT = Signature("context", ContextParams, ContextResult)
SEARCH = Signature("search", SearchParams, SearchResult)
REMEMBER = Signature("remember", RememberParams, RememberResult)
FORGET = Signature("forget", ForgetParams, ForgetResult)
MEMORIES = Signature("memories", MemoriesParams, MemoriesResult)
SET_ENABLED = Signature("set_enabled", SetEnabledParams, SetEnabledResult)
EDIT_ITEM = Signature("edit_item", EditItemParams, EditItemResult)
STATUS = Signature("status", NoParams, StatusResult)
REINDEX = Signature("reindex", ReindexParams, ReindexResult)
RUN_JOB = Signature("run_job", RunJobParams, RunJobResult)
JOB_RUNS = Signature("job_runs", JobRunsParams, JobRunsResult)
INGEST = Signature("ingest", IngestParams, IngestResult)
RECALL = Signature("recall", RecallParams, RecallResult)
FORGET_CONVERSATION = Signature(
    "forget_conversation", ForgetConversationParams, ForgetConversationResult
)
IMPORT = Signature("import", ImportParams, Document)  # memd export or conversation logs
EXPORT = Signature("export", ExportParams, ExportResult)
SYNC_STATUS = Signature("sync_status", NoParams, Document)
SYNC_NOW = Signature("sync_now", SyncNowParams, SyncNowResult)
SYNC_INIT_SCHEMA = Signature("sync_init_schema", NoParams, Document)
RELATIONSHIP = Signature("relationship", RelationshipParams, RelationshipResult)
HISTORY = Signature("history", HistoryParams, HistoryResult)
SHOW_CHANGE = Signature("show_change", ShowChangeParams, ShowChangeResult)
UNDO = Signature("undo", UndoParams, UndoResult)

SIGNATURES: dict[str, Signature[Any, Any]] = {
    s.name: s
    for s in (
        CONTEXT, SEARCH, REMEMBER, FORGET, MEMORIES, SET_ENABLED, EDIT_ITEM, STATUS, REINDEX,
        RUN_JOB, JOB_RUNS, INGEST, RECALL, FORGET_CONVERSATION, IMPORT, EXPORT, SYNC_STATUS,
        SYNC_NOW, SYNC_INIT_SCHEMA, RELATIONSHIP, HISTORY, SHOW_CHANGE, UNDO,
    )
}  # fmt: skip


# -- decoding -------------------------------------------------------------------------------
def decode_params(params_type: type[P], params: Any) -> P:
    """Validate a request's params (a JSON object, already parsed) into `params_type`.

    Raises `InvalidParams` naming the field. A ``null`` value counts as absent.
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams('invalid params: "params" must be an object (named parameters)')
    if None in params.values():
        params = {k: v for k, v in params.items() if v is not None}
    _refuse_lone_surrogates(params)
    try:
        return msgspec.convert(params, params_type, strict=True)
    except msgspec.ValidationError as exc:
        raise InvalidParams(validation_message(exc)) from None


def _refuse_lone_surrogates(params: dict[str, Any]) -> None:
    """A string with half of a UTF-16 pair (JSON allows the escape) is not text memd can
    store, search or write: refuse it here, naming the param, instead of failing later."""
    for key, value in params.items():
        stack = [key, value]
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                if v.isascii():
                    continue
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError as exc:
                    bad = v[exc.start]
                    raise InvalidParams(
                        f"param {key!r}: holds a lone surrogate ({ascii(bad)[1:-1]}),"
                        " which is not valid Unicode"
                    ) from None
            elif isinstance(v, dict):
                stack.extend(v.keys())
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)


def decode_result(sig: Signature[Any, R], result: Any) -> R:
    """A result as its typed value (the client's side; a feature's answer on the server)."""
    return msgspec.convert(result, sig.result, strict=False)


def to_builtins(value: Any) -> Any:
    """A message as plain JSON values (dicts, lists, …), unset fields left out."""
    return msgspec.to_builtins(value)


def validation_message(exc: msgspec.ValidationError) -> str:
    """``Expected `int` >= 0 - at `$.budget_tokens` `` → ``param 'budget_tokens': expected int >= 0``."""
    text = str(exc)
    what, sep, where = text.rpartition(" - at `$")
    if not sep:
        return f"invalid params: {text}"
    field = where.rstrip("`").lstrip(".")
    what = what.replace("`", "")
    return f"param {field!r}: {what[:1].lower()}{what[1:]}"
