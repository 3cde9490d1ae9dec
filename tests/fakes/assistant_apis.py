"""A loopback stand-in for the model APIs the real assistant CLIs call, so the live tests drive
Codex CLI, Gemini CLI and OpenCode headless with no internet.

It answers every call with the same short reply, in the wire format each CLI expects, and records
every request (what the model would have been given: instructions, messages, tools):

- OpenAI Responses API (Codex CLI): ``POST …/responses`` → SSE ``response.created``,
  ``response.output_item.added``, ``response.output_text.delta``, ``response.output_item.done``,
  ``response.completed`` with usage;
- Gemini API (Gemini CLI): ``POST …:generateContent`` (its router asks one JSON question first)
  and ``POST …:streamGenerateContent?alt=sse`` → ``data:`` events with candidates;
- OpenAI Chat Completions (OpenCode's OpenAI-compatible provider): ``POST …/chat/completions``,
  streamed (``data:`` chunks, ``[DONE]``) or not;
- any ``GET`` (model lists) → an empty list.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Call:
    """One request the stub received."""

    method: str
    path: str
    body: Any  # the JSON body (None when there is none)

    def text(self) -> str:
        """The whole request as text, for `in` checks."""
        return json.dumps(self.body, ensure_ascii=False)


class AssistantAPIs:
    """The stub: `with AssistantAPIs() as api: … api.base_url, api.calls`."""

    def __init__(self, reply: str = "Noted.") -> None:
        self.reply = reply
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def turns(self, marker: str) -> list[Call]:
        """The calls whose path holds `marker` (e.g. "streamGenerateContent")."""
        with self._lock:
            return [c for c in self.calls if marker in c.path]

    def __enter__(self) -> AssistantAPIs:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(api: AssistantAPIs) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            api.record(Call("GET", self.path, None))
            self._json({"data": [], "models": [], "object": "list"})

        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(size) if size else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            api.record(Call("POST", self.path, body))
            events, answer = _answer(api.reply, self.path, body)
            if events is not None:
                self._sse(events)
            elif answer is not None:
                self._json(answer)
            else:
                self._json({"error": {"message": f"the stub does not know {self.path}"}}, 404)

        def _json(self, obj: Any, status: int = 200) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: list[tuple[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                payload = data if isinstance(data, str) else json.dumps(data)
                self.wfile.write(f"{head}data: {payload}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


def _answer(
    reply: str, path: str, body: Any
) -> tuple[list[tuple[str, Any]] | None, dict[str, Any] | None]:
    """(SSE events, or a JSON body) for a POST; (None, None) for a path no CLI calls."""
    route = path.split("?")[0]
    if route.endswith("/responses"):
        return _responses(reply), None
    if ":streamGenerateContent" in path:
        return [("", _gemini(reply))], None
    if ":generateContent" in path:
        router = {"reasoning": "simple", "model_choice": "flash",
                  "complexity_reasoning": "simple", "complexity_score": 1}  # fmt: skip
        return None, _gemini(json.dumps(router))
    if route.endswith("/chat/completions"):
        if isinstance(body, dict) and body.get("stream"):
            return _chat_chunks(reply), None
        return None, _chat(reply)
    return None, None


def _responses(text: str) -> list[tuple[str, Any]]:
    rid, mid = f"resp_{time.monotonic_ns()}", f"msg_{time.monotonic_ns()}"
    item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}  # fmt: skip
    return [
        ("response.created", {"type": "response.created",
                              "response": {"id": rid, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": {**item, "status": "in_progress", "content": []}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": mid,
                                        "output_index": 0, "content_index": 0, "delta": text}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": item}),
        ("response.completed", {"type": "response.completed", "response": {
            "id": rid, "status": "completed", "output": [item], "usage": usage}}),
    ]  # fmt: skip


def _gemini(text: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 5,
                              "totalTokenCount": 10}}  # fmt: skip


def _chat(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
            "model": "stub", "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}  # fmt: skip


def _chat_chunks(text: str) -> list[tuple[str, Any]]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": "stub"}  # fmt: skip
    return [
        ("", {**base, "choices": [{"index": 0, "finish_reason": None,
                                   "delta": {"role": "assistant", "content": text}}]}),
        ("", {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}),
        ("", "[DONE]"),
    ]  # fmt: skip
