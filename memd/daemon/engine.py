"""The engine: one method table, an ordered middleware list, jobs and status, over one store.

The engine knows no feature. The composition root (`memd.app`) builds the features and hands
them over with `add`; the daemon process serves the engine on the socket, and the CLI's
no-daemon fallback calls the very same table in-process, so both answer alike.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memd.api import messages
from memd.api.messages import Params, Signature, StatusResult
from memd.api.methods import Feature, JobSpec, Method, Middleware, Periodic
from memd.core.conditions import requested_now
from memd.core.errors import DaemonStarting, DiskFull, InvalidParams, MethodNotFound
from memd.core.models import JobResult, Recovery
from memd.core.progress import Progress, TaskSnapshot
from memd.core.settings import Settings
from memd.daemon import repo
from memd.daemon.scheduler import Scheduler
from memd.db import Store
from memd.db.recovery import disk_full_error, is_disk_full

log = logging.getLogger("memd")
Call = Callable[[Any], Any]
P = TypeVar("P", bound=Params)
R = TypeVar("R")
# What the daemon answers before its first index is done; other calls wait this long for it.
ANSWERED_WHILE_STARTING = frozenset({"status"})
STARTING_WAIT_S = 0.25


def _doing(tasks: list[TaskSnapshot]) -> str:
    if not tasks:
        return "opening the index"
    t = tasks[0]
    of = f" of {t.total:,}" if t.total else ""
    return f"{t.what}: {t.done:,}{of} {t.unit}".rstrip()


def _around(mw: Middleware, name: str, call_next: Call) -> Call:
    def call(params: Any) -> Any:
        return mw.around(name, params, call_next)

    return call


class Engine:
    """Everything memd does minus the process: the features' methods behind one table."""

    def __init__(
        self, settings: Settings, store: Store, *, started_at: float | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        self.started_at = started_at or time.time()
        self.daemon_pid: int | None = None
        self.scheduler: Scheduler | None = None
        self.features: list[Feature] = []
        self.methods: dict[str, Method[Any, Any]] = {}
        self.middleware: list[Middleware] = []
        self.jobs: dict[str, JobSpec] = {}
        # A damaged index moved aside at start or by `reindex --full`, shown in `status`.
        self.recovered: Recovery | None = None
        # Why writes are refused ("" when they are not): the daemon started on a full disk.
        self.read_only = ""
        # Settings changed in the file that only a restart applies (after a SIGHUP reload).
        self.restart_required: list[str] = []
        # Long work under way (first index, rebuild, import), shown by `status`.
        self.progress = Progress()
        # Set while the daemon builds its first index (`starting`): only `status` is served.
        self._ready = threading.Event()
        self._ready.set()
        self._chains: dict[str, Call] = {}

    # -- composition -----------------------------------------------------------------------
    def add(self, feature: Feature) -> None:
        """Add a feature's methods, jobs, status parts and life cycle."""
        for m in feature.methods:
            if m.name in self.methods:
                raise ValueError(f"method {m.name!r} declared twice ({feature.name})")
            self.methods[m.name] = m
        for j in feature.jobs:
            self.jobs[j.name] = j
        self.features.append(feature)
        self._chains.clear()

    def use(self, middleware: Sequence[Middleware]) -> None:
        """Set the middleware, in order: the first is the outermost around a call."""
        for mw in middleware:
            unknown = mw.methods - set(self.methods)
            if unknown:
                raise ValueError(f"middleware {mw.name} names unknown methods {sorted(unknown)}")
        self.middleware = list(middleware)
        self._chains.clear()

    # -- calls -----------------------------------------------------------------------------
    def lookup(self, name: str, params: Any) -> tuple[Method[Any, Any], Any]:
        """The method called `name` and its validated params, or MethodNotFound/InvalidParams."""
        m = self.methods.get(name)
        if m is None:
            raise MethodNotFound(f"method not found: {name}")
        return m, messages.decode_params(m.signature.params, params)

    def dispatch(self, method: Method[P, R], params: P) -> R:
        """Run a method (through its middleware) on validated params; its typed result."""
        if self.starting and method.name not in ANSWERED_WHILE_STARTING:
            self._wait_started(method, params)
        if self.read_only and method.writes:
            raise DiskFull(
                f"{self.read_only}: memd is read-only and does not {method.name}",
                hint="free some space on that disk, then restart memd",
            )
        chain = self._chains.get(method.name)
        if chain is None:
            chain = self._chains[method.name] = self._chain(method)
        try:
            result: R = chain(params)  # middleware hands on the method's own result
        except (OSError, sqlite3.OperationalError) as exc:
            if is_disk_full(exc):
                raise disk_full_error(exc) from exc
            raise
        return result

    @property
    def starting(self) -> bool:
        """True while the daemon builds its first index: calls other than `status` wait a
        moment for it, then get `DaemonStarting` (clients read the index directly meanwhile)."""
        return not self._ready.is_set()

    @starting.setter
    def starting(self, value: bool) -> None:
        if value:
            self._ready.clear()
        else:
            self._ready.set()

    def _wait_started(self, method: Method[Any, Any], params: Any) -> None:
        # A short wait covers a small tree's start; a call on the event loop cannot wait.
        if method.where(params) != "loop" and self._ready.wait(STARTING_WAIT_S):
            return
        raise DaemonStarting(
            f"memd is starting ({_doing(self.progress.snapshot())})",
            hint="try again in a moment; queries can read the index directly meanwhile, and"
            " `memd status` shows how far it got",
        )

    def _chain(self, method: Method[Any, Any]) -> Call:
        call: Call = method.handler
        for mw in reversed(self.middleware):
            if method.name in mw.methods:
                call = _around(mw, method.name, call)
        return call

    def call(self, sig: Signature[P, R], params: P) -> R:
        """A typed in-process call (the CLI's no-daemon fallback), checked as the socket does."""
        m, p = self.lookup(sig.name, messages.to_builtins(params))
        result: R = self.dispatch(m, p)  # the method `sig` names
        return result

    def handle(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call a method the way the socket does: plain JSON params in, plain JSON out."""
        m, p = self.lookup(method, params)
        return messages.to_builtins(self.dispatch(m, p))

    # -- the Host side features see --------------------------------------------------------
    @property
    def in_daemon(self) -> bool:
        return self.daemon_pid is not None

    def run_job(self, name: str) -> JobResult:
        """Run one job now and record what it did (CLI `memd extract|archive|… --now`)."""
        if name not in self.jobs:
            raise InvalidParams(
                f"unknown job {name!r}; jobs: {', '.join(sorted(self.jobs)) or 'none'}"
            )
        # Asked for by a person: load and battery, which defer scheduled runs, do not.
        with requested_now():
            if self.scheduler is not None:
                res = self.scheduler.run_now(name)
            else:
                started = time.time()
                res = self.jobs[name].fn()
                self.record_job(res, started, time.time())
        return res

    def record_job(self, res: JobResult, started: float, finished: float) -> None:
        """Persist a job outcome (the scheduler's callback)."""
        self.store.w.run(lambda c: repo.record_job(c, res, started, finished))

    def next_run(self, job: str) -> str | None:
        """The job's next scheduled run (ISO time), None outside the daemon."""
        return self.scheduler.next_runs().get(job) if self.scheduler is not None else None

    def nudge(self, job: str, delay_s: float) -> None:
        if self.scheduler is not None:
            self.scheduler.nudge(job, delay_s)

    def reschedule(self, job: str, interval_s: float) -> None:
        """Run a job every `interval_s` from now on (a settings reload changed its interval)."""
        spec = self.jobs.get(job)
        if spec is None or spec.interval_s == interval_s:
            return
        self.jobs[job] = dataclasses.replace(spec, interval_s=interval_s)
        if self.scheduler is not None:
            self.scheduler.reschedule(job, interval_s)
        log.info("job %s now runs every %g s", job, interval_s)

    # -- life cycle, gathered from the features in order -----------------------------------
    def _gather(self, attr: str) -> list[Any]:
        return [x for f in self.features for x in getattr(f, attr)]

    @property
    def status_writers(self) -> list[Callable[[StatusResult], None]]:
        return self._gather("status_into")

    @property
    def startup(self) -> list[Callable[[], None]]:
        return self._gather("startup")

    @property
    def on_start(self) -> list[Callable[[], None]]:
        return self._gather("on_start")

    @property
    def on_stop(self) -> list[Callable[[], None]]:
        return self._gather("on_stop")

    @property
    def on_reload(self) -> list[Callable[[Settings], None]]:
        return self._gather("on_reload")

    @property
    def periodic(self) -> list[Periodic]:
        return self._gather("periodic")
