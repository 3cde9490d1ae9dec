"""The Anthropic Messages API as an LLM backend (`memd.llm.client.Backend`).

The SDK is imported on first use (it costs about 1.3 s and 64 MiB), so building an
`AnthropicBackend` is free. Requests use structured outputs (`output_config` with the answer's
JSON schema) and thinking disabled; the prompt is already redacted (`memd.llm.prompts`).

Failures come out as the memd error tree:

- `LLMRetryable`: 408/409/429/529/≥500, connection errors and timeouts; try on a later run.
- `LLMConfigError`: 400/401/402/403/404 and missing credentials; stop and tell the user.
- `LLMBadAnswer`: a refusal or no text (billed all the same).
- `LLMError`: anything else.

The API key never appears in a message, a hint or a log line.
"""

from __future__ import annotations

import logging
from typing import Any

from memd.core.errors import LLMConfigError, LLMError, LLMRetryable
from memd.core.redact import redact
from memd.llm.answers import LLMUsage, bad_answer
from memd.llm.client import Reply
from memd.llm.prompts import Prompt, Style

__all__ = ["KEY_HINT", "AnthropicBackend"]

log = logging.getLogger(__name__)

KEY_HINT = "check ANTHROPIC_API_KEY or llm.api_key (extract.api_key)"
_MODEL_HINT = "check llm.model (structured outputs need a current Claude model)"


class AnthropicBackend:
    """One Anthropic model over the API.

    `max_retries` is the SDK's own retry count within one call (0 by default: the scheduler
    retries on a later run instead of blocking a job). `base_url` empty means the SDK default
    (or `ANTHROPIC_BASE_URL`).
    """

    name = "anthropic"
    style: Style = "schema"

    def __init__(
        self,
        api_key: str,
        model: str,
        *,
        base_url: str = "",
        timeout: float = 60.0,
        max_retries: int = 0,
    ) -> None:
        if not api_key:
            raise LLMConfigError("no Anthropic API key configured", hint=KEY_HINT)
        if not model:
            raise LLMConfigError("no Anthropic model configured", hint="set llm.model")
        self._api_key = api_key
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self._client: Any = None

    def __repr__(self) -> str:
        return f"AnthropicBackend(model={self.model!r}, base_url={self.base_url!r})"

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic

            try:
                self._client = anthropic.Anthropic(
                    api_key=self._api_key,
                    base_url=self.base_url or None,
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            except anthropic.AnthropicError as exc:
                raise LLMConfigError(
                    f"cannot set up the Anthropic client: {type(exc).__name__}", hint=KEY_HINT
                ) from exc
        return self._client

    def ask(self, prompt: Prompt, schema: dict[str, Any], max_tokens: int) -> Reply:
        """One structured-output request; the answer's text and what it cost."""
        client = self._get_client()
        import anthropic

        try:
            response = client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=prompt.system,
                messages=[{"role": role, "content": text} for role, text in prompt.messages],
                thinking={"type": "disabled"},
                output_config={"format": {"type": "json_schema", "schema": schema}},
            )
        except anthropic.AnthropicError as exc:
            raise _map_error(exc, self.timeout) from exc
        except ValueError as exc:
            # The SDK lets a non-JSON 200 body (a proxy's HTML page) escape as JSONDecodeError.
            raise LLMError(f"unreadable response from the Anthropic API: {exc}") from exc
        # Parsing is lenient (no strict validation), so a body of the wrong shape can
        # lack fields: read them defensively.
        usage_obj = getattr(response, "usage", None)
        usage = LLMUsage(
            int(getattr(usage_obj, "input_tokens", 0) or 0),
            int(getattr(usage_obj, "output_tokens", 0) or 0),
        )
        stop_reason = getattr(response, "stop_reason", None)
        blocks = getattr(response, "content", None) or []
        log.debug("anthropic %s: %d in / %d out tokens, stop=%s", self.model,
                  usage.input_tokens, usage.output_tokens, stop_reason)  # fmt: skip
        # With thinking on (or on models that think anyway) block 0 is not the answer.
        text = "".join(
            str(getattr(block, "text", ""))
            for block in blocks
            if getattr(block, "type", "") == "text"
        )
        if stop_reason == "refusal":
            raise bad_answer("the model refused to answer", usage)
        if not text.strip():
            raise bad_answer(f"model returned no text (stop_reason={stop_reason})", usage)
        return Reply(text, usage, truncated=stop_reason == "max_tokens")


def _map_error(exc: Exception, timeout: float) -> LLMError:
    """Translate an SDK exception into the memd error tree (never quoting the key)."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return LLMRetryable(f"Anthropic API timed out after {timeout:g} s")
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMRetryable(f"cannot reach the Anthropic API: {redact(str(exc))}")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        detail = redact(str(exc.api_message or exc.type or exc.message or ""))[:200]
        what = f"Anthropic API returned {status}" + (f": {detail}" if detail else "")
        if status in (408, 409, 429) or status >= 500:
            return LLMRetryable(what)
        if status in (401, 403):
            return LLMConfigError(what, hint=KEY_HINT)
        if status == 402:
            return LLMConfigError(what, hint="check the Anthropic account's billing")
        if status == 404:
            return LLMConfigError(what, hint=_MODEL_HINT)
        if status == 400:
            return LLMConfigError(what, hint=_MODEL_HINT)
        return LLMError(what)
    if isinstance(exc, anthropic.CredentialsError):
        return LLMConfigError(f"Anthropic credentials: {type(exc).__name__}", hint=KEY_HINT)
    return LLMError(f"Anthropic SDK error: {type(exc).__name__}: {redact(str(exc))[:200]}")
