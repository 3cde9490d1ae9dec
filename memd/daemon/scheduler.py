"""Run memd's jobs on intervals with APScheduler 3.11, the way a laptop daemon needs it.

Coalesce (many missed runs after a sleep become one), never two runs of one job at once, and
no misfire grace limit (a run missed while the machine slept still happens, once, on wake).
The scheduler knows jobs only as (name, interval, function returning a JobResult); it records
each outcome through a callback, so job state can live in memd's own SQLite.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable

from memd.api.methods import JobSpec
from memd.core.models import JobOutcome, JobResult

log = logging.getLogger(__name__)
OutcomeSink = Callable[[JobResult, float, float], None]


class Scheduler:
    """A thin shell over `apscheduler.schedulers.background.BackgroundScheduler`."""

    def __init__(self, on_result: OutcomeSink | None = None, *, workers: int = 2) -> None:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        # APScheduler logs each job added and started at INFO ("Adding job tentatively", four
        # times at every start): noise in memd's log, whose job runs are in `memd status`.
        # Its warnings and errors stay; at DEBUG everything does.
        quiet = logging.getLogger("apscheduler")
        if not log.isEnabledFor(logging.DEBUG) and quiet.level == logging.NOTSET:
            quiet.setLevel(logging.WARNING)
        self._sched = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone=dt.UTC,
        )
        self.on_result = on_result
        self.specs: dict[str, JobSpec] = {}
        self._locks: dict[str, threading.Lock] = {}
        self.running: set[str] = set()

    def add(self, spec: JobSpec) -> None:
        self.specs[spec.name] = spec
        self._locks[spec.name] = threading.Lock()
        first = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=spec.first_delay_s)
        self._sched.add_job(
            self._run,
            "interval",
            seconds=spec.interval_s,
            next_run_time=first,
            args=[spec.name],
            id=spec.name,
            name=spec.name,
            replace_existing=True,
        )

    def start(self) -> None:
        self._sched.start()

    def shutdown(self, wait: bool = True) -> None:
        if self._sched.running:
            self._sched.shutdown(wait=wait)

    def next_runs(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for job in self._sched.get_jobs():
            nrt = job.next_run_time
            out[job.id] = nrt.isoformat() if nrt else None
        return out

    def nudge(self, name: str, delay_s: float) -> None:
        """Bring a job's next run forward to `delay_s` from now (never push it later)."""
        job = self._sched.get_job(name) if self._sched.running else None
        if job is None or job.next_run_time is None:
            return
        when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=delay_s)
        if when < job.next_run_time:
            job.modify(next_run_time=when)

    def reschedule(self, name: str, interval_s: float) -> None:
        """Run `name` every `interval_s` seconds, the next run `interval_s` from now."""
        spec = self.specs.get(name)
        if spec is None:
            return
        self.specs[name] = dataclasses.replace(spec, interval_s=interval_s)
        if self._sched.running:
            self._sched.reschedule_job(name, trigger="interval", seconds=interval_s)

    def run_now(self, name: str) -> JobResult:
        """Run a job in the caller's thread (CLI `--now`); waits if a scheduled run is active."""
        return self._run(name)

    def _run(self, name: str) -> JobResult:
        spec = self.specs[name]
        lock = self._locks[name]
        # The scheduler already keeps max_instances=1; the lock also covers run_now().
        with lock:
            self.running.add(name)
            started = time.time()
            try:
                result = spec.fn()
            except Exception as exc:
                log.exception("job %s failed", name)
                result = JobResult(name, JobOutcome.ERROR, f"{type(exc).__name__}: {exc}")
            finally:
                self.running.discard(name)
            finished = time.time()
            if self.on_result is not None:
                try:
                    self.on_result(result, started, finished)
                except Exception:
                    log.exception("recording the outcome of job %s failed", name)
            log.info("job %s: %s %s", name, result.outcome.value, result.message)
            return result
