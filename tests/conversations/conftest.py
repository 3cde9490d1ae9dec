"""Fixtures of the conversation tests: a real index file on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "index.db")
    yield s
    s.close()
