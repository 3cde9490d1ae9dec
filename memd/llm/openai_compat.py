"""Any OpenAI-compatible `/v1/chat/completions` server as an LLM backend.

Ollama, LM Studio, llama.cpp's server, vLLM, OpenRouter and OpenAI itself speak this API, with
differences memd absorbs: the answer's JSON shape is asked for as `response_format`
`json_schema` (which servers running a local model enforce while it writes), and a server that
refuses that (400 naming the response format) is asked with `json_object`, then with none — the
mode that worked is remembered per server and model for the life of the process. Whatever comes
back is read tolerantly (`memd.llm.answers.parse_object`: code fences, `<think>` blocks, prose).

A server on this machine or the local network (`is_local`) costs no money: it is paced by a
requests-per-minute cap (`llm.rpm`) instead of token budgets, and requests wait for a free slot.
httpx is imported on first use.

Failures: timeouts, refused connections, 408/409/429 and 5xx retry on a later run; 401/403 and
404 (no such model, or a base URL that is not an API) are configuration errors; an answer with
no text is a bad answer.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from memd.core.errors import LLMConfigError, LLMError, LLMRetryable
from memd.core.redact import redact
from memd.llm.answers import LLMUsage, bad_answer
from memd.llm.client import Reply
from memd.llm.prompts import Prompt, Style

__all__ = ["OpenAIBackend", "Pacer", "is_local", "models_url"]

log = logging.getLogger(__name__)
MODES = ("json_schema", "json_object", "none")
_KEY_HINT = "check llm.api_key (the server's key; local servers usually need none)"
_URL_HINT = (
    "check llm.base_url (the API root, e.g. http://127.0.0.1:11434/v1 for Ollama, "
    "http://127.0.0.1:1234/v1 for LM Studio) and llm.model (a model the server has)"
)
# The response format that worked, per (base URL, model); kept for the life of the process.
_modes: dict[tuple[str, str], str] = {}
_pacers: dict[str, Pacer] = {}
_pacers_lock = threading.Lock()


def is_local(base_url: str) -> bool:
    """Whether `base_url` is on this machine or the local network (a server that costs no
    money per token): loopback, private and link-local addresses, localhost, *.local."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def models_url(base_url: str) -> str:
    """Where the server lists its models (`GET …/models`), for a reachability probe."""
    return base_url.rstrip("/") + "/models"


