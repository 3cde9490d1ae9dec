"""A read-only map of strings to strings in three flat arrays instead of a dict of objects.

A dict of CC-CEDICT's ~194,000 headwords to their senses holds ~390,000 Python strings and
took ~64 MB of the daemon's memory for ~10 MB of text. `Packed` keeps the same map as one
UTF-8 `bytes` of ``key \\x1f value \\x1e`` records, their offsets (`array('I')`) and the keys'
hashes, sorted (`array('q')`): a lookup is a binary search over the hashes, then a compare of
the key's bytes. ~1 µs a lookup, ~12 MB for the dictionary.

The hashes are Python's own `hash` of the key: different in every process (hash
randomisation), which is fine for a map built in the process that uses it, and never stored.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator

_KEY_END = 0x1F
_RECORD_END = b"\x1e"


class Packed:
    """`key → value` for string keys and values without the bytes 0x1e and 0x1f."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        entries = sorted((hash(k), k, v) for k, v in pairs)
        self._hashes = array("q", (h for h, _, _ in entries))
        parts: list[bytes] = []
        offsets = array("I")
        at = 0
        for _, k, v in entries:
            record = f"{k}\x1f{v}\x1e".encode()
            offsets.append(at)
            parts.append(record)
            at += len(record)
        self._offsets = offsets
        self._blob = b"".join(parts)

    def __len__(self) -> int:
        return len(self._hashes)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) >= 0

    def get(self, key: str, default: str | None = None) -> str | None:
        i = self._find(key)
        if i < 0:
            return default
        start = self._offsets[i]
        key_end = self._blob.index(_KEY_END, start)
        return self._blob[key_end + 1 : self._blob.index(_RECORD_END, key_end)].decode()

    def items(self) -> Iterator[tuple[str, str]]:
        """Every (key, value), in no particular order."""
        for record in self._blob.split(_RECORD_END)[:-1]:
            k, _, v = record.decode().partition("\x1f")
            yield k, v

    @property
    def nbytes(self) -> int:
        n = len(self._hashes)
        return len(self._blob) + (self._hashes.itemsize + self._offsets.itemsize) * n

    def _find(self, key: str) -> int:
        h = hash(key)
        i = bisect_left(self._hashes, h)
        want = key.encode() + b"\x1f"
        blob, n = self._blob, len(self._hashes)
        while i < n and self._hashes[i] == h:
            if blob.startswith(want, self._offsets[i]):
                return i
            i += 1
        return -1
