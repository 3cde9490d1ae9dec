"""Giving freed memory back: glibc's malloc_trim where it exists, nothing elsewhere."""

from __future__ import annotations

import platform
import subprocess
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


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)
def test_glibc_is_found_without_starting_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding the C library starts no child process: every daemon start looks it up (ctypes'
    `find_library` ran `ldconfig -p` for it, as it did for memd/core/rename.py's Renamer)."""

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    trim._libc.cache_clear()
    trim.malloc_trim.cache_clear()
    try:
        assert trim.malloc_trim() is not None
        assert getattr(trim._libc(), "mallopt", None) is not None  # limit_arenas's
    finally:
        trim._libc.cache_clear()
        trim.malloc_trim.cache_clear()


def test_without_malloc_trim_nothing_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trim, "malloc_trim", lambda: None)
    assert trim.give_memory_back() is False


_ARENAS = """
import ctypes, sys, threading
from memd.core import trim
if sys.argv[1] == "limit":
    assert trim.limit_arenas(2)
def work():
    for _ in range(200):
        blocks = [bytearray(4096) for _ in range(50)]
        del blocks
barrier = threading.Barrier(8)
def run():
    barrier.wait()
    work()
threads = [threading.Thread(target=run) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
ctypes.CDLL(None).malloc_stats()
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="arenas are glibc's",
)
def test_limit_arenas_keeps_threads_to_that_many_arenas() -> None:
    """Eight threads allocating at once get arenas of their own, unless limited (glibc's
    malloc_stats names each arena)."""

    def arenas(mode: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", _ARENAS, mode], capture_output=True, text=True, check=True
        )
        return out.stderr.count("Arena ")

    assert arenas("free") > 2  # the test can tell
    assert 1 <= arenas("limit") <= 2
