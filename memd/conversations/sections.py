"""Read a document that is only ever appended to, in sections (Aider's chat history: one section
per run), from its last section's header on. Pure file I/O, like `memd.conversations.documents`.

Re-reading a whole history on every append made an append to a 15 MB file cost a second.
Instead the checkpoint (`Checkpoint`) keeps where the last section starts: `offset` (its header's
byte offset), `lineno` (the lines before it), and in `head` the header's key, how many headers
with that key came before it, and a digest of the file's first KiB, the 4 KiB before the header
and the header line. The next read starts there when the file is the same one grown (the same
inode, no shorter, the same digest); otherwise — truncated, replaced, rewritten around the
header — it is read whole again (`restarted`). The last section is read again each time: it is
the one still being appended to, and its turns keep their ids (counted from its header).

What is not seen: an edit of the file before its last section that leaves the first KiB and
the bytes around that header as they were (memd keeps what it read there).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from memd.conversations.documents import TooLarge
from memd.conversations.formats.contract import SectionStarts
from memd.conversations.tailer import Checkpoint
from memd.core.fsio import open_regular

__all__ = ["SectionsRead", "read_sections"]

_TAG = "sections"
_HEAD_BYTES = 1024
_BEFORE_BYTES = 4096


@dataclass(frozen=True, slots=True)
class SectionsRead:
    """One read: the bytes from `start` to the end (None when the file did not change since the
    checkpoint), the lines before `start`, `earlier(key)` (how many headers with that key come
    before `start`), whether the file was read whole again after a rewrite, and the checkpoint
    for once these bytes are read into turns."""

    data: bytes | None
    start: int
    lines_before: int
    earlier: Callable[[str], int]
    restarted: bool
    checkpoint: Checkpoint


@dataclass(frozen=True, slots=True)
class _Resume:
    offset: int
    lines_before: int
    key: str
    before: int  # headers with that key before this one
    digest: str
    latest: str  # the latest key of the file up to this header

    def head(self) -> str:
        return "|".join((_TAG, str(self.before), self.digest, self.latest, self.key))

    @classmethod
    def of(cls, cp: Checkpoint | None) -> _Resume | None:
        parts = cp.head.split("|") if cp is not None else []
        if cp is None or len(parts) != 5 or parts[0] != _TAG or not parts[1].isdigit():
            return None  # none yet, or read before as a whole document: read whole once
        _, before, digest, latest, key = parts
        return cls(cp.offset, cp.lineno, key, int(before), digest, latest)


def _digest(f: BinaryIO, offset: int) -> str:
    """The file's first KiB, the 4 KiB before `offset` and the line at `offset`."""
    f.seek(0)
    h = hashlib.sha1(f.read(min(_HEAD_BYTES, offset)))
    start = max(0, offset - _BEFORE_BYTES)
    f.seek(start)
    h.update(f.read(offset - start))
    h.update(f.readline(1 << 16))
    return h.hexdigest()


def read_sections(
    path: str, previous: Checkpoint | None, max_bytes: int, starts: SectionStarts
) -> SectionsRead:
    """The part of `path` to read now (see the module docstring) and the checkpoint after it.

    Raises `FileNotFoundError` when the file is gone, `NotRegularFile` for a FIFO, socket or
    device, and `TooLarge` when the part to read is over `max_bytes`.
    """
    with os.fdopen(open_regular(path, follow=True), "rb") as f:
        st = os.fstat(f.fileno())
        resume = _Resume.of(previous)
        if previous is not None and resume is not None and _same_stat(previous, st):
            return SectionsRead(None, 0, 0, _never, False, previous)
        restarted = False
        if resume is not None and not (
            previous is not None
            and previous.inode == st.st_ino
            and st.st_size >= resume.offset
            and _digest(f, resume.offset) == resume.digest
        ):
            resume, restarted = None, True
        start = resume.offset if resume is not None else 0
        if st.st_size - start > max_bytes:
            raise TooLarge(
                f"{(st.st_size - start) >> 20} MB to read, more than {max_bytes >> 20} MB"
            )
        f.seek(start)
        data = f.read(st.st_size - start)
        found = starts(data)
        earlier = _counter(path, start, resume, starts)
        last = _last(f, start, resume, found, earlier)
    cp = Checkpoint(path, st.st_ino, st.st_size, last.offset, last.lines_before, last.head(),
                    st.st_mtime_ns)  # fmt: skip
    lines_before = resume.lines_before if resume is not None else 0
    return SectionsRead(data, start, lines_before, earlier, restarted, cp)


def _same_stat(cp: Checkpoint, st: os.stat_result) -> bool:
    return cp.inode == st.st_ino and cp.size == st.st_size and cp.mtime_ns == st.st_mtime_ns


def _never(key: str) -> int:
    return 0


def _counter(
    path: str, start: int, resume: _Resume | None, starts: SectionStarts
) -> Callable[[str], int]:
    """`earlier(key)` for a read from `start`: the resumed header's count from the checkpoint; a
    key later than every key before (time goes on) has none before; another (a clock set back)
    is counted in the file before `start`, read only then."""
    if resume is None:
        return _never
    counted: dict[str, int] = {}

    def earlier(key: str) -> int:
        if key == resume.key:
            return resume.before
        if key > resume.latest:
            return 0
        if not counted:
            with os.fdopen(open_regular(path, follow=True), "rb") as f:
                for _, _, k in starts(f.read(start)):
                    counted[k] = counted.get(k, 0) + 1
            counted[""] = 0
        return counted.get(key, 0)

    return earlier


def _last(
    f: BinaryIO,
    start: int,
    resume: _Resume | None,
    found: list[tuple[int, int, str]],
    earlier: Callable[[str], int],
) -> _Resume:
    """Where the next read starts: the last header read (its count before it included)."""
    if not found:
        return resume if resume is not None else _Resume(0, 0, "", 0, _digest(f, 0), "")
    offset, lines, key = found[-1]
    before = earlier(key) + sum(1 for _, _, k in found[:-1] if k == key)
    base = resume.lines_before if resume is not None else 0
    latest = max([resume.latest if resume is not None else "", *(k for _, _, k in found)])
    return _Resume(start + offset, base + lines, key, before, _digest(f, start + offset), latest)
