"""The `status` answer: the daemon's part, then one part per feature, each a typed value.

Every feature fills its own fields of the one `StatusResult` (`Feature.status_into`), with
the types below, which are what the feature itself makes: the value travels from the feature
to the wire as it is. Fields of a part that a daemon may leave out have defaults, so a client
also reads the answer of an older daemon.
"""

from __future__ import annotations

from msgspec import UNSET, Struct, UnsetType

from memd.api.messages.base import Result
from memd.api.messages.memory import AgentSeen
from memd.api.messages.sync import SyncSummary
from memd.core.models import Recovery
from memd.core.progress import TaskSnapshot


class DaemonStatus(Struct, kw_only=True):
    """The process: in the daemon its figures, the settings only a restart applies, whether it
    still builds its first index and the long work under way."""

    running: bool = False
    pid: int | None = None
    uptime_s: float | UnsetType = UNSET
    rss_mb: float | UnsetType = UNSET
    cpu_s: float | UnsetType = UNSET
    cpu_percent: float | UnsetType = UNSET
    threads: int | UnsetType = UNSET
    restart_required: list[str] | UnsetType = UNSET
    starting: bool | UnsetType = UNSET
    progress: list[TaskSnapshot] | UnsetType = UNSET


class JobStatus(Struct, kw_only=True):
    """A scheduled job: its last run (None before the first) and its next."""

    last_outcome: str | None = None
    last_message: str = ""
    last_finished: float | None = None
    last_success: float | None = None
    runs: int = 0
    counts: dict[str, int] = {}
    interval_s: int | float | None = None  # as the job was declared (whole seconds stay whole)
    next_run: str | None = None  # ISO time; None outside the daemon
    running: bool = False


class RootStatus(Struct, kw_only=True):
    """A memory root: its folder, and the project it belongs to ("" for the user's own)."""

    path: str
    project: str = ""


class IndexStatus(Struct, kw_only=True):
    """The Markdown index: its file, what it holds, and how fresh it is (a change the watcher
    saw but not yet applied shows as `lag_s`)."""

    path: str
    files: int = 0
    sections: int = 0
    items: int = 0
    problems: int = 0
    last_change_at: float | None = None
    last_indexed_at: float | None = None
    lag_s: float = 0.0
    pending_writes: int = 0


class WatcherStatus(Struct, kw_only=True):
    """How the tree is watched: `native`, `polling for … (why)`, or `not running`."""

    mode: str = "not running"


class FileProblem(Struct, kw_only=True):
    """A file memd could not read as it is; `indexed`: the index holds text of it all the same
    (broken front matter: the rest of the file; an unreadable file: its last readable version)."""

    path: str
    reason: str
    seen_at: float
    indexed: bool = False


class LogSource(Struct, kw_only=True):
    """A folder of logs memd tails: its format, and the assistant whose it is (unset: none)."""

    path: str
    format: str
    assistant: str | UnsetType = UNSET


class AssistantSeen(Struct, kw_only=True):
    """One assistant as memd sees it: on or off, whether one of its folders exists (`custom`:
    the folder is a setting's), what was read of it and its latest problems."""

    name: str
    title: str
    enabled: bool
    found: bool
    folders: list[str]
    custom: bool
    files: int = 0
    turns: int = 0
    sessions: int = 0
    problems: list[str] = []


class LogsStatus(Struct, kw_only=True):
    """The conversation logs: the sources tailed, what was read of them (the most recent bad
    lines with file:line), the watcher, the index's sessions and turns, the assistants."""

    sources: list[LogSource] = []
    files: int = 0
    deleted_files: int = 0
    turns_from_logs: int = 0
    bad_lines: int = 0
    recent_bad_lines: list[str] = []
    problems: list[str] = []
    watcher: str = ""
    last_scan_at: float | None = None
    sessions: int = 0
    turns: int = 0
    summaries_due: int = 0
    assistants: list[AssistantSeen] = []


class HistoryStatus(Struct, kw_only=True):
    """Whether changes of the memory tree are being recorded, and if not, why (`reason`)."""

    enabled: bool
    ok: bool
    reason: str  # empty when ok
    git_dir: str
    work_tree: str
    git: str = ""  # `git --version`, or empty when git is missing
    head: str = ""
    pending: int = 0  # changes captured but not committed yet, and hand edits waiting
    recorded: int = 0  # changes committed by this process
    skipped: int = 0  # changes that could not be recorded
    moved_aside: list[str] = []  # damaged repositories set aside


