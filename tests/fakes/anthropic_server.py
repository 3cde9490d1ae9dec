"""A local HTTP server that speaks the subset of the Anthropic Messages API memd uses.

Tests point the real `anthropic` client at it (`base_url=server.base_url`). Each
`POST /v1/messages` pops the next scripted `Reply` from a queue and records the
request, so a test can assert both what memd sent and how it handled the answer:

    with FakeAnthropic() as server:
        server.enqueue(rate_limited(), json_reply({"memories": []}))
        ...
        assert server.requests[0].body["thinking"] == {"type": "disabled"}

An empty queue answers 500 with an error naming the problem, so a missing script
fails loudly instead of hanging.

A request with `"stream": true` (Claude Code always streams) gets a 200 reply as the Messages
API's server-sent events (`message_start`, a text block's start, delta and stop,
`message_delta` with the stop reason and output tokens, `message_stop`); errors stay JSON.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: status, JSON body, extra headers, and a delay before it."""

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None  # sent as-is instead of `body` (malformed bodies)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.raw)
        return parsed


def message(
    content: list[dict[str, Any]],
    *,
    input_tokens: int = 120,
    output_tokens: int = 40,
    model: str = "claude-test-model",
    stop_reason: str = "end_turn",
) -> Reply:
    """A 200 answer with the recorded shape of a Messages API `message` object."""
    return Reply(
        body={
            "id": f"msg_fake{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


def text_reply(text: str, **kwargs: Any) -> Reply:
    """A message whose only content block is `text`."""
    return message([{"type": "text", "text": text}], **kwargs)


def json_reply(data: object, **kwargs: Any) -> Reply:
    """A message whose text block is `data` serialised as JSON."""
    return text_reply(json.dumps(data, ensure_ascii=False), **kwargs)


def thinking_then_json(data: object, **kwargs: Any) -> Reply:
    """A message that starts with a thinking block, as models with thinking on answer."""
    return message(
        [
            {"type": "thinking", "thinking": "Let me look at each turn.", "signature": "c2ln"},
            {"type": "text", "text": json.dumps(data, ensure_ascii=False)},
        ],
        **kwargs,
    )


def error(status: int, error_type: str, text: str, **headers: str) -> Reply:
    """An error answer with the API's error body shape."""
    return Reply(
        status=status,
        body={"type": "error", "error": {"type": error_type, "message": text}},
        headers=dict(headers),
    )


def rate_limited(retry_after_ms: int = 1) -> Reply:
    """429 with `retry-after: 0`; `retry-after-ms` keeps the SDK's own retry fast."""
    return Reply(
        status=429,
        body={"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}},
        headers={"retry-after": "0", "retry-after-ms": str(retry_after_ms)},
    )


def overloaded() -> Reply:
    """529, the API's "overloaded" status."""
    return error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"})


def slow(delay: float, then: Reply | None = None) -> Reply:
    """`then` (an empty JSON answer by default) after `delay` seconds."""
    base = then or json_reply({"memories": []})
    return Reply(status=base.status, body=base.body, headers=base.headers, delay=delay)


def _streamed(raw: bytes) -> bool:
    try:
        body = json.loads(raw)
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("stream"))


def sse_events(message: dict[str, Any]) -> bytes:
    """A `message` object as the server-sent events of a streamed answer."""
    usage = message.get("usage", {})
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for i, block in enumerate(message.get("content", [])):
        if block.get("type") != "text":
            continue
        events += [
            ("content_block_start", {"type": "content_block_start", "index": i,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": i,
                                     "delta": {"type": "text_delta", "text": block["text"]}}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]  # fmt: skip
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    events += [
        ("message_delta", {"type": "message_delta", "delta": delta,
                           "usage": {"output_tokens": usage.get("output_tokens", 0)}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


class FakeAnthropic:
    """A threaded loopback server on 127.0.0.1 with a random port; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval keeps shutdown (one per test) from costing half a second.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-anthropic",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: Reply) -> None:
        """Append scripted replies; each request consumes one."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._queue)

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        # Wake handlers sleeping in a scripted delay so no thread outlives the test.
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return error(500, "api_error", "fake server: no scripted reply left")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                with fake._lock:
                    fake.requests.append(
                        RecordedRequest(
                            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, raw
                        )
                    )
                if self.path.split("?")[0] != "/v1/messages":
                    self._send(error(404, "not_found_error", f"no route {self.path}"))
                    return
                reply = fake._next_reply()
                if reply.delay and fake._closing.wait(reply.delay):
                    return
                self._answer(reply, _streamed(raw))

            def _answer(self, reply: Reply, streamed: bool) -> None:
                if streamed and reply.status == 200 and reply.body is not None:
                    reply = Reply(
                        raw=sse_events(reply.body), headers={"content-type": "text/event-stream"}
                    )
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                headers = {"content-type": "application/json", "content-length": str(len(payload)),
                           "request-id": f"req_fake{next(_ids):06d}", **reply.headers}  # fmt: skip
                try:
                    self.send_response(reply.status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler
