"""A local HTTP server speaking the OpenAI ``/v1/embeddings`` shape, with scripted faults.

Every request is recorded. A scripted `Reply` is popped per request when one is queued;
otherwise the server answers 200 with deterministic vectors: each text's vector is derived
from its SHA-256, so the same text always gets the same vector and different texts differ.

    with FakeEmbeddings(dim=8) as server:
        server.enqueue(Reply(status=500), Reply(status=500))   # two failures, then normal answers
        HttpEmbedder(server.url, "m").embed(["a"])
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `raw` is sent as the body verbatim (for malformed bodies);
    `dim` overrides the server's dimension for this answer; `delay` is slept first; with
    `drip`, the headers go at once and the body one byte every `drip` seconds."""

    status: int = 200
    raw: bytes | None = None
    dim: int | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    drop_last: bool = False
    drip: float = 0.0


def vector_for(text: str, dim: int) -> list[float]:
    """A deterministic, non-normalised vector for `text` (the client must normalise it)."""
    out: list[float] = []
    block = 0
    while len(out) < dim:
        digest = hashlib.sha256(f"{block}:{text}".encode()).digest()
        out += [(b - 127.5) / 10 for b in digest]
        block += 1
    return out[:dim]


class FakeEmbeddings:
    """The server; `url` is its base URL (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._replies: deque[Reply] = deque()
        # The answer when nothing is queued: set it to fail every request from now on.
        self.default = Reply()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def __enter__(self) -> FakeEmbeddings:
        self._thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _answer(self, body: dict[str, Any]) -> tuple[Reply, bytes]:
        with self._lock:
            reply = self._replies.popleft() if self._replies else self.default
        if reply.raw is not None:
            return reply, reply.raw
        if reply.status != 200:
            return reply, json.dumps({"error": {"message": f"scripted {reply.status}"}}).encode()
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dim = reply.dim or self.dim
        data = [{"object": "embedding", "index": i, "embedding": vector_for(t, dim)}
                for i, t in enumerate(inputs)]  # fmt: skip
        if reply.drop_last:
            data = data[:-1]
        data.reverse()  # clients must order by "index", not by position
        payload = {"object": "list", "data": data, "model": body.get("model"),
                   "usage": {"prompt_tokens": 1, "total_tokens": 1}}  # fmt: skip
        return reply, json.dumps(payload).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                body = json.loads(raw)
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path != "/v1/embeddings":
                    reply, out = Reply(status=404), b'{"error": "not found"}'
                else:
                    reply, out = server._answer(body)
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(out)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if reply.drip:
                        for i in range(len(out)):
                            self.wfile.write(out[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.drip)
                    else:
                        self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away: that is the test

        return Handler
