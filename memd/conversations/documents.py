"""Read a log that is one document rewritten in place (a JSON chat, a Markdown history) when it
changed since the last read. Pure file I/O, like `memd.conversations.tailer` for append-only logs.

A document's checkpoint (`Checkpoint`) holds its inode, size, modification time and the SHA-1 of
its content (`head`); `offset` is its size once its content was read into turns, 0 while it could
not be (a JSON document caught mid-write is not valid JSON), so the reader tries it again on its
next pass. A document whose content is unchanged (only touched) is not parsed again.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from memd.conversations.tailer import Checkpoint
from memd.core.errors import SourceError
from memd.core.fsio import open_regular

__all__ = ["DocumentRead", "TooLarge", "read_document", "unchanged"]


class TooLarge(SourceError):
    """A document is larger than its reader takes; it is reported, not read."""


@dataclass(frozen=True, slots=True)
class DocumentRead:
    """One read: the content (None when it is what was read before) and the checkpoint for it,
    with `offset` set as if the content will be read into turns."""

    data: bytes | None
    checkpoint: Checkpoint


def unchanged(previous: Checkpoint | None, st: os.stat_result) -> bool:
    """Whether a document is, by its stat alone, the one read before (and that read worked)."""
    return (
        previous is not None
        and previous.inode == st.st_ino
        and previous.size == st.st_size
        and previous.mtime_ns == st.st_mtime_ns
        and previous.offset == st.st_size
    )


def read_document(path: str, previous: Checkpoint | None, max_bytes: int) -> DocumentRead:
    """The content of `path` when it changed since `previous`, and its checkpoint.

    Raises `FileNotFoundError` when the file is gone, `NotRegularFile` for a FIFO, socket or
    device, and `TooLarge` for a file over `max_bytes`.
    """
    with os.fdopen(open_regular(path, follow=True), "rb") as f:
        st = os.fstat(f.fileno())
        if unchanged(previous, st):
            assert previous is not None
            return DocumentRead(None, previous)
        if st.st_size > max_bytes:
            raise TooLarge(f"{st.st_size >> 20} MB, more than the {max_bytes >> 20} MB read")
        data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise TooLarge(f"grew past the {max_bytes >> 20} MB read while being read")
    digest = hashlib.sha1(data).hexdigest()
    cp = Checkpoint(path, st.st_ino, len(data), len(data), 0, digest, st.st_mtime_ns)
    if previous is not None and previous.head == digest and previous.offset == previous.size:
        return DocumentRead(None, cp)  # touched, not changed
    return DocumentRead(data, cp)
