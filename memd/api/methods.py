"""How a feature declares what it adds to the daemon: socket methods, middleware, jobs, status.

These are declarations only (no I/O): features below `memd.daemon` in the layers build them,
the composition root (`memd.app`) hands them to the daemon's `Engine`, which serves them.

Where a method runs is part of its declaration and follows its measured cost (docs/protocol.md
has the table): ``"loop"`` answers on the event loop (only reads that take well under a
millisecond, where a thread hand-off would cost more than the work); ``"reader"`` runs in the
small pool of query threads (one per core, each with a large SQLite page cache: `context`,
`search`); ``"pool"`` runs in the bounded worker pool (writes, files, the network). Nothing that
can take more than a millisecond or two runs on the loop, so a slow call never holds up other
clients.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from memd.api.messages import Params, Signature, StatusResult
from memd.core.models import JobResult
from memd.core.progress import Progress
from memd.core.settings import Settings

P = TypeVar("P", bound=Params)
R = TypeVar("R")
Runs = Literal["loop", "reader", "pool"]


@dataclass(frozen=True, slots=True)
class Method(Generic[P, R]):
    """One socket method: its signature, its handler and where it runs.

    `runs` is a place, or a function of the params giving it (a call that may have to wait on
    the writer goes to the pool even when the usual call is a quick read).
    """

    signature: Signature[P, R]
    handler: Callable[[P], R]
    runs: Runs | Callable[[P], Runs] = "pool"
    why: str = ""  # the measured cost behind `runs`, for the docs and the next reader
    writes: bool = False  # refused while the daemon runs read-only (a full disk)

    @property
    def name(self) -> str:
        return self.signature.name

    def where(self, params: P) -> Runs:
        """Where a call with these params runs."""
        return self.runs if isinstance(self.runs, str) else self.runs(params)


Call = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Middleware:
    """Behaviour around some methods: `around(method, params, call_next)` returns the result.

    The composition root lists middleware in order; the first in the list is the outermost.
    """

    name: str
    methods: frozenset[str]
    around: Callable[[str, Any, Call], Any]


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A scheduled job: `fn` runs every `interval_s`, the first time after `first_delay_s`."""

    name: str
    fn: Callable[[], JobResult]
    interval_s: float
    first_delay_s: float = 5.0


@dataclass(frozen=True, slots=True)
class Periodic:
    """Daemon-only background work run every `interval()` seconds (re-read each time)."""

    name: str
    interval: Callable[[], float]
    fn: Callable[[], None]


@dataclass
class Feature:
    """Everything one feature adds to an engine. Lists are in order; stops run in reverse."""

    name: str
    methods: list[Method[Any, Any]] = field(default_factory=list)
    jobs: list[JobSpec] = field(default_factory=list)
    # Its fields of `status`, set on the answer being made.
    status_into: list[Callable[[StatusResult], None]] = field(default_factory=list)
    # Daemon only: before the socket opens (catch up with the files, start watching) ...
    startup: list[Callable[[], None]] = field(default_factory=list)
    # ... after it opened (tailers), and at shutdown (in reverse order of features).
    on_start: list[Callable[[], None]] = field(default_factory=list)
    on_stop: list[Callable[[], None]] = field(default_factory=list)
    on_reload: list[Callable[[Settings], None]] = field(default_factory=list)
    periodic: list[Periodic] = field(default_factory=list)


class Host(Protocol):
    """What a feature may ask of the engine that serves it."""

    @property
    def settings(self) -> Settings: ...

    @property
    def in_daemon(self) -> bool:
        """True in the daemon process, False in the CLI's no-daemon fallback."""
        ...

    @property
    def progress(self) -> Progress:
        """Where long work reports how far it got (the `progress` part of `status`)."""
        ...

    def run_job(self, name: str) -> JobResult:
        """Run a job now and record its outcome."""
        ...

    def next_run(self, job: str) -> str | None:
        """The job's next scheduled run (ISO time), None outside the daemon."""
        ...

    def nudge(self, job: str, delay_s: float) -> None:
        """Bring a job's next run forward to `delay_s` from now (no-op outside the daemon)."""
        ...

    def reschedule(self, job: str, interval_s: float) -> None:
        """Run a job every `interval_s` from now on (after a settings reload)."""
        ...
