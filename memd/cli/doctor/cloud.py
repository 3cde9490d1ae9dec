"""Cloud sync: off, or configured and answering."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from memd.cli.doctor.check import Check, fail, ok
from memd.core.errors import SyncRetryable
from memd.core.settings import Settings
from memd.sync.backend import make_backend

BackendFactory = Callable[[Settings, float], Any]


def check_sync(settings: Settings, timeout: float, factory: BackendFactory = make_backend) -> Check:
    """Cloud sync: off, or configured and answering `check()` within `timeout` seconds."""
    if not settings.sync_backend:
        return ok("sync", "cloud sync not configured (memory stays on this machine)", backend="")
    name = settings.sync_backend
    result: dict[str, Any] = {}

    def probe() -> None:
        backend = None
        try:
            backend = factory(settings, timeout)
            result["ok"] = backend.check()
        except Exception as exc:  # reported below: a broken backend must not break the doctor
            result["error"] = exc
        finally:
            if backend is not None:
                with contextlib.suppress(Exception):
                    backend.close()

    # DNS lookups ignore socket timeouts: the probe runs in a thread the doctor can abandon.
    t = threading.Thread(target=probe, name="memd-doctor-sync", daemon=True)
    t.start()
    t.join(timeout + 2.0)
    # Unreachable is a failure even when it may pass: nothing reaches the cloud right now.
    if t.is_alive():
        return fail("sync", f"{name}: no answer within {timeout + 2:.0f} s",
                     "check the network and sync.url / sync.dsn; changes wait in the outbox", backend=name)  # fmt: skip
    if "ok" in result:
        return ok("sync", str(result["ok"]), backend=name)
    exc = result["error"]
    hint = getattr(exc, "hint", "")
    if isinstance(exc, SyncRetryable):
        return fail("sync", f"{name} unreachable: {exc}", hint or "check the network and the server; "
                     "changes wait in the outbox and are retried with backoff", backend=name)  # fmt: skip
    return fail(
        "sync", f"{name}: {exc}", hint or "check the sync.* settings (memd config)", backend=name
    )
