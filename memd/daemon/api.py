"""The daemon's own methods as the daemon serves them (like each feature's `api.py`): `status`,
`run_job`, `job_runs` and `reindex`.

`reindex` works on any `Index` (the composition root passes the Markdown index): a reconcile
scan, or a full rebuild into a new file that is swapped in between two writes, with the
operational state carried over.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from memd import __version__
from memd.api import messages as msg
from memd.api.methods import Feature, Method
from memd.core.models import JobResult, Recovery
from memd.core.progress import Task
from memd.daemon import repo
from memd.daemon.engine import Engine
from memd.db import Store, recovery

log = logging.getLogger("memd")


class Index(Protocol):
    """A rebuildable index kept in the store (the Markdown tree's)."""

    @property
    def cache_tables(self) -> tuple[str, ...]:
        """Tables that a rebuild makes afresh (everything else is carried over)."""
        ...

    def reconcile(self, progress: Task | None = None) -> msg.ReindexResult:
        """Catch up with the files (changed files only)."""
        ...

    def build(self, store: Store, progress: Task | None = None) -> msg.ReindexResult:
        """Index every file into `store` (a new, empty index)."""
        ...


def daemon_feature(engine: Engine, index: Index) -> Feature:
    """The methods every memd daemon has, whatever features it was built with."""

    def status(_: msg.NoParams) -> msg.StatusResult:
        return status_of(engine)

    def run_job(p: msg.RunJobParams) -> JobResult:
        return engine.run_job(p.name)

    def job_runs(p: msg.JobRunsParams) -> msg.JobRunsResult:
        return job_runs_of(engine.store, p)

    def reindex(p: msg.ReindexParams) -> msg.ReindexResult:
        if not p.full:
            with engine.progress.task("reindexing memory files") as task:
                return index.reconcile(task)
        with engine.progress.task("rebuilding the index") as task:
            report = rebuild(
                engine.store,
                index,
                on_damage=lambda r: setattr(engine, "recovered", r),
                progress=task,
            )
        report.full = True
        return report

    return Feature(
        "daemon",
        methods=[
            Method(msg.STATUS, status, why="reads counters of every feature: ~1 ms"),
            Method(msg.RUN_JOB, run_job, writes=True, why="runs a job: seconds"),
            Method(
                msg.JOB_RUNS, job_runs, runs="reader", why="up to 200 rows: 1-4 ms of 2,000 runs"
            ),
            Method(msg.REINDEX, reindex, writes=True, why="scans the tree: 10 ms to minutes"),
        ],
        status_into=[lambda out: setattr(out, "jobs", jobs_status(engine))],
    )


def status_of(engine: Engine) -> msg.StatusResult:
    """The daemon's part of `status`, then every feature's part, in feature order."""
    out = msg.StatusResult(
        version=__version__, daemon=daemon_status(engine), socket=str(engine.settings.socket_path)
    )
    if engine.recovered is not None:
        out.recovered = engine.recovered
    if engine.read_only:
        out.read_only = engine.read_only
    for write in engine.status_writers:
        write(out)
    return out


def daemon_status(engine: Engine) -> msg.DaemonStatus:
    """The process: its figures in the daemon, what waits for a restart, the work under way."""
    d = msg.DaemonStatus(running=engine.in_daemon, pid=engine.daemon_pid)
    if engine.in_daemon:
        process_stats(d, engine.started_at, time.time())
    if engine.restart_required:
        d.restart_required = list(engine.restart_required)
    if engine.starting:
        d.starting = True
    progress = engine.progress.snapshot()
    if progress:
        d.progress = progress
    return d


def job_runs_of(store: Store, p: msg.JobRunsParams) -> msg.JobRunsResult:
    """The recorded runs of the scheduled jobs, newest first (what each run did, not only the
    last one `status` shows)."""
    return msg.JobRunsResult(runs=repo.job_runs(store.read(), p.name, p.limit))


def jobs_status(engine: Engine) -> dict[str, msg.JobStatus]:
    """Each job's last outcome and next run."""
    rows = repo.job_rows(engine.store.read())
    nxt = engine.scheduler.next_runs() if engine.scheduler else {}
    running = engine.scheduler.running if engine.scheduler else set()
    out: dict[str, msg.JobStatus] = {}
    for name in sorted(set(engine.jobs) | set(rows)):
        r = rows.get(name)
        out[name] = msg.JobStatus(
            last_outcome=(r.outcome or None) if r else None,
            last_message=r.message if r else "",
            last_finished=(r.last_finished or None) if r else None,
            last_success=(r.last_success or None) if r else None,
            runs=r.runs if r else 0,
            counts=r.counts if r else {},
            interval_s=engine.jobs[name].interval_s if name in engine.jobs else None,
            next_run=nxt.get(name),
            running=name in running,
        )
    return out


def rebuild(
    store: Store,
    index: Index,
    on_damage: Callable[[Recovery], None] = lambda r: None,
    progress: Task | None = None,
) -> msg.ReindexResult:
    """`reindex --full`: build a fresh index in a new file and swap it in atomically.

    When the current file is damaged, a copy of it is kept beside it (`index.db.corrupt-<time>`)
    and only the state that can still be read is carried over.
    """
    final = store.path
    reason = recovery.damage_of(final)
    if reason:
        at = time.time()
        kept = final.with_name(f"{final.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(final, kept)
        log.error("the index %s is damaged (%s): a copy is kept in %s; rebuilding it from the"
                  " files", final, reason, kept)  # fmt: skip
        on_damage(Recovery(at, str(kept), reason))
    tmp = final.with_name(final.name + ".rebuild")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    fresh = Store.open(tmp)
    try:
        report = index.build(fresh, progress)
    finally:
        fresh.close()
    store.w.swap_to(tmp, lambda c: repo.copy_state(c, tmp, index.cache_tables)).result(300)
    # Changes made while the new index was being built are caught by one more pass.
    return merge_reports(report, index.reconcile())


def merge_reports(a: msg.ReindexResult, b: msg.ReindexResult) -> msg.ReindexResult:
    """`a` with the counts of `b` added (its time is the time of `a`, the long pass)."""
    return msg.ReindexResult(
        full=a.full,
        indexed=a.indexed + b.indexed,
        unchanged=a.unchanged + b.unchanged,
        deleted=a.deleted + b.deleted,
        problems=a.problems + b.problems,
        bytes=a.bytes + b.bytes,
        seconds=a.seconds,
    )


def process_stats(d: msg.DaemonStatus, started_at: float, now: float) -> None:
    """The process's figures into `d`: uptime, resident memory, CPU time and use, threads."""
    import psutil

    p = psutil.Process()
    with p.oneshot():
        cpu = p.cpu_times()
        d.uptime_s = round(now - started_at, 1)
        d.rss_mb = round(p.memory_info().rss / (1 << 20), 1)
        d.cpu_s = round(cpu.user + cpu.system, 2)
        d.cpu_percent = p.cpu_percent(None)
        d.threads = p.num_threads()
