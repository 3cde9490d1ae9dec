"""Renaming that cannot lose a file: swap two names in one step, or rename only onto no file.

`renameat2(RENAME_EXCHANGE / RENAME_NOREPLACE)` on Linux and `renamex_np(RENAME_SWAP /
RENAME_EXCL)` on macOS, through ctypes; `Renamer.exchange` says when the system or file
system cannot swap, and `Renamer.create` falls back to link-then-unlink, which also refuses
an existing name. A `Renamer` remembers what the system could not do; the memory files' door
owns one (nothing here is kept at module level).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_RENAME_SWAP = 0x2  # macOS renamex_np
_RENAME_EXCL = 0x4


class Renamer:
    """`renameat2`/`renamex_np` through ctypes, where the C library has them."""

    def __init__(self) -> None:
        self.exchange_ok = False
        self.noreplace_ok = False
        self._fn: Any = None
        self._mac = sys.platform == "darwin"
        try:
            # The running program's own symbols hold the C library's on Linux (dlopen of
            # NULL): `find_library("c")` there runs `ldconfig -p` in a child process, which
            # every daemon start and every write of a command paid (~2 ms of CPU, ~10 ms wall).
            libc = ctypes.CDLL(ctypes.util.find_library("c") if self._mac else None, use_errno=True)
            if self._mac:
                fn = libc.renamex_np
                fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
            else:
                fn = libc.renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                               ctypes.c_uint]  # fmt: skip
            fn.restype = ctypes.c_int
        except (OSError, AttributeError):
            return
        self._fn = fn
        self.exchange_ok = self.noreplace_ok = True

    def _call(self, src: Path, dst: Path, flags: int) -> None:
        a, b = os.fsencode(src), os.fsencode(dst)
        rc = self._fn(a, b, flags) if self._mac else self._fn(_AT_FDCWD, a, _AT_FDCWD, b, flags)
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(src), None, str(dst))

    def exchange(self, a: Path, b: Path) -> bool:
        """Swap two names in one step; False when this system or file system cannot."""
        if not self.exchange_ok:
            return False
        try:
            self._call(a, b, _RENAME_SWAP if self._mac else _RENAME_EXCHANGE)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
                self.exchange_ok = False  # e.g. a file system without it: check, then rename
                log.info("atomic swap unsupported here (%s): using check-then-rename", exc)
                return False
            raise
        return True

    def create(self, src: Path, dst: Path) -> None:
        """Rename `src` to `dst` only if `dst` does not exist (FileExistsError otherwise)."""
        if self.noreplace_ok:
            try:
                self._call(src, dst, _RENAME_EXCL if self._mac else _RENAME_NOREPLACE)
                return
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise
                self.noreplace_ok = False
        os.link(src, dst)  # fails with EEXIST; then the temp name goes
        os.unlink(src)
