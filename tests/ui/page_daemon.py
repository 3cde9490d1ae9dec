"""Test-only: `memd serve` with the page's read-only methods (memd.memory.page_api) registered.

Until the daemon registers them itself, the memory page's tests start the daemon through this
module (``python -m tests.ui.page_daemon``), which adds them through the engine's feature list.
"""

from __future__ import annotations

from typing import Any

from memd import app
from memd.cli import main
from memd.memory import page_api


def _wire_page_api(engine: Any) -> None:
    engine.handlers.update(page_api.handlers(engine.store.read))


if __name__ == "__main__":
    app.FEATURES.append(_wire_page_api)
    raise SystemExit(main(["serve"]))
