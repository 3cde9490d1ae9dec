"""Which model extraction and summaries use, and why: `llm.backend` and its `auto` choice.

`llm.backend = "auto"` (the default) takes, in order:

1. an Anthropic key: ANTHROPIC_API_KEY, or llm.api_key (extract.api_key) when it looks like
   one (sk-ant-…) or comes without llm.base_url — the Anthropic API;
2. a `claude` command that is logged in (`claude auth status`) — the user's Claude Code;
3. llm.base_url answering `GET …/models` — that OpenAI-compatible server;
4. else the offline rules.

Any other value of `llm.backend` is taken as it is, and a backend that cannot work then says
why when it is used (a configuration error) instead of falling through to another. The probes
of steps 2 and 3 take a second or so; their answers are kept for `PROBE_TTL_S` in the process,
so each job run does not start Claude Code again. `describe` puts the choice in the words
`memd doctor`, `memd status` and the page show.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memd.core.settings import Settings
from memd.llm.claude_code import DEFAULT_MODEL as CLAUDE_CODE_MODEL
from memd.llm.client import LLM, Backend

__all__ = [
    "Choice",
    "Undecided",
    "build",
    "choose",
    "claude_command",
    "claude_login",
    "server_answers",
]

ANTHROPIC_MODEL = "claude-haiku-4-5"  # extract.model's default
PROBE_TTL_S = 300.0
Probe = Callable[..., tuple[bool, str]]
_cache: dict[tuple[str, ...], tuple[float, tuple[bool, str]]] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Choice:
    """The backend in use and why (never a key: `key_source` names where one comes from)."""

    backend: str  # "anthropic", "claude-code", "openai" or "off"
    why: str
    model: str = ""
    where: str = ""  # the API root (anthropic, openai) or the `claude` command (claude-code)
    key_source: str = ""
    local: bool = False  # an OpenAI-compatible server on this machine or network
    note: str = ""  # something else configured that this choice leaves unused

    @property
    def online(self) -> bool:
        return self.backend != "off"


def llm_key(s: Settings) -> str:
    """The backend's key as configured: llm.api_key, else extract.api_key."""
    return s.llm_api_key or s.extract_api_key


def llm_url(s: Settings) -> str:
    """The backend's API root as configured: llm.base_url, else extract.base_url."""
    return s.llm_base_url or s.extract_base_url


def model_for(s: Settings, backend: str) -> str:
    """llm.model, else extract.model when changed from its default (or for anthropic), else the
    backend's own default ("haiku" for claude-code; none for a server: it must be named)."""
    if s.llm_model:
        return s.llm_model
    if backend == "anthropic" or s.extract_model != ANTHROPIC_MODEL:
        return s.extract_model
    return CLAUDE_CODE_MODEL if backend == "claude-code" else ""


def key_source(s: Settings) -> str:
    """Where the Anthropic key comes from: llm.api_key, extract.api_key, ANTHROPIC_API_KEY or ""."""
    if s.llm_api_key:
        return "llm.api_key"
    if s.extract_api_key:
        return "extract.api_key"
    return "ANTHROPIC_API_KEY" if s.anthropic_key else ""


def _anthropic_key_in_auto(s: Settings) -> str:
    """The setting an Anthropic key comes from when `auto` should take it, else ""."""
    if llm_key(s) and (llm_key(s).startswith("sk-ant-") or not llm_url(s)):
        return key_source(s)
    if s.anthropic_key and not llm_key(s):
        return "ANTHROPIC_API_KEY"
    return ""


def claude_command(s: Settings) -> str:
    """The `claude` command: llm.claude_path, else `claude` on PATH, else ""."""
    if s.llm_claude_path:
        return str(Path(s.llm_claude_path).expanduser())
    return shutil.which("claude") or ""


