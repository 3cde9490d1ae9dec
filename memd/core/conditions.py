"""When LLM jobs should wait: on battery below a threshold, or while the machine is busy.

`probe_system` reads the machine through psutil; `defer_reason` is the pure decision, so tests
hand it any battery and load they like. A machine without a battery (desktops, CI) reports
`battery_percent=None` and counts as on AC.

Deferral is for scheduled runs. A run a person asked for (`memd extract --now`) runs inside
`requested_now()`, and the jobs' gate does not defer it.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import os
from collections.abc import Iterator
from dataclasses import dataclass

_REQUESTED = contextvars.ContextVar("memd_requested_now", default=False)


@contextlib.contextmanager
def requested_now() -> Iterator[None]:
    """Mark the job runs in this block as asked for by a person (not deferred for load/battery)."""
    token = _REQUESTED.set(True)
    try:
        yield
    finally:
        _REQUESTED.reset(token)


def is_requested_now() -> bool:
    """True inside `requested_now()`: this run was asked for, not scheduled."""
    return _REQUESTED.get()


@dataclass(frozen=True, slots=True)
class SystemState:
    """What the jobs look at before spending tokens."""

    battery_percent: float | None  # None: no battery
    power_plugged: bool | None  # None: unknown (some platforms), treated as plugged in
    load_1m: float
    cores: int


def probe_system() -> SystemState:
    """Read battery and 1-minute load average now."""
    import psutil

    battery = psutil.sensors_battery()
    try:
        load = float(psutil.getloadavg()[0])
    except (OSError, AttributeError):
        load = 0.0
    cores = psutil.cpu_count() or os.cpu_count() or 1
    if battery is None:
        return SystemState(None, None, load, cores)
    return SystemState(float(battery.percent), battery.power_plugged, load, cores)


def defer_reason(state: SystemState, min_battery: int) -> str:
    """Why an LLM job should wait now, or "" when it may run."""
    on_battery = state.battery_percent is not None and state.power_plugged is False
    if on_battery and state.battery_percent is not None and state.battery_percent < min_battery:
        return f"on battery at {state.battery_percent:.0f}% (below {min_battery}%)"
    if state.load_1m > state.cores:
        return f"system busy: load {state.load_1m:.2f} > {state.cores} cores"
    return ""


def day_of(ts: float) -> dt.date:
    """The local calendar day of an epoch timestamp (token budgets and decay count in days)."""
    return dt.datetime.fromtimestamp(ts).date()
