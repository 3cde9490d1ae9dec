"""The OpenAI-compatible backend against a local fake server: answers, faults, retries."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("httpx")

from memd.semantic.errors import (  # noqa: E402
    EmbeddingBadAnswer,
    EmbeddingConfigError,
    EmbeddingRetryable,
)
from memd.semantic.remote import HttpEmbedder, endpoint_url  # noqa: E402
from tests import planted  # noqa: E402
from tests.semantic.fake_embeddings import FakeEmbeddings, Reply, vector_for  # noqa: E402


class Sleeps(list[float]):
    """Records the backoff delays instead of sleeping them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def server() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings(dim=8) as s:
        yield s


def client(server: FakeEmbeddings, **kw: Any) -> HttpEmbedder:
    kw.setdefault("sleep", Sleeps())
    return HttpEmbedder(server.url, "fake-model", **kw)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h:1/v1", "http://h:1/v1/embeddings"),
        ("http://h:1/v1/", "http://h:1/v1/embeddings"),
        ("http://h:1", "http://h:1/v1/embeddings"),
        ("https://api.example/v1/embeddings", "https://api.example/v1/embeddings"),
    ],
)
def test_endpoint_url(url: str, expected: str) -> None:
    assert endpoint_url(url) == expected


def test_normal_answer_is_normalised_and_in_input_order(server: FakeEmbeddings) -> None:
    emb = client(server, api_key="k-123")
    texts = ["alpha", "beta", "gamma"]
    m = emb.embed(texts)
    assert m.dtype == np.float32 and m.shape == (3, 8)
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, rtol=1e-6)
    # the fake answers in reverse order: rows must follow the "index" field
    for row, text in zip(m, texts, strict=True):
        want = np.array(vector_for(text, 8), dtype=np.float32)
        np.testing.assert_allclose(row, want / np.linalg.norm(want), rtol=1e-5)
    assert emb.dim == 8  # learned from the answer
    assert server.requests == [{"model": "fake-model", "input": texts, "encoding_format": "float"}]
    assert server.headers[0]["authorization"] == "Bearer k-123"
    assert emb.model_id == f"http:fake-model@{server.url}/embeddings"


def test_prefixes_and_batches(server: FakeEmbeddings) -> None:
    emb = client(server, batch_size=2, query_prefix="query: ", passage_prefix="passage: ")
    assert emb.embed(["a", "b", "c"], kind="passage").shape == (3, 8)
    assert emb.embed(["q"], kind="query").shape == (1, 8)
    assert [r["input"] for r in server.requests] == [
        ["passage: a", "passage: b"], ["passage: c"], ["query: q"],
    ]  # fmt: skip
    assert "authorization" not in server.headers[0]


def test_empty_input_sends_nothing(server: FakeEmbeddings) -> None:
    emb = client(server, dim=8)
    assert emb.embed([]).shape == (0, 8)
    assert server.requests == []


@pytest.mark.serial  # asserts a wall-clock bound (scripts/test runs it alone)
def test_slow_server_times_out_then_gives_up(server: FakeEmbeddings) -> None:
    server.enqueue(Reply(delay=1.0), Reply(delay=1.0))
    sleeps = Sleeps()
    emb = client(server, timeout_s=0.2, retries=1, sleep=sleeps)
    t0 = time.perf_counter()
    with pytest.raises(EmbeddingRetryable, match="timed out") as err:
        emb.embed(["x"])
    assert time.perf_counter() - t0 < 0.9  # two 0.2 s timeouts, not two 1 s answers
    assert "2 attempts" in str(err.value)
    assert sleeps == [0.5]


def test_an_answer_trickling_in_ends_at_the_total_deadline(server: FakeEmbeddings) -> None:
    # Headers at once, then a byte every 0.05 s: no single read ever waits past its timeout,
    # and the whole answer would take a minute.
    server.default = Reply(drip=0.05)
    emb = client(server, timeout_s=2.0, retries=0, deadline_s=0.5)
    t0 = time.perf_counter()
    with pytest.raises(EmbeddingRetryable, match=r"no answer within 0.5s in all"):
        emb.embed(["x"], kind="query")
    assert time.perf_counter() - t0 < 1.5  # the deadline and one byte's wait, not a minute
    # With retries, the deadline bounds them all.
    emb = client(server, timeout_s=2.0, retries=5, deadline_s=0.5, sleep=time.sleep)
    t0 = time.perf_counter()
    with pytest.raises(EmbeddingRetryable):
        emb.embed(["y"], kind="query")
    assert time.perf_counter() - t0 < 1.5


def test_queries_and_passages_are_redacted_before_they_are_sent(server: FakeEmbeddings) -> None:
    emb = client(server)
    prompt = planted.TEXT  # a whole prompt with keys, a password and <private> spans
    emb.embed([prompt], kind="query")
    emb.embed([prompt], kind="passage")
    sent = json.dumps(server.requests)
    assert planted.leaked(sent) == [] and planted.carried(sent) == list(planted.PUBLIC)


def test_slow_once_then_ok(server: FakeEmbeddings) -> None:
    server.enqueue(Reply(delay=1.0))
    emb = client(server, timeout_s=0.2, retries=2)
    assert emb.embed(["x"]).shape == (1, 8)


def test_500_then_ok(server: FakeEmbeddings) -> None:
    server.enqueue(Reply(status=500), Reply(status=503))
    sleeps = Sleeps()
    emb = client(server, retries=3, backoff_s=0.25, sleep=sleeps)
    assert emb.embed(["x"]).shape == (1, 8)
    assert len(server.requests) == 3
    assert sleeps == [0.25, 0.5]  # exponential backoff


def test_persistent_500_is_retryable_error(server: FakeEmbeddings) -> None:
    server.enqueue(*[Reply(status=500)] * 4)
    sleeps = Sleeps()
    emb = client(server, retries=3, backoff_s=1.0, backoff_cap_s=3.0, sleep=sleeps)
    with pytest.raises(EmbeddingRetryable, match="HTTP 500") as err:
        emb.embed(["x"])
    assert "4 attempts" in str(err.value)
    assert sleeps == [1.0, 2.0, 3.0]  # capped
    assert len(server.requests) == 4


def test_429_honours_retry_after(server: FakeEmbeddings) -> None:
    server.enqueue(Reply(status=429, headers={"Retry-After": "2"}))
    sleeps = Sleeps()
    emb = client(server, backoff_s=0.1, sleep=sleeps)
    assert emb.embed(["x"]).shape == (1, 8)
    assert sleeps == [2.0]


def test_401_is_config_error_without_retry(server: FakeEmbeddings) -> None:
    server.enqueue(Reply(status=401))
    sleeps = Sleeps()
    emb = client(server, sleep=sleeps)
    with pytest.raises(EmbeddingConfigError, match="HTTP 401"):
        emb.embed(["x"])
    assert len(server.requests) == 1 and sleeps == []


def test_wrong_path_is_config_error() -> None:
    with FakeEmbeddings() as server:
        emb = HttpEmbedder(server.url + "/nowhere/embeddings", "m", sleep=Sleeps())
        with pytest.raises(EmbeddingConfigError, match="HTTP 404"):
            emb.embed(["x"])


def test_connection_refused_is_retryable() -> None:
    with FakeEmbeddings() as server:
        url = server.url
    emb = HttpEmbedder(url, "m", retries=1, sleep=Sleeps())
    with pytest.raises(EmbeddingRetryable, match="ConnectError"):
        emb.embed(["x"])


def test_configured_dimension_is_checked(server: FakeEmbeddings) -> None:
    emb = client(server, dim=16)
    with pytest.raises(EmbeddingBadAnswer, match="dimension 8, expected 16"):
        emb.embed(["x"])


def test_dimension_change_between_answers_is_caught(server: FakeEmbeddings) -> None:
    emb = client(server)
    emb.embed(["x"])
    server.enqueue(Reply(dim=12))
    with pytest.raises(EmbeddingBadAnswer, match="dimension 12, expected 8"):
        emb.embed(["y"])


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(raw=b"<html>gateway</html>"), "not JSON"),
        (Reply(raw=b'{"object": "list"}'), "'data' list"),
        (Reply(raw=b'{"data": [{"index": 0}]}'), "no 'embedding'"),
        (Reply(raw=b'{"data": [{"index": 5, "embedding": [1, 2]}]}'), "bad index"),
        (Reply(raw=b'{"data": [{"index": 0, "embedding": ["a", "b"]}]}'), "numeric"),
        (Reply(raw=b'{"data": [{"index": 0, "embedding": [0, 0]}]}'), "all zeros"),
        (Reply(raw=b'{"data": [{"index": 0, "embedding": [1, NaN]}]}'), "NaN"),
        (Reply(drop_last=True), "returned 1 vectors for 2 texts"),
    ],
)
def test_malformed_bodies(server: FakeEmbeddings, reply: Reply, message: str) -> None:
    server.enqueue(reply)
    sleeps = Sleeps()
    emb = client(server, sleep=sleeps)
    with pytest.raises(EmbeddingBadAnswer, match=message):
        emb.embed(["x", "y"] if reply.drop_last else ["x"])
    assert sleeps == []  # a bad answer is not retried


def test_bad_settings_fail_at_construction() -> None:
    with pytest.raises(EmbeddingConfigError, match="not an http"):
        HttpEmbedder("localhost:11434", "m")
    with pytest.raises(EmbeddingConfigError, match="model name"):
        HttpEmbedder("http://localhost:11434", "")
