"""Replacing a file in one step: a reader sees the old content or the new, never a mix.

The new content goes to a hidden temp file in the same folder (the watchers skip hidden
names), is flushed to disk, takes its permission bits and is renamed over the target; on any
failure the temp file is removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

TEMP_SUFFIX = ".memd-tmp"


@contextlib.contextmanager
def atomic_file(path: Path, *, mode: int | None = None, new_mode: int = 0o644) -> Iterator[IO[str]]:
    """A text file to write that replaces `path` when the block ends without an error.

    Missing parent folders are created. The result has permission bits `mode`; by default
    those of the file it replaces, or `new_mode` when there was none. Text is written as
    UTF-8, line endings untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = new_mode
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write(path: Path, text: str, *, mode: int | None = None, new_mode: int = 0o644) -> None:
    """Replace `path` with `text` in one step (see `atomic_file` for the permission bits)."""
    with atomic_file(path, mode=mode, new_mode=new_mode) as fh:
        fh.write(text)
