"""The user's own Claude Code as an LLM backend: `claude -p`, headless, with its login.

Why the CLI and not the `claude-agent-sdk` package: the SDK drives this same CLI over a JSON
stream and brings a bundled copy of it and an async stack along; everything it adds (tools,
hooks, MCP servers, sessions) is what memd switches off. One `claude -p` per request, with the
user's installed Claude Code and its login (subscription or key), needs nothing new.

Each request runs

    claude -p --output-format json --model haiku --tools "" --no-session-persistence
           --system-prompt … --settings '{"disableAllHooks": true}' --strict-mcp-config
           --disable-slash-commands

with the conversation on stdin, in a folder of memd's own (no project's CLAUDE.md, settings or
hooks apply), `CLAUDE_CODE_DISABLE_CLAUDE_MDS` (nor the user's CLAUDE.md), thinking off, no
retries of its own (memd retries on a later run), no non-essential traffic and no update check.
No tool can run, no hook fires (memd's own hooks would otherwise put memory into the prompt) and
no transcript is written, so memd never reads its own requests back as a conversation.

The result object's `is_error`, `api_error_status` and text map onto memd's states: 429,
overload and network errors retry later; "You've hit your limit · resets …" waits; not logged
in, 401/403 and an unknown model are configuration errors; an option this Claude Code does not
know asks for an update.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memd.core.errors import LLMConfigError, LLMDeferred, LLMError, LLMRetryable
from memd.core.redact import redact
from memd.llm.answers import LLMUsage, bad_answer
from memd.llm.client import Reply
from memd.llm.prompts import Prompt, Style

__all__ = ["DEFAULT_MODEL", "ClaudeCodeBackend", "classify"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "haiku"
LOGIN_HINT = (
    "log Claude Code in: run `claude` and /login (or `claude setup-token`), then `memd doctor`"
)
_MODEL_HINT = "check llm.model: haiku, sonnet, opus or a full model name Claude Code accepts"
_UPDATE_HINT = "memd needs Claude Code 2.x: update it (`claude update`) or set llm.backend"
_SETTINGS = json.dumps({"disableAllHooks": True})
# What memd's calls run with, on top of the user's environment (their login, proxy, key).
CALL_ENV = {
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "CLAUDE_CODE_DISABLE_THINKING": "1",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}
_LIMIT = re.compile(
    r"hit your (?:\w+ )?limit|usage limit reached|limit will reset|limit reached.{0,40}reset",
    re.IGNORECASE,
)
_LOGIN = re.compile(
    r"not logged in|/login|invalid api key|please run .{0,20}login|authentication|oauth token"
    r"|credit balance",
    re.IGNORECASE,
)
_TRANSIENT = re.compile(
    r"rate limit|overloaded|\b5\d\d\b|timed? ?out|timeout|econn|enotfound|eai_again|socket|"
    r"network|connection|fetch failed|temporarily|try again",
    re.IGNORECASE,
)
_UNKNOWN_OPTION = re.compile(r"unknown option|unrecognized option|unknown argument", re.IGNORECASE)


class ClaudeCodeBackend:
    """One model through the `claude` command at `command`, run in the folder `cwd`."""

    name = "claude-code"
    style: Style = "json"

    def __init__(
        self,
        command: str,
        model: str = DEFAULT_MODEL,
        *,
        cwd: Path,
        timeout: float = 120.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not command:
            raise LLMConfigError(
                "the `claude` command is not on PATH",
                hint="install Claude Code, or set llm.claude_path to its `claude` command",
            )
        self.command = command
        self.model = model or DEFAULT_MODEL
        self.cwd = cwd
        self.timeout = timeout
        self._env = dict(os.environ if env is None else env)

    def __repr__(self) -> str:
        return f"ClaudeCodeBackend(command={self.command!r}, model={self.model!r})"

    def argv(self, system: str) -> list[str]:
        """The command line of one request (the conversation goes on stdin)."""
        return [
            self.command, "-p", "--output-format", "json", "--model", self.model,
            "--tools", "", "--no-session-persistence", "--system-prompt", system,
            "--settings", _SETTINGS, "--strict-mcp-config", "--disable-slash-commands",
        ]  # fmt: skip

    def ask(self, prompt: Prompt, schema: dict[str, Any], max_tokens: int) -> Reply:
        """One `claude -p` run; the answer's text and the tokens it reports."""
        del schema, max_tokens  # the shape is in the prompt; the CLI sets its own limit
        out, err, code = self._run(prompt)
        try:
            data = json.loads(out)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise classify(None, f"{out}\n{err}", code)
        usage = _usage(data.get("usage"))
        if data.get("is_error") or data.get("subtype", "success") != "success":
            status = data.get("api_error_status")
            raise classify(status if isinstance(status, int) else None,
                           str(data.get("result") or data.get("subtype") or err), code)  # fmt: skip
        text = data.get("result")
        if not isinstance(text, str) or not text.strip():
            raise bad_answer("Claude Code returned no text", usage)
        log.debug("claude-code %s: %d in / %d out tokens", self.model, usage.input_tokens,
                  usage.output_tokens)  # fmt: skip
        return Reply(text, usage, truncated=data.get("stop_reason") == "max_tokens")

    def _run(self, prompt: Prompt) -> tuple[str, str, int]:
        self.cwd.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            proc = subprocess.Popen(
                self.argv(prompt.system),
                cwd=self.cwd,
                env={**self._env, **CALL_ENV},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # its whole process group is stopped on a timeout
            )
        except FileNotFoundError as exc:
            raise LLMConfigError(
                f"cannot run Claude Code: {self.command} not found",
                hint="install Claude Code, or set llm.claude_path to its `claude` command",
            ) from exc
        except OSError as exc:
            raise LLMConfigError(f"cannot run Claude Code ({self.command}): {exc}") from exc
        try:
            out, err = proc.communicate(prompt.as_text(), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise LLMRetryable(f"Claude Code gave no answer within {self.timeout:g} s") from None
        return out, err, proc.returncode


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def _usage(raw: object) -> LLMUsage:
    """Tokens from the result's `usage` (cache reads and writes are input too)."""
    if not isinstance(raw, dict):
        return LLMUsage(0, 0)

    def n(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and value > 0 else 0

    inputs = n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens")
    return LLMUsage(inputs, n("output_tokens"))


def _by_status(status: int, text: str, what: str) -> LLMError | None:
    if status in (401, 403):
        return LLMConfigError(what, hint=LOGIN_HINT)
    if status in (400, 404):
        return LLMConfigError(what, hint=_MODEL_HINT)
    if status == 402:
        return LLMConfigError(what, hint="check the account's plan or billing")
    if status == 429 and _LIMIT.search(text):
        return LLMDeferred(what)
    if status in (408, 409, 429) or status >= 500:
        return LLMRetryable(what)
    return None


def classify(status: int | None, text: str, code: int) -> LLMError:
    """A failed `claude -p` run as a memd error, by its API status, else by its words."""
    said = redact(" ".join(text.split()))[:240] or f"exit code {code}"
    what = f"Claude Code: {said}" + (f" (API status {status})" if status is not None else "")
    by_status = _by_status(status, text, what) if status is not None else None
    if by_status is not None:
        return by_status
    if _LIMIT.search(text):
        return LLMDeferred(what)
    if _UNKNOWN_OPTION.search(text):
        return LLMConfigError(what, hint=_UPDATE_HINT)
    if _LOGIN.search(text):
        return LLMConfigError(what, hint=LOGIN_HINT)
    if _TRANSIENT.search(text):
        return LLMRetryable(what)
    return LLMError(what)
