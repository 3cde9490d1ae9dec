"""Read the complete lines appended to a log file since the last checkpoint. Pure file I/O.

A checkpoint identifies the file by inode and by a hash of its first bytes, so a
truncated, replaced or rotated file is noticed and read again from the start. The
caller relies on turn-id idempotency to make that re-read harmless.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import BinaryIO

from memd.core.fsio import open_regular

__all__ = ["HEAD_BYTES", "Checkpoint", "Chunk", "read_new"]

HEAD_BYTES = 1024


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """How far a file has been read.

    `offset` is the byte position after the last complete line returned and
    `lineno` that line's 1-based number; `size` is the file size seen by that read;
    `head` is the sha1 hex of the first `min(HEAD_BYTES, offset)` bytes; `mtime_ns` the file's
    modification time then (documents, read whole, use it to see a rewrite of the same size).
    """

    path: str
    inode: int
    size: int
    offset: int
    lineno: int
    head: str
    mtime_ns: int = 0


@dataclass(frozen=True, slots=True)
class Chunk:
    """The lines read by one call, as (1-based line number, bytes without the line ending)."""

    lines: list[tuple[int, bytes]]
    checkpoint: Checkpoint
    restarted: bool


def read_new(path: str, previous: Checkpoint | None, max_bytes: int = 8 << 20) -> Chunk:
    """Return the complete lines of `path` after `previous`, and the checkpoint after them.

    Reading resumes at `previous.offset` when the file is still the same file (same
    inode, first bytes unchanged) and has not shrunk below it; otherwise it restarts
    at offset 0 with `restarted=True`. Only lines ending in `\\n` are returned (a
    trailing `\\r` is removed); an unfinished last line is left for a later call.
    About `max_bytes` are read per call, so call again until no lines come back; a
    single line longer than `max_bytes` is still returned whole.

    Raises `FileNotFoundError` if the file does not exist, `NotRegularFile` for a FIFO, socket
    or device (opening one would block), and `ValueError` if `max_bytes` is not positive.
    """
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive, got {max_bytes}")
    # A log file may be a link the user made (their logs live where they like); it must be a
    # regular file, opened without blocking.
    with os.fdopen(open_regular(path, follow=True), "rb") as f:
        st = os.fstat(f.fileno())
        size = st.st_size
        head = f.read(HEAD_BYTES)
        if previous is None:
            start, lineno, restarted = 0, 0, False
        elif _same_file(previous, st.st_ino, size, head):
            start, lineno, restarted = previous.offset, previous.lineno, False
        else:
            start, lineno, restarted = 0, 0, True

        data = _read_complete(f, start, size, max_bytes)
        lines: list[tuple[int, bytes]] = []
        for raw in data.split(b"\n")[:-1]:
            lineno += 1
            lines.append((lineno, raw[:-1] if raw.endswith(b"\r") else raw))
        offset = start + len(data)
        checkpoint = Checkpoint(
            path=path,
            inode=st.st_ino,
            size=size,
            offset=offset,
            lineno=lineno,
            head=_digest(head, offset),
            mtime_ns=st.st_mtime_ns,
        )
    return Chunk(lines=lines, checkpoint=checkpoint, restarted=restarted)


def _same_file(previous: Checkpoint, inode: int, size: int, head: bytes) -> bool:
    return (
        previous.inode == inode
        and size >= previous.offset
        and _digest(head, previous.offset) == previous.head
    )


def _digest(head: bytes, offset: int) -> str:
    return hashlib.sha1(head[: min(HEAD_BYTES, offset)]).hexdigest()


def _read_complete(f: BinaryIO, start: int, size: int, max_bytes: int) -> bytes:
    """Bytes from `start` up to and including the last `\\n` within about `max_bytes`.

    Reads stop at `size` (the size seen when the call began) so the checkpoint is
    consistent even while a writer keeps appending.
    """
    f.seek(start)
    data = f.read(min(max_bytes, max(size - start, 0)))
    end = data.rfind(b"\n")
    while end < 0 and start + len(data) < size:
        # One line longer than max_bytes: keep reading until it ends.
        more = f.read(min(max_bytes, size - start - len(data)))
        if not more:
            break
        newline = more.find(b"\n")
        if newline >= 0:
            end = len(data) + newline
            data += more
            break
        data += more
    return data[: end + 1]
