"""Exact cosine top-k and normalisation."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from memd.semantic.errors import EmbeddingBadAnswer  # noqa: E402
from memd.semantic.vectors import normalise, top_k  # noqa: E402


def test_top_k_matches_a_full_sort() -> None:
    rng = np.random.default_rng(7)
    m = normalise(rng.normal(size=(5000, 32)))
    for _ in range(20):
        q = normalise(rng.normal(size=32))[0]
        idx, scores = top_k(m, q, 25)
        full = np.argsort(-(m @ q), kind="stable")[:25]
        assert idx.tolist() == full.tolist()
        np.testing.assert_allclose(scores, (m @ q)[full], rtol=1e-6)
        assert (np.diff(scores) <= 0).all()


def test_top_k_edges() -> None:
    m = normalise([[1, 0], [0, 1], [1, 0]])
    q = np.array([1, 0], dtype=np.float32)
    idx, scores = top_k(m, q, 10)  # k larger than the matrix
    assert idx.tolist() == [0, 2, 1]  # equal scores by row index
    assert scores.tolist() == pytest.approx([1.0, 1.0, 0.0])
    assert top_k(m, q, 0)[0].size == 0
    assert top_k(m[:0], q, 3)[0].size == 0
    with pytest.raises(ValueError, match="does not fit"):
        top_k(m, np.ones(3, dtype=np.float32), 1)


def test_normalise() -> None:
    m = normalise([[3, 4], [0, 2]])
    assert m.dtype == np.float32 and m.flags.c_contiguous
    np.testing.assert_allclose(m, [[0.6, 0.8], [0.0, 1.0]])
    with pytest.raises(EmbeddingBadAnswer, match="dimension 2, expected 3"):
        normalise([[1, 2]], dim=3)
    with pytest.raises(EmbeddingBadAnswer, match="all zeros"):
        normalise([[0, 0]])
    with pytest.raises(EmbeddingBadAnswer, match="NaN"):
        normalise([[1, float("inf")]])
    with pytest.raises(EmbeddingBadAnswer, match="numeric"):
        normalise([[1, 2], [3]])
    with pytest.raises(EmbeddingBadAnswer, match="shape"):
        normalise(np.ones((2, 2, 2)))
