"""How long a request waits for its query's vector (`semantic.query_wait_ms`).

The packaged model takes ~20 ms of CPU for a short query and ~90 ms for 64 tokens, more on a
busy machine: a request waits for it at most `query_wait_ms` from when it asked, then answers
by full text; the vector, finished on the embedding thread, serves the next time the query is
asked, and vector search does not pause (a late vector is not a failure). An endpoint on the
network that is late still pauses vector search (`semantic.query_timeout_s`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    import numpy as _np
    import numpy.typing as npt

np = pytest.importorskip("numpy")

from memd.core import settings  # noqa: E402
from memd.core.errors import ConfigError  # noqa: E402
from memd.semantic.api import query_wait  # noqa: E402
from memd.semantic.base import Kind  # noqa: E402
from memd.semantic.cache import CachedEmbedder  # noqa: E402
from memd.semantic.recipe import plan  # noqa: E402
from memd.semantic.service import SemanticRecall  # noqa: E402


class SlowModel:
    """A query model that takes `delay_s` per call (the packaged model on a busy machine)."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.calls: list[str] = []
        self.done = threading.Event()

    @property
    def model_id(self) -> str:
        return "slow"

    @property
    def dim(self) -> int:
        return 4

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[_np.float32]:
        self.calls += texts
        time.sleep(self.delay_s)
        self.done.set()
        out: npt.NDArray[_np.float32] = np.zeros((len(texts), 4), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def recall(model: Any, wait_s: float | None, late_pauses: bool) -> SemanticRecall:
    r = SemanticRecall()
    # The index is not read on the way to a query vector.
    r.attach(CachedEmbedder(model), cast(Any, None), "test", wait_s=wait_s, late_pauses=late_pauses)
    return r


def test_a_late_vector_answers_without_it_and_serves_the_next_ask() -> None:
    model = SlowModel(0.4)
    r = recall(model, wait_s=0.03, late_pauses=False)
    p = plan("what is our cat called")
    t0 = time.monotonic()
    r.prefetch(p)
    assert r.query_vector(p) is None
    assert time.monotonic() - t0 < 0.3  # not the model's 0.4 s
    assert r.query_vector(p) is None  # the same request's second ranking: no second wait
    assert r.late == 1 and r.status().query_late == 1
    assert r.paused_until == 0.0 and not r.last_error  # late is not a failure
    assert model.done.wait(5)
    time.sleep(0.05)
    again = plan("what is our cat called")  # the next request asking the same
    r.prefetch(again)
    t1 = time.monotonic()
    vec = r.query_vector(again)
    assert vec is not None and vec[0] == 1.0
    assert time.monotonic() - t1 < 0.1
    assert model.calls == ["what is our cat called"]  # embedded once, for both


def test_the_wait_counts_from_the_ask_and_a_vector_done_meanwhile_is_used() -> None:
    model = SlowModel(0.1)
    r = recall(model, wait_s=0.03, late_pauses=False)
    p = plan("deploy pipeline for staging")
    r.prefetch(p)
    time.sleep(0.3)  # the request's full-text search, longer than the model took
    vec = r.query_vector(p)
    assert vec is not None and r.late == 0


def test_without_a_limit_the_request_waits_for_its_vector() -> None:
    r = recall(SlowModel(0.2), wait_s=None, late_pauses=False)
    p = plan("vitest config")
    r.prefetch(p)
    assert r.query_vector(p) is not None and r.late == 0


def test_a_late_endpoint_still_pauses_vector_search() -> None:
    r = recall(SlowModel(0.4), wait_s=0.03, late_pauses=True)
    p = plan("vitest config")
    r.prefetch(p)
    assert r.query_vector(p) is None
    assert r.paused_until > time.time() and "timed out" in r.last_error and r.late == 0


def test_the_packaged_models_vector_comes_late_within_a_millisecond_then_serves() -> None:
    packaged = pytest.importorskip("memd.semantic.packaged")
    try:
        model = packaged.PackagedEmbedder(threads=1)
    except Exception as exc:  # the extra is there but the engine cannot load here
        pytest.skip(f"packaged model unavailable: {exc}")
    r = recall(model, wait_s=0.001, late_pauses=False)
    p = plan("我们的猫叫什么名字")
    r.prefetch(p)
    assert r.query_vector(p) is None and r.late == 1  # a forward pass takes well over 1 ms
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not r.embedder.has(p.embed):  # type: ignore[union-attr]
        time.sleep(0.01)
    again = plan("我们的猫叫什么名字")
    r.prefetch(again)
    vec = r.query_vector(again)
    assert vec is not None and vec.shape == (384,) and r.late == 1


def test_the_settings_choose_the_wait() -> None:
    s = settings.load(env={})
    assert s.semantic_query_wait_ms == 30
    assert query_wait(s, standalone=False) == (0.03, False)
    assert query_wait(s, standalone=True) == (None, False)  # one CLI call waits for it
    off = settings.load(env={"MEMD_SEMANTIC_QUERY_WAIT_MS": "0"})
    assert query_wait(off, standalone=False) == (None, False)
    http = settings.load(env={"MEMD_SEMANTIC_KIND": "http"})
    assert query_wait(http, standalone=False) == (http.semantic_query_timeout_s, True)
    with pytest.raises(ConfigError, match="semantic.query_wait_ms must be 0"):
        settings.load(env={"MEMD_SEMANTIC_QUERY_WAIT_MS": "-5"})


class HeldCache(CachedEmbedder):
    """A query cache whose embedding call holds on once the vector is stored, before it returns:
    the moment a busy machine can leave between the cache holding a vector and the embedding
    thread's future being done."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.stored = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[_np.float32]:
        out = super().embed(texts, kind=kind)
        if not self.stored.is_set():  # the call that embedded; a cache hit returns at once
            self.stored.set()
            self.release.wait(5)
        return out


def test_a_vector_in_the_cache_serves_before_its_embedding_call_has_returned() -> None:
    model = SlowModel(0.0)
    cache = HeldCache(model)
    r = SemanticRecall()
    r.attach(cache, cast(Any, None), "test", wait_s=0.03, late_pauses=False)
    r.prefetch(plan("what is our cat called"))
    try:
        assert cache.stored.wait(5)
        time.sleep(0.05)  # longer than a request waits: only the cache can answer in time
        again = plan("what is our cat called")  # the next request asking the same
        r.prefetch(again)
        vec = r.query_vector(again)
        assert vec is not None and r.late == 0
    finally:
        cache.release.set()
    assert model.calls == ["what is our cat called"]  # embedded once
