"""`memd doctor`: check everything memd depends on and say how to fix what is wrong.

Each check returns a `Check` (ok / warn / fail, what was found, how to fix it). `run_checks`
runs them all against a `Settings`; `render` and `report` present them; `exit_code` is 1 when
any check failed. The assessments are pure functions of what was measured (`assess_inotify`,
`assess_daemon`, `assess_service`, …) so each verdict can be tested on its own, and the
measuring shell around them never raises: a check that cannot run says so in its result.

The checks, by what they check: `config` (the settings file), `runtime` (Python and SQLite),
`folders` (folders and the socket's permissions), `inotify`, `daemon` (the running daemon and
its service), `llm` (the model extraction and summaries use, and why), `cloud` (sync), `index`,
`semantic` (recall by meaning) and `assistants` (each assistant memd reads: on, installed, read,
its problems); `check` holds the verdict type and the report.

Secrets are never printed: a key is reported by where it comes from, cloud backends scrub
their own messages, and every text leaving this package is scrubbed again of every configured
secret.
"""

from __future__ import annotations

import subprocess
import time

from msgspec import UNSET

from memd.api.messages import StatusResult
from memd.cli.doctor.assistants import assess_assistants, local_view
from memd.cli.doctor.check import (
    Check,
    Report,
    configured_secrets,
    exit_code,
    render,
    report,
    scrub,
)
from memd.cli.doctor.cloud import BackendFactory, check_sync
from memd.cli.doctor.config import load_settings
from memd.cli.doctor.daemon import assess_daemon, check_service, fetch_status
from memd.cli.doctor.folders import check_folders, check_permissions
from memd.cli.doctor.index import IndexReport, assess_index, assess_problems, inspect_index
from memd.cli.doctor.inotify import check_inotify
from memd.cli.doctor.llm import check_llm
from memd.cli.doctor.runtime import assess_sqlite, check_python
from memd.cli.doctor.semantic import assess_semantic
from memd.cli.service import Runner
from memd.core.errors import MemdError
from memd.core.settings import Settings
from memd.db.connection import sqlite_features
from memd.sync.backend import make_backend

__all__ = ["Check", "Report", "exit_code", "load_settings", "render", "report", "run_checks"]


def settled_llm(
    status: StatusResult | None, settings: Settings, timeout: float, wait_s: float = 10.0
) -> StatusResult | None:
    """The daemon's status once it has chosen its LLM backend (it decides in the background
    after starting, which takes a second when it asks Claude Code)."""
    end = time.monotonic() + wait_s
    while status is not None and status.llm is not UNSET and status.llm.backend == "deciding":
        if time.monotonic() > end:
            break
        time.sleep(0.2)
        status = fetch_status(settings.socket_path, timeout)[0]
    return status


def run_checks(
    settings: Settings,
    *,
    timeout: float = 3.0,
    runner: Runner = subprocess.run,
    backend_factory: BackendFactory = make_backend,
) -> list[Check]:
    """Run every check; `timeout` bounds the socket and cloud probes (seconds each)."""
    checks = [check_python(), assess_sqlite(sqlite_features()), check_folders(settings),
              check_permissions(settings), check_inotify(settings)]  # fmt: skip
    status, why = fetch_status(settings.socket_path, timeout)
    status = settled_llm(status, settings, timeout)
    checks += assess_daemon(status, why, settings.socket_path)
    checks.append(check_service(settings, status.daemon.pid if status else None, runner))
    try:
        ix = inspect_index(settings)
    except (MemdError, OSError) as exc:
        ix = IndexReport(exists=True, path=str(settings.db_path), error=str(exc))
    checks.append(assess_index(ix, status, time.time()))
    problems = ix.problems if status is None else status.problems or []
    checks.append(assess_problems(problems))
    checks.append(check_llm(settings, status.llm or None if status is not None else None))
    checks.append(check_sync(settings, timeout, backend_factory))
    checks.append(assess_semantic(status.semantic or None if status else None, settings))
    seen = status.logs.assistants if status and status.logs else []
    checks.append(assess_assistants(seen or local_view(settings), counted=bool(seen)))
    secrets = configured_secrets(settings)
    return [scrub(c, secrets) for c in checks]