class Pacer:
    """At most `rpm` requests in any 60 seconds; `wait` blocks until one more may go."""

    def __init__(
        self,
        rpm: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rpm = max(1, rpm)
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def wait(self) -> float:
        """Take a slot, sleeping until one is free; returns the seconds waited."""
        waited = 0.0
        with self._lock:
            while True:
                now = self._clock()
                while self._sent and now - self._sent[0] >= 60.0:
                    self._sent.popleft()
                if len(self._sent) < self.rpm:
                    self._sent.append(now)
                    return waited
                pause = 60.0 - (now - self._sent[0])
                self._sleep(pause)
                waited += pause


def pacer_for(base_url: str, rpm: int) -> Pacer:
    """The process's one pacer of a server (extraction and summaries share its cap)."""
    with _pacers_lock:
        pacer = _pacers.get(base_url)
        if pacer is None or pacer.rpm != max(1, rpm):
            pacer = _pacers[base_url] = Pacer(rpm)
        return pacer


class OpenAIBackend:
    """One model of an OpenAI-compatible server at `base_url` (the API root, …/v1)."""

    name = "openai"
    style: Style = "compact"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        timeout: float = 60.0,
        rpm: int = 0,
    ) -> None:
        if not base_url:
            raise LLMConfigError("no OpenAI-compatible server configured", hint=_URL_HINT)
        if not model:
            raise LLMConfigError(
                f"no model configured for {base_url}",
                hint="set llm.model to a model the server has (`ollama list`, LM Studio's list)",
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self._api_key = api_key
        self.local = is_local(base_url)
        self.pacer = pacer_for(self.base_url, rpm) if rpm > 0 else None
        self._client: Any = None

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            headers = {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._client = httpx.Client(timeout=httpx.Timeout(self.timeout), headers=headers)
        return self._client

    def ask(self, prompt: Prompt, schema: dict[str, Any], max_tokens: int) -> Reply:
        """One chat completion; the answer's text and the tokens the server reports."""
        key = (self.base_url, self.model)
        for mode in MODES[MODES.index(_modes.get(key, MODES[0])) :]:
            body = self._body(prompt, schema, max_tokens, mode)
            resp = self._post(body)
            if resp.status_code == 400 and mode != "none" and _about_format(resp):
                log.info("%s refuses response_format %s; trying the next", self.base_url, mode)
                continue
            _modes[key] = mode  # the server takes this format, whatever else it answered
            return _reply(self._read(resp))
        raise LLMError(f"{self.base_url} refused every request format")  # pragma: no cover

    def _body(
        self, prompt: Prompt, schema: dict[str, Any], max_tokens: int, mode: str
    ) -> dict[str, Any]:
        messages = [{"role": "system", "content": prompt.system}]
        messages += [{"role": role, "content": text} for role, text in prompt.messages]
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0,
                                "max_tokens": max_tokens, "stream": False}  # fmt: skip
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": False},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _post(self, body: dict[str, Any]) -> Any:
        """The server's response (an httpx response) to one request, paced by `llm.rpm`."""
        import httpx

        if self.pacer is not None:
            waited = self.pacer.wait()
            if waited:
                log.info("%s: waited %.1f s for the llm.rpm cap", self.base_url, waited)
        url = self.base_url + "/chat/completions"
        try:
            return self._http().post(url, json=body)
        except httpx.TimeoutException as exc:
            raise LLMRetryable(f"{self.base_url} gave no answer within {self.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise LLMRetryable(f"cannot reach {self.base_url}: {redact(str(exc))[:200]}") from exc

    def _read(self, resp: Any) -> dict[str, Any]:
        """The body of a successful response; the memd error for any other."""
        if resp.status_code >= 400:
            raise _status_error(resp, self.base_url, self.model)
        try:
            data = resp.json()
        except ValueError as exc:
            raise LLMError(f"unreadable response from {self.base_url}: {_excerpt(resp)}") from exc
        if not isinstance(data, dict):
            raise LLMError(f"unreadable response from {self.base_url}: {_excerpt(resp)}")
        return data


def _reply(data: dict[str, Any]) -> Reply:
    raw = data.get("usage")
    usage = LLMUsage(0, 0)
    if isinstance(raw, dict):
        usage = LLMUsage(_count(raw.get("prompt_tokens")), _count(raw.get("completion_tokens")))
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        raise LLMError(f"no choices in the server's answer: {redact(str(data))[:160]}")
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise bad_answer(f"model returned no text (finish_reason={choice.get('finish_reason')})",
                         usage)  # fmt: skip
    return Reply(text, usage, truncated=choice.get("finish_reason") == "length")


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _excerpt(resp: Any) -> str:
    return redact(" ".join(str(resp.text).split()))[:200]


def _about_format(resp: Any) -> bool:
    text = str(resp.text).lower()
    return any(w in text for w in ("response_format", "json_schema", "json_object", "grammar"))


def _status_error(resp: Any, base_url: str, model: str) -> LLMError:
    status = int(resp.status_code)
    what = f"{base_url} returned {status}: {_excerpt(resp)}"
    if status in (408, 409, 429) or status >= 500:
        after = resp.headers.get("retry-after")
        return LLMRetryable(what + (f" (retry after {after} s)" if after else ""))
    if status in (401, 403):
        return LLMConfigError(what, hint=_KEY_HINT)
    if status == 404 or (status == 400 and model.lower() in str(resp.text).lower()):
        return LLMConfigError(what, hint=_URL_HINT)
    return LLMError(what)
