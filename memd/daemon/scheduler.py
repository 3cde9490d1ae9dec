"""Run memd's jobs on intervals, the way a laptop daemon needs it.

Coalesce (many missed runs after a sleep become one), never two runs of one job at once (a run
due while the last one still works is skipped), and no misfire limit (a run missed while the
machine slept still happens, once, on wake). One thread keeps the times, in wall-clock seconds
(a sleep of the machine moves them past, as it moves the clock), and looks again at least every
`RECHECK_S` so a wake is noticed soon; the runs go to a pool of `workers` threads. The scheduler
knows jobs only as (name, interval, function returning a JobResult); it records each outcome
through a callback, so job state can live in memd's own SQLite.

It was a shell over APScheduler 3, whose import alone (it reads every installed package's entry
points) took ~45 ms of CPU at every daemon start; memd used an interval per job and nothing else.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from memd.api.methods import JobSpec
from memd.core.models import JobOutcome, JobResult

log = logging.getLogger(__name__)
OutcomeSink = Callable[[JobResult, float, float], None]
RECHECK_S = 30.0  # the longest the timer thread waits before it looks at the clock again


class Scheduler:
    """Each job every `interval_s` (its first run `first_delay_s` after `add`), on `workers`
    threads; `run_now` runs one in the caller's thread."""

    def __init__(self, on_result: OutcomeSink | None = None, *, workers: int = 2) -> None:
        self.on_result = on_result
        self.specs: dict[str, JobSpec] = {}
        self._locks: dict[str, threading.Lock] = {}
        self.running: set[str] = set()
        self._due: dict[str, float] = {}  # the next run of each job, wall-clock seconds
        self._queued: set[str] = set()  # handed to the pool, not finished
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._timer: threading.Thread | None = None
        self._changed = threading.Condition()
        self._stopping = False

    @property
    def started(self) -> bool:
        return self._timer is not None and not self._stopping

    def add(self, spec: JobSpec) -> None:
        with self._changed:
            self.specs[spec.name] = spec
            self._locks.setdefault(spec.name, threading.Lock())
            self._due[spec.name] = time.time() + spec.first_delay_s
            self._changed.notify()

    def start(self) -> None:
        if self._timer is not None:
            return
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="memd-job")
        self._timer = threading.Thread(target=self._keep_time, name="memd-scheduler", daemon=True)
        self._timer.start()

    def shutdown(self, wait: bool = True) -> None:
        """Stop starting runs; with `wait`, return once the runs under way have ended."""
        with self._changed:
            if self._timer is None or self._stopping:
                return
            self._stopping = True
            self._changed.notify()
        self._timer.join()
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)

    def _keep_time(self) -> None:
        with self._changed:
            while not self._stopping:
                now = time.time()
                for name, due in list(self._due.items()):
                    if due <= now:
                        self._fire(name, due, now)
                nxt = min(self._due.values(), default=now + RECHECK_S)
                self._changed.wait(min(max(nxt - now, 0.0), RECHECK_S))

    def _fire(self, name: str, due: float, now: float) -> None:
        """Hand a due job to the pool (unless its last run still works) and set its next time:
        the first of its interval's steps after now, however many were missed (coalesce)."""
        interval = max(self.specs[name].interval_s, 0.001)
        missed = int((now - due) // interval) + 1
        self._due[name] = due + missed * interval
        if name in self._queued:
            log.debug("job %s: the last run still works; this one is skipped", name)
            return
        assert self._pool is not None
        self._queued.add(name)
        self._pool.submit(self._scheduled, name)

    def _scheduled(self, name: str) -> None:
        try:
            self._run(name)
        finally:
            with self._changed:
                self._queued.discard(name)

    def next_runs(self) -> dict[str, str | None]:
        with self._changed:
            return {
                name: dt.datetime.fromtimestamp(due, dt.UTC).isoformat()
                for name, due in self._due.items()
            }

    def nudge(self, name: str, delay_s: float) -> None:
        """Bring a job's next run forward to `delay_s` from now (never push it later)."""
        with self._changed:
            if not self.started or name not in self._due:
                return
            when = time.time() + delay_s
            if when < self._due[name]:
                self._due[name] = when
                self._changed.notify()

    def reschedule(self, name: str, interval_s: float) -> None:
        """Run `name` every `interval_s` seconds, the next run `interval_s` from now."""
        with self._changed:
            spec = self.specs.get(name)
            if spec is None:
                return
            self.specs[name] = dataclasses.replace(spec, interval_s=interval_s)
            if self.started:
                self._due[name] = time.time() + interval_s
                self._changed.notify()

    def run_now(self, name: str) -> JobResult:
        """Run a job in the caller's thread (CLI `--now`); waits if a scheduled run is active."""
        return self._run(name)

    def _run(self, name: str) -> JobResult:
        spec = self.specs[name]
        lock = self._locks[name]
        # A scheduled run is never started twice at once (`_queued`); the lock also covers
        # run_now().
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
