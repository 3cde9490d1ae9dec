"""The query-embedding LRU cache, in front of the HTTP backend and a fake server."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import numpy as _np
    import numpy.typing as npt

np = pytest.importorskip("numpy")
pytest.importorskip("httpx")

from memd.semantic.base import Kind  # noqa: E402
from memd.semantic.cache import CachedEmbedder  # noqa: E402
from memd.semantic.remote import HttpEmbedder  # noqa: E402
from tests.semantic.fake_embeddings import FakeEmbeddings  # noqa: E402


@pytest.fixture
def served() -> Iterator[tuple[FakeEmbeddings, CachedEmbedder]]:
    with FakeEmbeddings(dim=8) as server:
        yield server, CachedEmbedder(HttpEmbedder(server.url, "m"), size=2)


def test_queries_are_cached_and_evicted_lru(served: tuple[FakeEmbeddings, CachedEmbedder]) -> None:
    server, emb = served
    a1 = emb.embed_query("a")
    emb.embed_query("b")
    a2 = emb.embed_query("a")  # hit; "a" becomes the most recent
    np.testing.assert_array_equal(a1, a2)
    emb.embed_query("c")  # evicts "b", the least recent
    emb.embed_query("a")  # still cached
    emb.embed_query("b")  # asked again
    assert [r["input"] for r in server.requests] == [["a"], ["b"], ["c"], ["b"]]
    assert (emb.hits, emb.misses) == (2, 4)


def test_batch_asks_only_for_misses_once(served: tuple[FakeEmbeddings, CachedEmbedder]) -> None:
    server, emb = served
    emb.embed_query("a")
    m = emb.embed(["a", "x", "x", "a"], kind="query")
    assert m.shape == (4, 8)
    np.testing.assert_array_equal(m[0], m[3])
    np.testing.assert_array_equal(m[1], m[2])
    assert [r["input"] for r in server.requests] == [["a"], ["x"]]


def test_passages_are_not_cached_and_callers_cannot_poison(
    served: tuple[FakeEmbeddings, CachedEmbedder],
) -> None:
    server, emb = served
    emb.embed(["p"])
    emb.embed(["p"])
    assert len(server.requests) == 2
    got = emb.embed(["q"], kind="query")
    got[0][:] = 0  # the caller's copy
    assert np.linalg.norm(emb.embed(["q"], kind="query")[0]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        emb.embed_query("q")[0] = 1.0  # cached rows are read-only
    assert emb.embed([], kind="query").shape == (0, 8)
    assert (emb.model_id, emb.dim) == (emb.inner.model_id, 8)


def test_threads_share_one_cache() -> None:
    with FakeEmbeddings(dim=8) as server:
        emb = CachedEmbedder(HttpEmbedder(server.url, "m"), size=100)
        texts = [f"q{i}" for i in range(20)]
        errors: list[BaseException] = []

        def work() -> None:
            try:
                for t in texts:
                    assert emb.embed_query(t).shape == (8,)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(emb._cache) == 20
        assert emb.hits + emb.misses == 80  # every call counted once, hit or miss
        assert len(server.requests) == emb.misses


def test_a_cached_query_is_read_on_the_caller_s_thread(
    served: tuple[FakeEmbeddings, CachedEmbedder],
) -> None:
    """`SemanticRecall.prefetch` hands a query to the embedding thread only when its vector
    is not cached: a repeated query is answered without a thread hand-off."""
    from memd.semantic.recipe import plan
    from memd.semantic.service import SemanticRecall

    _, emb = served
    threads: list[str] = []

    class Recording(CachedEmbedder):
        def embed(
            self, texts: Sequence[str], *, kind: Kind = "passage"
        ) -> npt.NDArray[_np.float32]:
            threads.append(threading.current_thread().name)
            return super().embed(texts, kind=kind)

    rec = Recording(emb.inner)
    recall = SemanticRecall()
    recall.embedder = rec
    p = plan("where does my sister live?")
    for _ in range(2):
        recall.prefetch(p)
        vec = recall.query_vector(p)
        assert vec is not None and vec.shape == (8,)
    assert threads[0].startswith("memd-embed-query")
    assert threads[1:] == [threading.current_thread().name]
    assert rec.has(p.embed) and not rec.has("something else")
