"""The job scheduler with real threads: each job on its interval, a sleep of the machine's
missed runs coalesced into one, never two runs of one job at once, `nudge` and `reschedule`,
and a shutdown that waits for the run under way."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from types import SimpleNamespace

import pytest

from memd.api.methods import JobSpec
from memd.core.models import JobOutcome, JobResult
from memd.daemon import scheduler as scheduler_mod
from memd.daemon.scheduler import Scheduler


class Clock:
    """The scheduler's wall clock, which a test moves forward (a machine that slept)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(scheduler_mod, "time", SimpleNamespace(time=c.time))
    return c


@pytest.fixture
def sched() -> Iterator[Scheduler]:
    outcomes: list[JobResult] = []
    s = Scheduler(lambda r, _a, _b: outcomes.append(r))
    yield s
    s.shutdown(wait=True)


def counting(
    name: str, interval_s: float, first_delay_s: float, work_s: float = 0.0
) -> tuple[JobSpec, list[float], Callable[[], int]]:
    runs: list[float] = []
    busy = [0, 0]  # now, most at once
    lock = threading.Lock()

    def fn() -> JobResult:
        with lock:
            busy[0] += 1
            busy[1] = max(busy[1], busy[0])
        runs.append(time.monotonic())
        time.sleep(work_s)
        with lock:
            busy[0] -= 1
        return JobResult(name, JobOutcome.SUCCESS, "")

    return JobSpec(name, fn, interval_s, first_delay_s), runs, lambda: busy[1]


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_job_runs_after_its_first_delay_then_on_its_interval(sched: Scheduler) -> None:
    spec, runs, _ = counting("tick", 0.2, 0.05)
    sched.add(spec)
    started = time.monotonic()
    sched.start()
    wait_for(lambda: len(runs) >= 3)
    assert runs[0] - started >= 0.04
    assert all(b - a >= 0.15 for a, b in zip(runs, runs[1:], strict=False)), runs
    assert sched.next_runs()["tick"] is not None and "+00:00" in str(sched.next_runs()["tick"])


def test_a_run_due_while_the_last_one_works_is_skipped(sched: Scheduler) -> None:
    spec, runs, most = counting("slow", 0.05, 0.0, work_s=0.4)
    sched.add(spec)
    sched.start()
    wait_for(lambda: len(runs) >= 2)
    time.sleep(0.3)
    assert most() == 1  # never two at once
    assert len(runs) <= 3, runs  # 0.05 s steps for ~1 s: the ones due mid-run were skipped


def test_the_runs_missed_while_the_machine_slept_are_one_run(
    clock: Clock, sched: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduler_mod, "RECHECK_S", 0.05)  # how soon a wake is noticed
    spec, runs, _ = counting("hourly", 3600.0, 3600.0)
    sched.add(spec)
    sched.start()
    time.sleep(0.1)
    assert runs == []
    clock.offset = 10.5 * 3600  # asleep for ten and a half hours
    wait_for(lambda: len(runs) == 1)
    time.sleep(0.2)
    assert len(runs) == 1
    due = datetime.fromisoformat(str(sched.next_runs()["hourly"])).timestamp()
    assert clock.time() < due <= clock.time() + 3600  # on the job's own steps, after now


def test_nudge_brings_a_run_forward_and_never_later(sched: Scheduler) -> None:
    spec, runs, _ = counting("sync", 3600.0, 3600.0)
    sched.add(spec)
    sched.nudge("sync", 0.0)  # not started: nothing to bring forward
    sched.start()
    before = sched.next_runs()["sync"]
    sched.nudge("sync", 7200.0)
    assert sched.next_runs()["sync"] == before
    sched.nudge("sync", 0.05)
    wait_for(lambda: len(runs) == 1)


def test_reschedule_sets_the_interval_from_now(sched: Scheduler) -> None:
    spec, runs, _ = counting("extract", 3600.0, 3600.0)
    sched.add(spec)
    sched.start()
    sched.reschedule("extract", 0.1)
    assert sched.specs["extract"].interval_s == 0.1
    wait_for(lambda: len(runs) >= 2)
    sched.reschedule("missing", 1.0)  # an unknown job: nothing happens


def test_shutdown_waits_for_the_run_under_way_and_starts_no_other() -> None:
    spec, runs, _ = counting("long", 0.05, 0.0, work_s=0.3)
    s = Scheduler()
    s.add(spec)
    s.start()
    wait_for(lambda: len(runs) == 1)
    s.shutdown(wait=True)
    assert s.running == set()
    ended = len(runs)
    time.sleep(0.2)
    assert len(runs) == ended
    assert s.run_now("long").outcome is JobOutcome.SUCCESS  # `--now` still runs it
