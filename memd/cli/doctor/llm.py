"""The model extraction and summaries use: which backend, why, what it cost today, and whether
it can work — as the running daemon sees it, else as this shell's settings choose it. Keys are
never shown, only where they come from."""

from __future__ import annotations

from memd.api.messages import LLMStatus
from memd.cli.doctor.check import Check, fail, ok, warn
from memd.core.errors import LLMConfigError
from memd.core.settings import Settings
from memd.core.text import counted
from memd.llm.choice import (
    Choice,
    build,
    choose,
    claude_login,
    llm_key,
    llm_url,
    server_answers,
)

SETUP_HINT = (
    "for LLM extraction and summaries: set ANTHROPIC_API_KEY, log in to Claude Code (`claude`),"
    " or point llm.base_url at an OpenAI-compatible server (docs/llm.md)"
)
SERVICE_HINT = (
    "a daemon started by the service manager does not get this shell's variables: run"
    " `memd service install --env ANTHROPIC_API_KEY` (a file only you can read), or set"
    " llm.api_key in {config} (chmod 600); then restart memd"
)


def _name(backend: str, model: str) -> str:
    if backend == "off":
        return "offline rules"
    return f"{backend} {model}".strip()


def _cost(llm: LLMStatus) -> str:
    if llm.backend in ("off", ""):
        return ""
    calls = counted(llm.requests_today, "LLM request")
    tokens = llm.tokens_today
    if llm.local:
        return (f"; today {calls}, {counted(tokens, 'token')} (a local server: at most"
                f" {llm.rpm} requests a minute)")  # fmt: skip
    return f"; today {calls}, {tokens:,} of {counted(llm.daily_budget, 'token')}"


def assess_daemon_llm(
    llm: LLMStatus, shell: Choice, settings: Settings, problem: tuple[str, str] = ("", "")
) -> Check:
    """The running daemon's backend (its `status`) against what this shell would choose;
    `problem` is why that backend cannot work, as `usable` found it."""
    backend = llm.backend or ("anthropic" if llm.mode == "anthropic" else "off")
    data = {"backend": backend, "model": llm.model, "why": llm.why,
            "key_source": llm.key_source or None, "shell_backend": shell.backend,
            "tokens_today": llm.tokens_today, "requests_today": llm.requests_today}  # fmt: skip
    detail = f"the daemon uses {_name(backend, llm.model)} ({llm.why or '?'})"
    if llm.key_source:
        detail += f", key from {llm.key_source}"
    detail += _cost(llm)
    if llm.config_error:
        return fail("llm", f"{detail}; it was refused: {llm.config_error}",
                    "fix the setting named above, then restart memd", data=data)  # fmt: skip
    if problem[0]:
        return fail("llm", f"{detail}: {problem[0]}", problem[1], data=data)
    chose = llm.why.startswith("auto")
    if chose and shell.backend == "anthropic" and backend != "anthropic":
        src = shell.key_source or "an Anthropic key"
        return warn("llm", f"{src} is set in this shell, but the running daemon sees no key: {detail}",
                    SERVICE_HINT.format(config=settings.paths.config_file), data=data)  # fmt: skip
    if llm.note:
        return ok("llm", f"{detail}; {llm.note}", data=data)
    return ok("llm", detail, "" if backend != "off" else SETUP_HINT, data=data)


def assess_choice(choice: Choice, settings: Settings) -> Check:
    """Without a daemon: the backend this shell's settings choose, and whether it can work."""
    data = {"backend": choice.backend, "model": choice.model, "why": choice.why,
            "key_source": choice.key_source or None}  # fmt: skip
    detail = f"{_name(choice.backend, choice.model)} ({choice.why}); no daemon is running"
    if choice.backend == "off":
        return ok("llm", detail, SETUP_HINT, data=data)
    problem, hint = usable(choice, settings)
    if problem:
        return fail("llm", f"{detail}: {problem}", hint, data=data)
    if choice.backend == "anthropic" and not settings.anthropic_key.startswith("sk-ant-"):
        return warn("llm", f"{detail}, but the key does not look like an Anthropic key (sk-ant-…)",
                    "check the value; a wrong key makes every extraction run fail with 401",
                    data=data)  # fmt: skip
    return ok("llm", detail + (f"; {choice.note}" if choice.note else ""), data=data)


def usable(choice: Choice, settings: Settings) -> tuple[str, str]:
    """Why the chosen backend cannot work ("" when it can) and how to fix it."""
    try:
        build(settings, choice)
    except LLMConfigError as exc:
        return str(exc), exc.hint
    if choice.backend == "claude-code" and not choice.why.startswith("auto"):
        logged_in, how = claude_login(choice.where)
        if not logged_in:
            return f"{choice.where}: {how}", "run `claude` and /login, or `claude setup-token`"
    if choice.backend == "openai" and not choice.why.startswith("auto"):
        reached, how = server_answers(llm_url(settings), llm_key(settings))
        if not reached:
            return how, "start the server, or check llm.base_url (the API root, …/v1)"
    return "", ""


def check_llm(settings: Settings, daemon_llm: LLMStatus | None = None) -> Check:
    """The backend the running daemon uses (its `status`), else what this shell would use."""
    shell = choose(settings)
    if daemon_llm is None:
        return assess_choice(shell, settings)
    same = daemon_llm.backend == shell.backend and shell.online
    problem = usable(shell, settings) if same else ("", "")
    return assess_daemon_llm(daemon_llm, shell, settings, problem)
