"""The daemon: does it answer, is it healthy (memory, version, watcher), and is it installed
as a user service."""

from __future__ import annotations

from pathlib import Path

import msgspec
from msgspec import UNSET

from memd import __version__
from memd.api.messages import STATUS, StatusResult, decode_result
from memd.cli.doctor.check import Check, fail, ok, warn
from memd.cli.service import Runner, ServiceReport, service_status
from memd.core.errors import DaemonNotRunning, MemdError
from memd.core.settings import Settings

RSS_WARN_MB = 150.0
# A daemon of another version can answer `status` in a shape this command does not read.
UNREADABLE = "the daemon answers, but not with a status this command can read"


def fetch_status(socket_path: Path, timeout: float) -> tuple[StatusResult | None, str]:
    """The daemon's `status` answer, or None and why it could not be had."""
    from memd.api import client

    try:
        # By name, as JSON: a daemon of another version answers in a shape of its own, whose
        # `version` this check still reads to say so.
        with client.Client(socket_path, timeout=timeout) as c:
            st = c.call("status", {})
    except DaemonNotRunning as exc:
        return None, str(exc)
    except MemdError as exc:
        return None, f"the daemon answered with an error: {exc}"
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    try:
        return decode_result(STATUS, st), ""
    except msgspec.ValidationError as exc:
        other = st.get("version") if isinstance(st, dict) else None
        runs = f" (it runs memd {other}, this command is {__version__})" if other else ""
        return None, f"{UNREADABLE}{runs}: {exc}"


def assess_daemon(
    status: StatusResult | None, why: str, socket_path: Path, version: str = __version__
) -> list[Check]:
    """Reachability and health (RSS, version, watcher mode) from the daemon's status answer."""
    if status is None and why.startswith(UNREADABLE):
        return [warn("daemon", why, "restart the daemon to run the installed version"
                     " (systemctl --user restart memd)")]  # fmt: skip
    if status is None:
        stale = socket_path.exists() and "no memd daemon is listening" in why
        detail = f"no daemon answers on {socket_path}" + (
            " (a stale socket file is left)" if stale else ""
        )
        return [
            fail(
                "daemon",
                f"{detail}: {why}" if why and "no memd daemon" not in why else detail,
                "start it: `memd service install` (at login) or `memd serve`; queries still work "
                "read-only without it, but nothing is watched, recorded or extracted",
            )
        ]
    d = status.daemon
    figures = {"pid": d.pid, "uptime_s": d.uptime_s, "rss_mb": d.rss_mb, "cpu_s": d.cpu_s,
               "threads": d.threads}  # fmt: skip
    data = {k: None if v is UNSET else v for k, v in figures.items()}
    rss = float(data["rss_mb"] or 0.0)
    detail = (
        f"pid {d.pid}, up {float(data['uptime_s'] or 0):.0f} s, RSS {rss:.1f} MB, "
        f"CPU {0 if d.cpu_s is UNSET else d.cpu_s} s, {'?' if d.threads is UNSET else d.threads} threads"
    )
    out: list[Check] = []
    if status.version and status.version != version:
        out.append(warn(
            "daemon",
            f"{detail}; it runs memd {status.version}, this command is {version}",
            "restart the daemon to run the installed version (systemctl --user restart memd)",
            data=data,
        ))  # fmt: skip
    elif rss > RSS_WARN_MB:
        out.append(warn(
            "daemon",
            f"{detail}: more memory than expected (< {RSS_WARN_MB:.0f} MB)",
            "restart it; if it grows again, report it with `memd status --json`",
            data=data,
        ))  # fmt: skip
    else:
        out.append(ok("daemon", detail, data=data))
    mode = "" if status.watcher is UNSET else status.watcher.mode
    if mode.startswith("polling"):
        out.append(warn(
            "watcher",
            mode,
            "raise fs.inotify.max_user_watches / max_user_instances and restart memd; polling "
            "notices edits later and costs CPU",
            mode=mode,
        ))  # fmt: skip
    elif mode == "native":
        out.append(ok("watcher", "native file events (inotify / FSEvents)", mode=mode))
    else:
        out.append(warn("watcher", f"watcher {mode or 'unknown'}", "restart the daemon", mode=mode))
    return out


def assess_service(report: ServiceReport, daemon_pid: int | None) -> Check:
    """Installed and active as a user service (systemd or launchd)?"""
    manager = report.manager or "service manager"
    active = dict(report.active or {})
    data = {"manager": report.manager, "installed": report.installed, "active": active}
    by_hand = f"; the daemon runs without it (pid {daemon_pid})" if daemon_pid else ""
    if report.manager is None:
        return warn("service", f"{report.detail or 'no supported service manager'}{by_hand}",
                     "run `memd serve` from your own supervisor", data=data)  # fmt: skip
    if not report.installed:
        return warn(
            "service",
            f"not installed as a {manager} user service{by_hand}",
            "`memd service install` starts memd at login and restarts it after a crash",
            data=data,
        )
    if not report.manager_available:
        detail = report.detail or f"{manager} cannot be asked"
        return warn(
            "service",
            f"installed, but {manager} is not reachable: {detail}{by_hand}",
            "run this from a login session; for systemd without one: loginctl enable-linger $USER",
            data=data,
        )
    states = ", ".join(f"{unit} {state}" for unit, state in active.items())
    if any(state == "failed" for state in active.values()):
        return fail(
            "service",
            f"installed: {states}",
            "see why: journalctl --user -u memd.service -n 50; then systemctl --user restart memd",
            data=data,
        )
    if any(state in ("active", "running") for state in active.values()):
        return ok("service", f"installed: {states}", data=data)
    return warn(
        "service",
        f"installed but not running: {states}",
        "systemctl --user enable --now memd.socket memd.service"
        if report.manager == "systemd"
        else "memd service install (bootstraps it again)",
        data=data,
    )


def check_service(settings: Settings, daemon_pid: int | None, runner: Runner) -> Check:
    try:
        report = service_status(settings, runner=runner)
    except (MemdError, OSError) as exc:
        return warn("service", f"cannot tell: {exc}")
    return assess_service(report, daemon_pid)
