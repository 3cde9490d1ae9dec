"""Shared fixtures: an isolated environment, a real daemon, a store on disk."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pgserver import pg  # noqa: F401  (one PostgreSQL cluster for the whole session)
from tests.utils import DaemonProcess


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's real config, memory or Claude Code logs."""
    for k in list(os.environ):
        if k.startswith(("MEMD_", "XDG_", "LISTEN_", "NOTIFY_SOCKET", "ANTHROPIC_", "SUPABASE_")):
            monkeypatch.delenv(k, raising=False)
    # Recall by meaning is on by default where the extra is installed (as here); the tests
    # that exercise it turn it on themselves, the others keep the full-text path.
    monkeypatch.setenv("MEMD_SEMANTIC_KIND", "off")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)


@pytest.fixture
def home() -> Iterator[Path]:
    """A short MEMD_HOME (AF_UNIX paths must stay under ~100 bytes)."""
    with tempfile.TemporaryDirectory(prefix="memd-t-", dir="/tmp") as d:
        yield Path(d)


@pytest.fixture
def daemon(home: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess(home).start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()
