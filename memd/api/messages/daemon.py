"""Messages of the daemon's own methods: `reindex`, `run_job`, `job_runs` (`status` has a module of
its own, `status`: it gathers a part of every feature)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from memd.api.messages.base import Params, Result


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
    counts: dict[str, int]  # as the job reported them (`run` names an extraction or archival run)


class JobRunsResult(Result, kw_only=True):
    runs: list[JobRun]  # newest first
