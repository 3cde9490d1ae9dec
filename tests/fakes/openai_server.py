"""A local HTTP server that speaks the OpenAI-compatible chat API, as Ollama, LM Studio,
llama.cpp's server and vLLM do, with the faults they show.

Each `POST /v1/chat/completions` pops the next scripted `Reply` (`tests.fakes.anthropic_server`'s
type) and records the request; `GET /v1/models` lists `models`. `json_modes` is the set of
`response_format` types the server accepts: a request asking for another one is answered 400 the
way LM Studio answers (`'response_format.type' must be 'json_schema' or 'text'`) without using a
scripted reply, so a server with no JSON mode at all is `json_modes=set()`.

    with FakeOpenAI(json_modes={"json_object"}) as server:
        server.enqueue(chat_json({"memories": []}), rate_limited())

An empty queue answers 500 naming the problem, so a missing script fails loudly.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropic, RecordedRequest, Reply

_ids = itertools.count(1)


def chat(
    text: str | None,
    *,
    prompt_tokens: int | None = 200,
    completion_tokens: int = 30,
    finish_reason: str = "stop",
    model: str = "qwen2.5:7b-instruct",
) -> Reply:
    """A 200 chat completion whose message content is `text` (None: no content);
    `prompt_tokens=None` leaves `usage` out, as some servers do."""
    body: dict[str, Any] = {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1772442000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
    }
    if prompt_tokens is not None:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return Reply(body=body)


def chat_json(data: object, **kwargs: Any) -> Reply:
    """A completion whose content is `data` as JSON."""
    return chat(json.dumps(data, ensure_ascii=False), **kwargs)


def error(status: int, message: str, **headers: str) -> Reply:
    """An error in the OpenAI shape (`{"error": {"message", "type"}}`)."""
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "error", "code": status}},
        headers=dict(headers),
    )


def rate_limited(retry_after: str = "1") -> Reply:
    return error(429, "Rate limit reached for requests", **{"retry-after": retry_after})


def slow(delay: float, then: Reply) -> Reply:
    return Reply(status=then.status, body=then.body, headers=then.headers, delay=delay)


class FakeOpenAI(FakeAnthropic):
    """A threaded loopback server on 127.0.0.1 with a random port; use as a context manager.
    `base_url` is the API root (…/v1), as a user configures it. Queueing, recording and its
    life are `FakeAnthropic`'s; what it answers is the OpenAI-compatible API's."""

    def __init__(
        self,
        *,
        json_modes: Iterable[str] = ("json_schema", "json_object"),
        models: Iterable[str] = ("qwen2.5:7b-instruct",),
        api_key: str = "",
    ) -> None:
        self.json_modes = set(json_modes)
        self.models = list(models)
        self.api_key = api_key
        super().__init__()

    @property
    def base_url(self) -> str:
        return super().base_url + "/v1"

    @property
    def chats(self) -> list[RecordedRequest]:
        """The chat completion requests received, in order."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return error(500, "fake server: no scripted reply left")

    def _refusal(self, body: dict[str, Any]) -> Reply | None:
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind is None or kind == "text" or kind in self.json_modes:
            return None
        allowed = " or ".join(f"'{m}'" for m in sorted(self.json_modes | {"text"}))
        return Reply(status=400, body={"error": f"'response_format.type' must be {allowed}"})

    def _models(self, path: str, authorized: bool) -> Reply:
        if path != "/v1/models":
            return error(404, f"no route {path}")
        if not authorized:
            return error(401, "Incorrect API key provided")
        data = [{"id": m, "object": "model", "owned_by": "me"} for m in self.models]
        return Reply(body={"object": "list", "data": data})

    def _authorized(self, header: str | None) -> bool:
        return not self.api_key or header == f"Bearer {self.api_key}"

    def _chat(self, path: str, authorized: bool, raw: bytes) -> Reply:
        if path != "/v1/chat/completions":
            return error(404, f"no route {path}")
        if not authorized:
            return error(401, "Incorrect API key provided")
        return self._refusal(json.loads(raw)) or self._next_reply()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _record(self, raw: bytes) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake._lock:
                    fake.requests.append(RecordedRequest(self.command, self.path, headers, raw))

            def _authorized(self) -> bool:
                return fake._authorized(self.headers.get("authorization"))

            def do_GET(self) -> None:
                self._record(b"")
                self._send(fake._models(self.path, self._authorized()))

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                self._record(raw)
                reply = fake._chat(self.path, self._authorized(), raw)
                if reply.delay and fake._closing.wait(reply.delay):
                    return
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler
