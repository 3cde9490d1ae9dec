"""An OpenAI-compatible ``/v1/embeddings`` client (Ollama, llama.cpp's server, hosted APIs).

For users who run a stronger model than the packaged one. One POST per batch of texts:

    {"model": ..., "input": [...], "encoding_format": "float"}
    -> {"data": [{"index": 0, "embedding": [...]}, ...], ...}

Failures are sorted the way memd's other network edges sort them: a timeout, a refused
connection, 429 or any 5xx is retried with exponential backoff (honouring ``Retry-After``)
and, when the retries run out, raised as `EmbeddingRetryable`; any other 4xx is
`EmbeddingConfigError` at once (retrying a bad key or an unknown model cannot help); a 200
whose body is not the vectors asked for is `EmbeddingBadAnswer`.

What is sent is redacted first, with the same redactor as the index (`memd.core.redact`):
passages come from the index already redacted, and queries (whole prompts, from the hooks) are
redacted here, so no secret reaches the endpoint. With `deadline_s`, one `embed` call ends
within about that long whatever the server does (an answer trickling in a byte at a time
included): every network wait is bounded by the time left, and the body is read in chunks
with the clock checked between them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from memd.core.redact import redact
from memd.semantic.base import Kind
from memd.semantic.errors import (
    EmbeddingBadAnswer,
    EmbeddingConfigError,
    EmbeddingRetryable,
)
from memd.semantic.vectors import normalise

RETRY_STATUS = frozenset({408, 409, 429})
MAX_RETRY_AFTER_S = 30.0


def endpoint_url(url: str) -> str:
    """The embeddings endpoint for a base URL (``http://h:11434/v1`` or the full path)."""
    u = url.rstrip("/")
    if u.endswith("/embeddings"):
        return u
    if not u.endswith("/v1"):
        u += "/v1"
    return u + "/embeddings"


class HttpEmbedder:
    """Embeddings from an OpenAI-compatible HTTP endpoint.

    `dim` is checked on every answer when given; otherwise the first answer fixes it and
    later answers must match. `query_prefix`/`passage_prefix` are prepended for models that
    want them (``"query: "`` and ``"passage: "`` for e5 served by Ollama). `deadline_s` (0:
    none) bounds one `embed` call in all, retries included; `timeout_s` bounds each network
    wait. `sleep` is the function waited with between retries.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str = "",
        dim: int = 0,
        timeout_s: float = 10.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 8.0,
        batch_size: int = 64,
        query_prefix: str = "",
        passage_prefix: str = "",
        deadline_s: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise EmbeddingConfigError(f"embedding endpoint {url!r} is not an http(s) URL")
        if not model:
            raise EmbeddingConfigError("an embedding endpoint needs a model name")
        self.url = endpoint_url(url)
        self.model = model
        self._dim = dim
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        self.batch_size = max(1, batch_size)
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.prefixes: dict[Kind, str] = {"query": query_prefix, "passage": passage_prefix}
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s), headers=headers)
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``http:<model>@<endpoint>``: the same model name on another server may differ."""
        return f"http:{self.model}@{self.url}"

    @property
    def dim(self) -> int:
        """The configured dimension, or the one learned from the first answer (0 before)."""
        return self._dim

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        """Embed `texts`, `batch_size` per request; see the module docstring for errors."""
        prefix = self.prefixes[kind]
        items = [prefix + redact(t) for t in texts]
        if not items:
            return np.zeros((0, self._dim), dtype=np.float32)
        deadline = time.monotonic() + self.deadline_s if self.deadline_s > 0 else None
        parts = [self._embed_batch(items[i : i + self.batch_size], deadline)
                 for i in range(0, len(items), self.batch_size)]  # fmt: skip
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    # -- one request ----------------------------------------------------------------------
    def _embed_batch(self, items: list[str], deadline: float | None) -> npt.NDArray[np.float32]:
        body = {"model": self.model, "input": items, "encoding_format": "float"}
        attempt = 0
        while True:
            try:
                status, headers, content = self._post(body, deadline)
            except httpx.TimeoutException as exc:
                failure = f"timed out after {self.timeout_s}s ({type(exc).__name__})"
                retry_after = None
            except _PastDeadline:
                failure = f"timed out: no answer within {self.deadline_s:g}s in all"
                retry_after = None
            except httpx.TransportError as exc:
                failure = f"{type(exc).__name__}: {exc}"
                retry_after = None
            else:
                if status == 200:
                    return self._vectors(content, len(items))
                if status in RETRY_STATUS or status >= 500:
                    failure = f"HTTP {status}: {_short(_text(content))}"
                    retry_after = _retry_after(headers)
                else:
                    raise EmbeddingConfigError(
                        f"{self.url} refused the request: HTTP {status}: {_short(_text(content))}",
                        hint="check semantic.url, semantic.model and the API key",
                    )
            delay = min(self.backoff_cap_s, self.backoff_s * 2**attempt)
            if retry_after is not None:
                delay = max(delay, min(retry_after, MAX_RETRY_AFTER_S))
            if attempt >= self.retries or (
                deadline is not None and time.monotonic() + delay >= deadline
            ):
                raise EmbeddingRetryable(
                    f"{self.url}: {failure} (gave up after {attempt + 1} attempts)"
                )
            self._sleep(delay)
            attempt += 1

    def _post(
        self, body: dict[str, Any], deadline: float | None
    ) -> tuple[int, httpx.Headers, bytes]:
        """One POST: (status, headers, body). Past `deadline`, `_PastDeadline`."""
        timeout = self.timeout_s
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
            if timeout <= 0:
                raise _PastDeadline
        with self._client.stream("POST", self.url, json=body, timeout=timeout) as resp:
            chunks = []
            for chunk in resp.iter_bytes():
                chunks.append(chunk)
                if deadline is not None and time.monotonic() > deadline:
                    raise _PastDeadline
            return resp.status_code, resp.headers, b"".join(chunks)

    def _vectors(self, content: bytes, n: int) -> npt.NDArray[np.float32]:
        try:
            payload = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EmbeddingBadAnswer(
                f"{self.url} answered 200 with a body that is not JSON: {exc}"
            ) from exc
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbeddingBadAnswer(
                f"{self.url} answered without a 'data' list: {_short(payload)}"
            )
        if len(data) != n:
            raise EmbeddingBadAnswer(f"{self.url} returned {len(data)} vectors for {n} texts")
        rows: list[Any] = [None] * n
        for pos, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
                raise EmbeddingBadAnswer(f"{self.url}: item {pos} has no 'embedding' list")
            idx = item.get("index", pos)
            if not isinstance(idx, int) or not 0 <= idx < n or rows[idx] is not None:
                raise EmbeddingBadAnswer(f"{self.url}: item {pos} has a bad index {idx!r}")
            rows[idx] = item["embedding"]
        with self._lock:
            width = len(rows[0])
            if self._dim and width != self._dim:
                raise EmbeddingBadAnswer(
                    f"{self.url} returned vectors of dimension {width}, expected {self._dim}",
                    hint="the model behind the endpoint changed, or semantic.dim is wrong",
                )
            if any(len(r) != width for r in rows):
                raise EmbeddingBadAnswer(f"{self.url} returned vectors of different lengths")
            m = normalise(rows, dim=width)
            if not self._dim:
                self._dim = width
        return m


class _PastDeadline(Exception):
    """One `embed` call ran out of its total time."""


def _retry_after(headers: httpx.Headers) -> float | None:
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace")


def _short(obj: object, limit: int = 200) -> str:
    text = obj if isinstance(obj, str) else repr(obj)
    return text if len(text) <= limit else text[:limit] + "…"
