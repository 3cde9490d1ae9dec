"""A read-only map of strings to strings in three flat arrays instead of a dict of objects.

A dict of CC-CEDICT's ~194,000 headwords to their senses holds ~390,000 Python strings and
took ~64 MB of the daemon's memory for ~10 MB of text. `Packed` keeps the same map as one
UTF-8 buffer of ``key \\x1f value \\x1e`` records, their offsets and the keys' hashes, sorted
(32-bit arrays): a lookup is a binary search over the hashes, then a compare of the key's
bytes. ~1-2 µs a lookup, ~12 MB for the dictionary.

The hash is the CRC-32 of the key's UTF-8 bytes: the same in every process, so the three
arrays can be written to a file once (`to_bytes`) and read back by any later process without
building anything (`from_buffer`, over a memory-mapped file: only the pages a lookup touches
are read, and the kernel can drop them again).
"""

from __future__ import annotations

import struct
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

_HEAD = struct.Struct("<II")  # records, blob bytes


def key_hash(key: str) -> int:
    """The stable hash of a key (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(key.encode())


def _padded(n: int) -> int:
    return (n + 7) & ~7


class Packed:
    """`key → value` for string keys and values without the bytes 0x1e and 0x1f."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        entries = sorted((key_hash(k), k, v) for k, v in pairs)
        self._hashes: Sequence[int] = array("I", (h for h, _, _ in entries))
        parts: list[bytes] = []
        offsets = array("I", [0])
        at = 0
        for _, k, v in entries:
            record = f"{k}\x1f{v}\x1e".encode()
            parts.append(record)
            at += len(record)
            offsets.append(at)
        self._offsets: Sequence[int] = offsets  # one more than records: where each ends too
        self._blob: Any = b"".join(parts)  # bytes, or a view of a mapped file

    @classmethod
    def from_buffer(cls, buf: memoryview, at: int = 0) -> tuple[Packed, int]:
        """The map `to_bytes` wrote at `at` in `buf` (nothing copied), and where it ends.
        Raises ValueError when the sizes do not fit in `buf`."""
        if at + _HEAD.size > len(buf):
            raise ValueError("truncated")
        n, size = _HEAD.unpack_from(buf, at)
        start = at + _HEAD.size
        offsets_at = start + _padded(4 * n)
        blob_at = offsets_at + _padded(4 * (n + 1))
        end = blob_at + _padded(size)
        if end > len(buf):
            raise ValueError("truncated")
        self = cls.__new__(cls)
        self._hashes = buf[start : start + 4 * n].cast("I")
        self._offsets = buf[offsets_at : offsets_at + 4 * (n + 1)].cast("I")
        self._blob = buf[blob_at : blob_at + size]
        if self._offsets[0] != 0 or self._offsets[n] != size:
            raise ValueError("offsets do not match the records")
        return self, end

    def to_bytes(self) -> bytes:
        """The three arrays in one buffer (`from_buffer` reads it back), each 8-byte aligned."""
        n, size = len(self._hashes), len(self._blob)
        out = bytearray(_HEAD.pack(n, size))
        for part in (bytes(self._hashes), bytes(self._offsets), bytes(self._blob)):
            out += part + b"\0" * (_padded(len(part)) - len(part))
        return bytes(out)

    def __len__(self) -> int:
        return len(self._hashes)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key.encode())[0] >= 0

    def get(self, key: str, default: str | None = None) -> str | None:
        want = key.encode()
        i, start = self._find(want)
        if i < 0:
            return default
        return bytes(self._blob[start + len(want) + 1 : self._offsets[i + 1] - 1]).decode()

    def items(self) -> Iterator[tuple[str, str]]:
        """Every (key, value), in no particular order."""
        blob, offsets = self._blob, self._offsets
        for i in range(len(self._hashes)):
            k, _, v = bytes(blob[offsets[i] : offsets[i + 1] - 1]).decode().partition("\x1f")
            yield k, v

    @property
    def nbytes(self) -> int:
        n = len(self._hashes)
        return len(self._blob) + 4 * n + 4 * (n + 1)

    def _find(self, want: bytes) -> tuple[int, int]:
        """The record's index and offset, or (-1, 0)."""
        h = zlib.crc32(want)
        hashes, offsets, blob = self._hashes, self._offsets, self._blob
        i = bisect_left(hashes, h)
        n, width = len(hashes), len(want) + 1
        while i < n and hashes[i] == h:
            start = offsets[i]
            if blob[start : start + width] == want + b"\x1f":
                return i, start
            i += 1
        return -1, 0
