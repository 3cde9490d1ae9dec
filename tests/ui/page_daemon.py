"""Test-only: `memd serve` with the page's read-only methods (memd.memory.page_api) registered.

Until the daemon registers them itself, the memory page's tests start the daemon through this
module (``python -m tests.ui.page_daemon``), which serves an engine with one more feature.
"""

from __future__ import annotations

from typing import Any

from memd import app
from memd.api import messages as m
from memd.api.methods import Feature, Method
from memd.core.settings import Settings, load
from memd.daemon.process import Daemon, setup_logging
from memd.db import Store
from memd.memory import page_api


class JobRunsParams(m.Params, frozen=True, kw_only=True):
    name: str = ""
    limit: int = 50


JOB_RUNS = m.Signature("job_runs", JobRunsParams, dict)


class PageEngine(app.Engine):
    def __init__(self, settings: Settings, store: Store, **kw: Any) -> None:
        super().__init__(settings, store, **kw)

        def job_runs(p: JobRunsParams) -> Any:
            return page_api.job_runs(store.read(), m.to_builtins(p))

        self.add(Feature("page", methods=[Method(JOB_RUNS, job_runs, runs="reader", why="test")]))


if __name__ == "__main__":
    s = load()
    setup_logging(s.log_level)
    raise SystemExit(Daemon(s, PageEngine).run())
