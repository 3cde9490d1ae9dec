"""The one interface every embedding backend implements, and helpers on its output.

An `Embedder` turns texts into an ``(n, dim)`` float32 matrix whose rows have unit length,
so a dot product is a cosine. Retrieval models are often asymmetric: a question and the
passage that answers it are embedded differently (e5's ``query: `` / ``passage: `` prefixes),
so `embed` takes the kind of text. Backends that do not distinguish ignore it.

This module imports numpy only for type checking: it is imported by code that must work
without the ``semantic`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

Kind = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """Texts in, unit-length float32 rows out."""

    @property
    def model_id(self) -> str:
        """Identifies the vectors: two embedders with the same id give comparable vectors.

        Stored next to every vector; when it changes, stored vectors are recomputed.
        """
        ...

    @property
    def dim(self) -> int:
        """Length of every vector (0 while an HTTP backend has not learned it yet)."""
        ...

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> Matrix:
        """Embed `texts` as queries or passages: an ``(len(texts), dim)`` float32 matrix.

        Rows are L2-normalised. An empty input gives a ``(0, dim)`` matrix. Raises an
        `~memd.semantic.errors.EmbeddingError` subclass when no vectors can be produced.
        """
        ...
