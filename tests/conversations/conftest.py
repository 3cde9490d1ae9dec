"""Fixtures of the conversation tests: a real index file on disk, and the job fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.db import Store
from tests.jobenv import clock, env, server

__all__ = ["clock", "env", "server", "store"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "index.db")
    yield s
    s.close()
