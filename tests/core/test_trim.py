"""Giving freed memory back: glibc's malloc_trim where it exists, nothing elsewhere."""

from __future__ import annotations

import platform
import sys

import pytest

from memd.core import trim


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)
def test_glibc_trim_is_found_and_runs() -> None:
    assert trim.malloc_trim() is not None
    assert trim.give_memory_back() is True
    assert trim.give_memory_back(collect=False) is True


def test_without_malloc_trim_nothing_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trim, "malloc_trim", lambda: None)
    assert trim.give_memory_back() is False
