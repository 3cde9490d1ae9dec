"""Giving memory the process freed back to the operating system.

glibc keeps what a thread freed in that thread's arena, where a long-running daemon would
carry it as resting size all day; `malloc_trim` returns it. Other C libraries (musl, macOS's)
give memory back themselves or have no such call: there this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import sys
from collections.abc import Callable


@functools.cache
def malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
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
