"""An LRU cache of query embeddings in front of any `Embedder`.

Questions repeat (an assistant asks `context` for the same prompt several times while it
works), and embedding one query costs milliseconds where the rest of `context` costs
fractions of one. Passages are never cached: each is embedded once and stored.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memd.semantic.base import Embedder, Kind


class CachedEmbedder:
    """`embedder` with its last `size` query vectors kept in memory (thread-safe).

    Cached rows are stored read-only and `embed` returns copies, so a caller cannot change
    what the next caller gets.
    """

    def __init__(self, embedder: Embedder, size: int = 512) -> None:
        self.inner = embedder
        self.size = max(1, size)
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        """The wrapped embedder's id."""
        return self.inner.model_id

    @property
    def dim(self) -> int:
        """The wrapped embedder's dimension."""
        return self.inner.dim

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        """Queries from the cache where possible (misses embedded in one call); passages as is."""
        if kind != "query":
            return self.inner.embed(texts, kind=kind)
        found: dict[str, npt.NDArray[np.float32]] = {}
        with self._lock:
            for t in texts:
                row = self._cache.get(t)
                if row is not None:
                    self._cache.move_to_end(t)
                    found[t] = row
            self.hits += sum(1 for t in texts if t in found)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = self.inner.embed(missing, kind="query")
            with self._lock:
                self.misses += len(missing)
                for t, row in zip(missing, fresh, strict=True):
                    row = row.copy()
                    row.flags.writeable = False
                    found[t] = row
                    self._cache[t] = row
                    self._cache.move_to_end(t)
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        if not texts:
            return self.inner.embed([], kind="query")
        return np.stack([found[t] for t in texts])

    def has(self, text: str) -> bool:
        """Whether `text`'s query vector is cached (the cache's order and counts unchanged)."""
        with self._lock:
            return text in self._cache

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One query's vector (read-only), from the cache when it was asked before."""
        with self._lock:
            row = self._cache.get(text)
            if row is not None:
                self._cache.move_to_end(text)
                self.hits += 1
                return row
        vec: npt.NDArray[np.float32] = self.embed([text], kind="query")[0]
        vec.flags.writeable = False
        return vec
