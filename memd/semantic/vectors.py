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


# -- compact storage: one byte per dimension ----------------------------------------------------
# A stored vector is its row quantised to int8 with a scale of its own: `SCALE_BYTES` of
# little-endian float32 (the row's largest magnitude / 127), then `dim` signed bytes. A unit
# vector of 384 dimensions takes 388 bytes instead of 1,536, and a cosine computed from it is
# within ~0.002 of the float32 one (docs/retrieval.md has what that costs in recall).
SCALE_BYTES = 4
CHUNK_ROWS = 512
"""Rows converted to float32 at a time when scoring: small enough to stay in the CPU's cache,
which makes the int8 matrix faster to scan than a float32 one of the same rows."""
Quantised = npt.NDArray[np.int8]


def quantise(rows: Matrix) -> tuple[Quantised, npt.NDArray[np.float32]]:
    """`rows` (n, dim) as int8 rows and a float32 scale per row (row ≈ int8 row × scale)."""
    m = np.asarray(rows, dtype=np.float32)
    top = np.abs(m).max(axis=1) if m.size else np.zeros(m.shape[0], dtype=np.float32)
    scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
    q = np.rint(m / scale[:, None]).clip(-127, 127).astype(np.int8)
    return q, scale


def encode(rows: Matrix) -> list[bytes]:
    """Each row of `rows` in the stored form (scale, then the int8 values)."""
    q, scale = quantise(rows)
    return [s.astype("<f4").tobytes() + r.tobytes() for s, r in zip(scale, q, strict=True)]


def decode(blobs: list[bytes], dim: int) -> tuple[Quantised, npt.NDArray[np.float32]]:
    """Stored rows back as an (n, dim) int8 matrix and its scales (blobs must be `dim`
    values long: see `stored_dim`)."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.int8), np.zeros(0, dtype=np.float32)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), SCALE_BYTES + dim)
    scale = np.ascontiguousarray(raw[:, :SCALE_BYTES]).view("<f4").reshape(-1).astype(np.float32)
    return np.ascontiguousarray(raw[:, SCALE_BYTES:]).view(np.int8), scale


def stored_dim(blob: bytes) -> int:
    """The dimension of a stored row."""
    return len(blob) - SCALE_BYTES


def scores(matrix: Quantised, scale: npt.NDArray[np.float32], query: Matrix) -> Matrix:
    """Cosines of `query` (unit length, float32) with every quantised row."""
    n, dim = matrix.shape
    out = np.empty(n, dtype=np.float32)
    buf = np.empty((min(n, CHUNK_ROWS), dim), dtype=np.float32)
    q = np.asarray(query, dtype=np.float32)
    for i in range(0, n, CHUNK_ROWS):
        j = min(n, i + CHUNK_ROWS)
        part = buf[: j - i]
        part[...] = matrix[i:j]
        np.dot(part, q, out=out[i:j])
    out *= scale
    return out
