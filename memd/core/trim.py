"""Giving memory the process freed back to the operating system, and holding less of it.

glibc keeps what a thread freed in that thread's arena, where a long-running daemon would
carry it as resting size all day; `malloc_trim` returns it. glibc also gives threads arenas
of their own, up to eight per core: each holds its own free memory, and the daemon's twenty
or so threads (the watchers' among them) mostly wait; `limit_arenas` caps how many there are.
Other C libraries (musl, macOS's) give memory back themselves or have no such calls: there
this is a no-op.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import sys
from collections.abc import Callable

M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The running program's own symbols hold the C library's (dlopen of NULL):
        # `find_library("c")` ran `ldconfig -p` in a child process at every daemon start.
        return ctypes.CDLL(None)
    except OSError:
        return None


def limit_arenas(n: int) -> bool:
    """Let glibc's malloc use at most `n` arenas from now on (threads share them); before the
    process starts its threads. True when set; False on another C library."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None or malloc_trim() is None:  # musl has mallopt, not arenas
        return False
    return bool(mallopt(M_ARENA_MAX, n))


@functools.cache
def malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where there is none."""
    libc = _libc()
    trim: Callable[[int], int] | None = getattr(libc, "malloc_trim", None)  # musl has none
    return trim


def give_memory_back(*, collect: bool = True) -> bool:
    """Return freed memory to the OS; first collect reference cycles (whose memory is not
    free until a full collection) unless `collect` is false. True when a trim ran."""
    if collect:
        gc.collect()
    trim = malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
