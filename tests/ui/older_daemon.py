"""Test-only: `memd serve` as an older memd answers, without `job_runs` and `edit_item`.

A daemon started before memd was upgraded keeps serving its own methods while the new `memd
ui` talks to it; the page must say what that daemon cannot do rather than fail. The memory
page's tests start this real daemon process (``python -m tests.ui.older_daemon``) to see that.
"""

from __future__ import annotations

from typing import Any

from memd import app
from memd.core.settings import Settings, load
from memd.daemon.process import Daemon, setup_logging
from memd.db import Store

MISSING = ("job_runs", "edit_item")


class OlderEngine(app.Engine):
    def __init__(self, settings: Settings, store: Store, **kw: Any) -> None:
        super().__init__(settings, store, **kw)
        for name in MISSING:
            del self.methods[name]


if __name__ == "__main__":
    s = load()
    setup_logging(s.log_level)
    raise SystemExit(Daemon(s, OlderEngine).run())
