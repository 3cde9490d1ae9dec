"""Exact cosine search over a matrix of unit vectors, with numpy (part of the extra).

No approximate index: a matrix product over the scope at hand is exact, needs no build step
and no second copy of the vectors; `bench/semantic_eval.py` measures it at 10k and 100k rows.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memd.semantic.errors import EmbeddingBadAnswer

Matrix = npt.NDArray[np.float32]


def normalise(rows: npt.ArrayLike, *, dim: int | None = None) -> Matrix:
    """`rows` as a C-contiguous float32 matrix with unit-length rows.

    Raises `EmbeddingBadAnswer` on a non-2-D input, a wrong dimension, a non-finite value or
    an all-zero row: a vector that cannot be normalised cannot be compared with anything.
    """
    try:
        m = np.array(rows, dtype=np.float32, copy=True, ndmin=2)
    except (TypeError, ValueError) as exc:
        raise EmbeddingBadAnswer(f"vectors are not a numeric matrix: {exc}") from exc
    if m.ndim != 2:
        raise EmbeddingBadAnswer(f"vectors have shape {m.shape}, expected (n, dim)")
    if dim is not None and m.shape[0] and m.shape[1] != dim:
        raise EmbeddingBadAnswer(f"vectors have dimension {m.shape[1]}, expected {dim}")
    if not np.isfinite(m).all():
        raise EmbeddingBadAnswer("vectors contain NaN or infinite values")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    if m.shape[0] and not (norms > 0).all():
        raise EmbeddingBadAnswer("a vector is all zeros")
    m /= norms
    return np.ascontiguousarray(m)


def top_k(
    matrix: Matrix, query: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The `k` rows of `matrix` nearest to `query` by cosine, best first.

    Both must be unit-length (as every `Embedder` returns them), so cosine is a dot product.
    Returns (row indices, scores); fewer than `k` when the matrix has fewer rows. Equal
    scores among the returned rows are ordered by row index, so results are reproducible.
    """
    if matrix.ndim != 2 or query.shape != (matrix.shape[1],):
        raise ValueError(f"query of shape {query.shape} does not fit a matrix of {matrix.shape}")
    n = matrix.shape[0]
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float32)
    scores = matrix @ query
    if k < n:
        # argpartition is O(n); only the k survivors are sorted.
        part = np.argpartition(-scores, k - 1)[:k]
    else:
        part = np.arange(n)
    order = part[np.lexsort((part, -scores[part]))]
    return order.astype(np.intp, copy=False), scores[order]