class InstructionsFile(Struct, kw_only=True):
    """memd's block in an assistant's instructions file (`memd integrate`): where, of which
    kind, when memd last wrote it (None: not in this run), the problem that kept it from it."""

    assistant: str
    path: str
    kind: str = "block"  # "block" (memd's block in the file) or "file" (the whole file)
    head: str = ""  # a "file" target's first lines, before memd's block
    written_at: float | None = None
    problem: str = ""
    exists: bool = False


class LLMRun(Struct, kw_only=True):
    """The latest run that spent something on the backend: its job, start, requests, tokens."""

    job: str
    started: float
    model: str
    requests: int
    input_tokens: int
    output_tokens: int


class LLMStatus(Struct, kw_only=True):
    """The LLM: the backend and why (`mode`: the name older clients read), its model, where the
    key comes from (never the key), what today cost, and, with a backend on, why scheduled runs
    wait and a configuration error. The defaults read the answer of an older daemon."""

    backend: str = ""
    mode: str = ""
    why: str = ""
    model: str = ""
    base_url: str = ""
    key_source: str = ""
    local: bool = False
    note: str | None = None
    tokens_today: int = 0
    requests_today: int = 0
    daily_budget: int = 0
    run_budget: int = 0
    rpm: int = 0
    last_run: LLMRun | None = None
    waiting: str | None | UnsetType = UNSET
    config_error: str | None | UnsetType = UNSET


class QueryCache(Struct, kw_only=True):
    """Query vectors served from the cache, and made."""

    hits: int
    misses: int


class VectorIndexFigures(Struct, kw_only=True):
    """One kind's in-memory vector index: rows, its generation, its last build, its size."""

    rows: int
    generation: int
    build_s: float
    mb: float


class IndexUpdates(Struct, kw_only=True):
    """How the in-memory vector index changed: built again, or appended to."""

    rebuilds: int
    appends: int


class BackfillProgress(Struct, kw_only=True):
    """The backfill worker: its state, the texts with a vector of the total, and the rate; the
    rest only when it applies (time left, its model's process, its last error, why it waits)."""

    state: str
    done: int = 0
    total: int = 0
    pending: int = 0
    embedded: int = 0
    reused: int = 0
    rate_per_s: float = 0.0
    eta_s: int | UnsetType = UNSET
    worker_pid: int | UnsetType = UNSET
    last_error: str | UnsetType = UNSET
    error_at: float | UnsetType = UNSET
    waiting: str | UnsetType = UNSET
    retry_at: float | UnsetType = UNSET


class SemanticStatus(Struct, kw_only=True):
    """Recall by meaning: on or why not, the dictionary, the query side (its cache, the
    in-memory index, its last error), the kind and model, vectors per kind, the backfill."""

    on: bool = False
    reason: str = ""
    dictionary: str = ""
    query_cache: QueryCache | UnsetType = UNSET
    # Answers given by full text while their query's vector was still being computed (later
    # than `semantic.query_wait_ms`).
    query_late: int | UnsetType = UNSET
    index: dict[str, VectorIndexFigures] | UnsetType = UNSET
    index_updates: IndexUpdates | UnsetType = UNSET
    query_error: str | UnsetType = UNSET
    query_error_at: float | UnsetType = UNSET
    query_errors: int | UnsetType = UNSET
    paused_until: float | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    vectors: dict[str, int] | UnsetType = UNSET
    backfill: BackfillProgress | UnsetType = UNSET


class StatusResult(Result, kw_only=True):
    """`status`: the daemon's part, then one part per feature (`index`, `logs`, `sync`, …)."""

    version: str
    daemon: DaemonStatus
    socket: str
    jobs: dict[str, JobStatus] = {}
    enabled: bool | UnsetType = UNSET
    memory_root: str | UnsetType = UNSET
    roots: list[RootStatus] | UnsetType = UNSET
    index: IndexStatus | UnsetType = UNSET
    watcher: WatcherStatus | UnsetType = UNSET
    problems: list[FileProblem] | UnsetType = UNSET
    logs: LogsStatus | UnsetType = UNSET
    llm: LLMStatus | UnsetType = UNSET
    sync: SyncSummary | UnsetType = UNSET
    semantic: SemanticStatus | UnsetType = UNSET
    # A damaged index moved aside and rebuilt.
    recovered: Recovery | UnsetType = UNSET
    # Why the daemon runs read-only (answers queries, refuses writes), e.g. a full disk.
    read_only: str | UnsetType = UNSET
    agents: list[AgentSeen] | UnsetType = UNSET
    # Whether changes of the memory tree are being recorded.
    history: HistoryStatus | UnsetType = UNSET
    # memd's block in assistants' instructions files (`memd integrate`).
    instructions: list[InstructionsFile] | UnsetType = UNSET