def claude_login(command: str, timeout: float = 15.0) -> tuple[bool, str]:
    """Whether Claude Code at `command` is logged in (`claude auth status`), and how."""
    try:
        done = subprocess.run([command, "auth", "status", "--json"], capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False, f"`{command} auth status` gave no answer within {timeout:g} s"
    except OSError as exc:
        return False, f"cannot be run ({exc.strerror or exc})"
    try:
        data = json.loads(done.stdout)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return False, f"`claude auth status` answered {' '.join(done.stdout.split())[:80]!r}"
    if data.get("loggedIn") is True:
        return True, f"logged in ({data.get('authMethod') or 'unknown method'})"
    return False, "not logged in"


def server_answers(base_url: str, key: str = "", timeout: float = 3.0) -> tuple[bool, str]:
    """Whether an OpenAI-compatible server answers `GET …/models` at `base_url`."""
    import httpx

    from memd.llm.openai_compat import models_url

    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        resp = httpx.get(models_url(base_url), headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        return False, f"no answer from {base_url} ({type(exc).__name__})"
    if resp.status_code >= 400:
        return False, f"{base_url} answered {resp.status_code} to GET /models"
    return True, f"{base_url} answers"


class Undecided(Exception):
    """`choose(cached_only=True)` needs a probe whose answer is not kept yet."""


def _cached(
    key: tuple[str, ...], probe: Callable[[], tuple[bool, str]], cached_only: bool = False
) -> tuple[bool, str]:
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and now - hit[0] < PROBE_TTL_S:
            return hit[1]
    if cached_only:
        raise Undecided(key[0])
    result = probe()
    with _cache_lock:
        _cache[key] = (now, result)
    return result


def forget_probes() -> None:
    """Drop the kept probe answers (the settings changed)."""
    with _cache_lock:
        _cache.clear()


def choose(
    s: Settings,
    *,
    claude_probe: Probe = claude_login,
    server_probe: Probe = server_answers,
    cached_only: bool = False,
) -> Choice:
    """The backend `s` asks for, and why (see the module docstring for `auto`).

    With `cached_only`, raises `Undecided` instead of running a probe whose answer is not kept
    (a `status` call must not wait a second for `claude auth status`).
    """
    if s.llm_backend != "auto":
        return _explicit(s, s.llm_backend)
    source = _anthropic_key_in_auto(s)
    if source:
        unused = ""
        if s.llm_base_url and source == "ANTHROPIC_API_KEY":
            unused = "llm.base_url is set too: set llm.backend = openai to use that server"
        return _anthropic(s, f"auto: an Anthropic key is set ({source})", unused)
    command = claude_command(s)
    claude = "no `claude` command"
    if command:
        logged_in, how = _cached(("claude", command), lambda: claude_probe(command), cached_only)
        if logged_in:
            note = "llm.base_url is set too: set llm.backend = openai to use that server"
            return _claude_code(s, f"auto: Claude Code at {command} is {how}", command,
                                note if llm_url(s) else "")  # fmt: skip
        claude = f"{command}: {how}"
    url, key = llm_url(s), llm_key(s)
    if not url:
        return Choice("off", f"auto: no Anthropic key, {claude}, no llm.base_url")
    reached, how = _cached(("server", url, key), lambda: server_probe(url, key), cached_only)
    if reached:
        return _openai(s, f"auto: llm.base_url {how}")
    return Choice("off", f"auto: no Anthropic key, {claude}, and {how}")


def _explicit(s: Settings, backend: str) -> Choice:
    why = f"llm.backend = {backend}"
    if backend == "anthropic":
        return _anthropic(s, why)
    if backend == "claude-code":
        return _claude_code(s, why, claude_command(s))
    if backend == "openai":
        return _openai(s, why)
    return Choice("off", why)


def _anthropic(s: Settings, why: str, note: str = "") -> Choice:
    return Choice("anthropic", why, model_for(s, "anthropic"), llm_url(s),
                  key_source(s), note=note)  # fmt: skip


def _claude_code(s: Settings, why: str, command: str, note: str = "") -> Choice:
    return Choice("claude-code", why, model_for(s, "claude-code"), command, note=note)


def _openai(s: Settings, why: str) -> Choice:
    from memd.llm.openai_compat import is_local

    source = "llm.api_key" if s.llm_api_key else ("extract.api_key" if s.extract_api_key else "")
    return Choice("openai", why, model_for(s, "openai"), llm_url(s), source,
                  local=is_local(llm_url(s)) if llm_url(s) else False)  # fmt: skip


def private_folder(s: Settings) -> Path:
    """The folder memd runs Claude Code in: its own, empty, so no project's settings apply."""
    return s.paths.state_dir / "claude-code"


def own_claude_projects(s: Settings) -> frozenset[str]:
    """The names Claude Code would give the project folder of its transcripts run in
    `private_folder` (the path with every character but letters and digits made "-"), so the
    conversation reader passes them by, should a Claude Code ever keep one of memd's calls."""
    folder = private_folder(s)
    return frozenset(re.sub(r"[^A-Za-z0-9]", "-", str(p)) for p in {folder, folder.resolve()})


def build(s: Settings, choice: Choice) -> LLM | None:
    """The LLM of `choice`, or None for the offline rules. Raises `LLMConfigError` when the
    choice cannot work (no key, no `claude`, no model)."""
    if choice.backend == "anthropic":
        from memd.llm.anthropic import AnthropicBackend

        backend: Backend = AnthropicBackend(s.anthropic_key, choice.model, base_url=llm_url(s),
                                           timeout=s.extract_timeout_s)  # fmt: skip
    elif choice.backend == "claude-code":
        from memd.llm.claude_code import ClaudeCodeBackend

        # The CLI starts, reads its settings and streams the answer: give it more time.
        backend = ClaudeCodeBackend(choice.where, choice.model, cwd=private_folder(s),
                                    timeout=max(s.extract_timeout_s, 60.0) * 2)  # fmt: skip
    elif choice.backend == "openai":
        from memd.llm.openai_compat import OpenAIBackend

        backend = OpenAIBackend(llm_url(s), choice.model, api_key=llm_key(s),
                                timeout=s.extract_timeout_s,
                                rpm=s.llm_rpm if choice.local else 0)  # fmt: skip
    else:
        return None
    return LLM(backend)
