"""The daemon and its upkeep: `serve`, `status`, `reindex`, the jobs (`extract`, `summarize`,
`archive`), `config`, `workspace`, `service`, `doctor` and `demo`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memd.cli.commands import call, emit, settings_for
from memd.core.errors import MemdError


def cmd_serve(args: argparse.Namespace) -> int:
    from memd import app

    s = settings_for(args)
    app.setup_logging(s.log_level)
    overrides = {"log.level": args.log_level} if args.log_level else None
    return app.daemon(
        s, config_file=Path(args.config) if args.config else None, overrides=overrides
    ).run()


def cmd_status(args: argparse.Namespace) -> int:
    from memd.api import messages as m
    from memd.cli import render

    st = call(args, m.STATUS, m.NoParams())
    emit(args, st, lambda: render.status_text(st))
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    res = call(args, m.REINDEX, m.ReindexParams(full=args.full), write=True, progress=True)
    emit(
        args,
        res,
        f"{'rebuilt' if res.full else 'reconciled'}: {res.indexed} indexed, {res.unchanged} unchanged,"
        f" {res.deleted} deleted, {res.problems} problems in {res.seconds}s",
    )
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    """`memd extract|archive|summarize [--now]`: run the job now, or show what it did last.

    Exits 1 when a run asked for did not do its work: it failed, must be retried, was refused
    for configuration or ran out of its token budget.
    """
    import time

    from memd.api import messages as m
    from memd.cli import render

    if not args.now:
        job = call(args, m.STATUS, m.NoParams()).jobs.get(args.job_name)
        emit(args, job, lambda: render.job_text(args.job_name, job, time.time()))
        return 0
    res = call(args, m.RUN_JOB, m.RunJobParams(name=args.job_name), write=True)
    emit(args, res, lambda: render.run_text(res.job, res.outcome, res.message, res.counts))
    return 0 if res.outcome in ("success", "nothing_to_do") else 1


def cmd_config(args: argparse.Namespace) -> int:
    """`memd config`: the settings in force as TOML (paste-able); `--json` adds the table."""
    from memd.core import settings

    s = settings_for(args)
    file = settings.config_path(Path(args.config) if args.config else None)
    from memd.core.settings_toml import describe, to_toml

    rows = describe(s)

    emit(args, {"file": str(file), "settings": rows}, lambda: to_toml(s, file).rstrip())
    return 0


def cmd_service(args: argparse.Namespace) -> int:
    """`memd service install|uninstall|status`: the per-user systemd/launchd service."""
    from memd.cli import service as install
    from memd.cli.service_view import CommandRan

    s = settings_for(args)
    if args.action == "status":
        st = install.service_status(s)

        def status_text() -> str:
            active = ", ".join(f"{k} {v}" for k, v in (st.active or {}).items()) or "unknown"
            files = "\n".join(
                f"  {p} {'(present)' if ok else '(missing)'}" for p, ok in st.files.items()
            )
            lines = [f"{st.manager or 'no service manager'}: installed {'yes' if st.installed else 'no'};"
                     f" state {active}", files, f"socket {st.socket}"]  # fmt: skip
            return "\n".join(lines + ([st.detail] if st.detail else []))

        emit(args, st, status_text)
        return 0
    if args.action == "install":
        plan = install.plan_install(s, pass_env=args.env or ())
    else:
        plan = install.plan_uninstall(s)
    data = plan.view()
    if args.dry_run:
        data.dry_run = True
        emit(args, data, lambda: plan.describe() + "\n(dry run: nothing changed)")
        return 0
    res = install.apply(plan)
    data.written = [str(p) for p in res.written]
    data.removed = [str(p) for p in res.removed]
    data.commands = [CommandRan(run=list(c.argv), returncode=c.returncode,
                                        stderr=c.stderr.strip()) for c in res.commands]  # fmt: skip

    def text() -> str:
        lines = [f"wrote {p}" for p in res.written] + [f"removed {p}" for p in res.removed]
        for c in res.commands:
            mark = "ok" if c.ok else f"failed ({c.returncode}, ignored): {c.stderr.strip()}"
            lines.append(f"ran {' '.join(c.argv)}: {mark}")
        return "\n".join(lines + [f"note: {n}" for n in plan.notes])

    emit(args, data, text)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """`memd doctor`: every check with its verdict and a fix; exit 1 when something failed."""
    from memd.cli import doctor

    overrides = {"log.level": args.log_level} if args.log_level else None
    s, config = doctor.load_settings(Path(args.config) if args.config else None, overrides)
    checks = [config]
    if s is not None:
        checks += doctor.run_checks(s, timeout=min(args.timeout, 5.0))
    emit(args, doctor.report(checks), lambda: doctor.render(checks))
    return doctor.exit_code(checks)


def cmd_demo(args: argparse.Namespace) -> int:
    from memd.cli.demo import run_demo

    return run_demo(home=Path(args.home) if args.home else None, serve=args.serve)


def cmd_workspace(args: argparse.Namespace) -> int:
    """`memd workspace add|remove PATH`, `memd workspace list`: `memory.workspaces`."""
    from memd.cli import workspace
    from memd.core import settings

    s = settings_for(args)
    cfg = settings.config_path(Path(args.config) if args.config else None)
    if args.action == "list":
        _, listed = workspace.configured(cfg)
        emit(args, {"file": str(cfg), "workspaces": listed},
             lambda: "\n".join(listed) or f"no workspaces in {cfg}")  # fmt: skip
        return 0
    if not args.path:
        raise MemdError(f"say which folder: memd workspace {args.action} PATH")
    folder = workspace.folder_of(args.path) if args.action == "add" else _absolute(args.path)
    mine = [s.memory_dir, s.paths.data_dir, s.db_path.parent]
    if args.action == "add" and any(_inside(folder, p) for p in mine):
        raise MemdError(f"{folder} is inside memd's own folders; it cannot be a workspace")
    changed, listed = workspace.change(cfg, folder, add=args.action == "add")
    done = ("added to" if args.action == "add" else "removed from") if changed else (
        "already in" if args.action == "add" else "not in")  # fmt: skip
    told = _reload_daemon(s, args.timeout) if changed else ""
    emit(args, {"file": str(cfg), "workspaces": listed, "changed": changed},
         f"{folder}: {done} memory.workspaces in {cfg}{told}")  # fmt: skip
    return 0


def _absolute(raw: str) -> str:
    import os

    return os.path.abspath(os.path.expanduser(raw))


def _inside(folder: str, mine: Path) -> bool:
    import os

    real, own = os.path.realpath(folder), os.path.realpath(mine)
    return real == own or real.startswith(own.rstrip(os.sep) + os.sep)


def _reload_daemon(s: Any, timeout: float) -> str:
    """Ask the daemon on this socket to read its settings again (SIGHUP), and say so."""
    import os
    import signal

    from memd.api import client
    from memd.core.errors import DaemonNotRunning, DaemonStarting

    try:
        # By name, as JSON: only the pid is read, from a daemon of any version.
        with client.Client(s.socket_path, timeout=min(timeout, 5.0)) as c:
            pid = c.call("status")["daemon"]["pid"]
        os.kill(int(pid), signal.SIGHUP)
    except (DaemonNotRunning, DaemonStarting):
        return "; the daemon reads it when it starts"
    except (OSError, KeyError, TypeError, ValueError, MemdError) as exc:
        return f"; could not ask the daemon to read it again ({exc}): restart it"
    return f"; the daemon (pid {pid}) reads it again now"
