"""Messages of the daemon's own methods: `status`, `reindex`, `run_job`, `job_runs`."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

from memd.api.messages.base import Params, Result
from memd.api.messages.memory import AgentSeen


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
    # memd's block in assistants' instructions files: {"assistant", "path", "kind", "written_at",
    # "problem", "exists"} each (`memd integrate`).
    instructions: list[dict[str, Any]] | UnsetType = UNSET
