"""Claude Code hooks: put memd's context into a session, again after every compaction.

Claude Code runs a hook command with the event as one JSON object on stdin and reads one JSON
object from stdout. `memd hook session-start` answers SessionStart (sources ``startup``,
``resume``, ``clear`` and ``compact``) with the budgeted context block for the project in
``cwd``; `memd hook user-prompt` answers UserPromptSubmit with the memory relevant to the prompt,
within a small budget, and stays silent when nothing relevant is found.

Hooks fail open: whatever goes wrong (malformed payload, slow daemon, bad config) `run_hook`
prints nothing and returns 0 within its time limit, so memory can never block or slow a
conversation. With the daemon down, `memd hook` answers from the index opened read-only (the
CLI hands `main` its `offline` function; it is only loaded then). Only `memd.core.settings`,
`memd.api.client` and the typed messages are imported up front, to keep the start fast. The
project is the payload's `cwd` when memd accepts that folder as a project; from anywhere else
the hooks still inject the rest of memory, with no project.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import IO, Any

from memd.api import messages as m
from memd.api.client import Client
from memd.core.errors import DaemonNotRunning
from memd.core.paths import caller_project
from memd.core.settings import Settings, load

# The agent Claude Code's sessions are recorded as (memd.conversations.formats.CLAUDE_CODE_AGENT;
# not imported, to keep the hook's start fast).
CLAUDE_CODE_AGENT = "claude-code"

# Answers a read method without the daemon: (settings, signature, params) → (result, note).
Offline = Callable[[Settings, Any, Any], tuple[Any, str]]

SESSION_START = "session-start"
USER_PROMPT = "user-prompt"
KINDS = (SESSION_START, USER_PROMPT)

# Claude Code keeps at most 10,000 characters of `additionalContext` (the rest becomes a file
# path and a preview); the daemon's estimator counts 3.2 Latin characters per token, so 1500
# tokens stay under about 4,400 characters and the model always sees the whole block.
SESSION_BUDGET_TOKENS = 1500
PROMPT_BUDGET_TOKENS = 600
# Total wall time a hook may spend after it starts; Claude Code waits for the hook, so this is
# added to every session start and every prompt when the daemon is slow.
TIME_LIMIT_S = 0.8

_EVENT_NAMES = {SESSION_START: "SessionStart", USER_PROMPT: "UserPromptSubmit"}
# Gemini CLI run with a prompt puts what the SessionStart hook gave (memd's memory) before the
# prompt, in these tags, and hands that to the per-prompt hook: the question is what follows.
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
# Gemini CLI's hooks take Claude Code's payloads and answers; its per-prompt event is named so.
_EVENTS_OF = {"gemini": {SESSION_START: "SessionStart", USER_PROMPT: "BeforeAgent"}}


class HookTimeout(Exception):
    """The hook ran out of its time limit."""


def session_start(
    stdin_text: str,
    settings: Settings,
    *,
    deadline: float | None = None,
    offline: Offline | None = None,
    assistant: str = CLAUDE_CODE_AGENT,
) -> str:
    """Answer a SessionStart payload with the hook JSON carrying the project's context block
    (`assistant`: the one running the hook, whose relationship file comes with it).

    Returns ``""`` when there is nothing to add (memory switched off, empty block). Raises
    `ValueError` for a malformed payload and `memd.core.errors.MemdError` for daemon problems;
    `run_hook` turns both into silence.
    """
    payload = _parse_payload(stdin_text)
    project, session_id = _session_params(payload, settings)
    params = m.ContextParams(
        budget_tokens=SESSION_BUDGET_TOKENS,
        project=project,
        session_id=session_id,
        agent_id=assistant,  # its relationship file: trust, mood, memory points
        trust_folder=True,  # the folder the person started the session in (`_session_params`)
    )
    result = _fetch_context(settings, params, deadline, offline)
    text = _context_text(result)
    return _hook_output(SESSION_START, text, assistant) if text else ""


def user_prompt(
    stdin_text: str,
    settings: Settings,
    *,
    deadline: float | None = None,
    offline: Offline | None = None,
    assistant: str = CLAUDE_CODE_AGENT,
) -> str:
    """Answer a UserPromptSubmit payload with the memory relevant to its prompt, or ``""``.

    The context is asked for with the prompt as the query and a small budget; the answer is only
    used when it holds something the query matched (a topic, a project section ranked by the
    query), not just the standing memory that SessionStart already put into the session.
    """
    payload = _parse_payload(stdin_text)
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("UserPromptSubmit payload has no string 'prompt'")
    prompt = _HOOK_CONTEXT.sub("", prompt)
    if not prompt.strip():
        return ""
    project, session_id = _session_params(payload, settings)
    params = m.ContextParams(
        query=prompt,
        budget_tokens=PROMPT_BUDGET_TOKENS,
        relevant_only=True,  # SessionStart already put the standing memory into the session
        project=project,
        session_id=session_id,
        agent_id=assistant,
        trust_folder=True,
    )
    result = _fetch_context(settings, params, deadline, offline)
    text = _context_text(result)
    if not text or not _has_query_matches(result):
        return ""
    return _hook_output(USER_PROMPT, text, assistant)


_HANDLERS: dict[str, Callable[..., str]] = {SESSION_START: session_start, USER_PROMPT: user_prompt}


def run_hook(
    kind: str,
    stdin: IO[str],
    stdout: IO[str],
    settings_loader: Callable[[], Settings] = load,
    *,
    time_limit: float = TIME_LIMIT_S,
    stderr: IO[str] | None = None,
    offline: Offline | None = None,
    assistant: str = CLAUDE_CODE_AGENT,
) -> int:
    """Run hook `kind` (``session-start`` or ``user-prompt``) for `assistant` (Claude Code, or
    Gemini CLI, whose hooks speak the same JSON) and always return 0.

    Reads the payload from `stdin` and writes the hook JSON to `stdout` only on success. Any
    failure, including running past `time_limit` seconds, leaves `stdout` untouched; when
    `stderr` is given, a one-line reason goes there (for `--debug` style troubleshooting).
    `offline` answers from the index when no daemon is listening.
    """
    start = time.monotonic()
    deadline = start + time_limit
    try:
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise ValueError(f"unknown hook {kind!r}; expected one of {', '.join(KINDS)}")
        # Warnings (platformdirs warns when XDG_RUNTIME_DIR is unset) would reach Claude Code's
        # transcript through stderr; a hook stays silent.
        with _watchdog(time_limit), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            output = handler(stdin.read(), settings_loader(), deadline=deadline, offline=offline,
                             assistant=assistant)  # fmt: skip
        if output:
            stdout.write(output + "\n")
            stdout.flush()
    # Fail open is the contract with Claude Code: a memory problem must never block a prompt,
    # so every error (ours, the OS's, a bug) ends here as silence and exit code 0.
    except Exception as exc:
        if stderr is not None:
            with contextlib.suppress(Exception):
                elapsed = time.monotonic() - start
                stderr.write(f"memd hook {kind}: {type(exc).__name__}: {exc} ({elapsed:.3f}s)\n")
    return 0


def main(argv: Sequence[str] | None = None, offline: Offline | None = None) -> int:
    """Entry point of `memd hook [--assistant NAME] [--time-limit S] [--debug]
    session-start|user-prompt`; always returns 0.

    `offline` (given by the `memd` command) answers from the index when the daemon is down.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    options = {"--assistant": CLAUDE_CODE_AGENT, "--time-limit": str(TIME_LIMIT_S)}
    kinds = []
    rest = iter(a for a in args if a != "--debug")
    for a in rest:
        if a in options:
            options[a] = next(rest, "")
        else:
            kinds.append(a)
    kind = kinds[0] if len(kinds) == 1 else ""
    try:
        limit = float(options["--time-limit"])
    except ValueError:
        limit, kind = TIME_LIMIT_S, ""  # a wrong option: fail open, like any other problem
    return run_hook(kind, sys.stdin, sys.stdout, load, stderr=sys.stderr if debug else None,
                    offline=offline, time_limit=limit, assistant=options["--assistant"])  # fmt: skip


def _parse_payload(stdin_text: str) -> dict[str, Any]:
    try:
        payload = json.loads(stdin_text)
    except (ValueError, RecursionError) as exc:  # malformed, a number of 5,000 digits, too deep
        raise ValueError(f"hook payload is not JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise ValueError("hook payload is not a JSON object")
    return payload


def _session_params(payload: dict[str, Any], settings: Settings) -> tuple[str, str]:
    """(project, session_id) of a hook payload: its `cwd` when memd takes that folder as a
    project (an absolute folder, not in memd's own: the workspace's own memory comes with the
    context), and its `session_id`, when strings.

    The `cwd` is the folder the person started their assistant in, as their shell's folder is
    for the CLI, so it is trusted wherever it is (outside the home too)."""
    cwd, session_id = payload.get("cwd"), payload.get("session_id")
    project = ""
    if isinstance(cwd, str) and os.path.isabs(cwd):
        private = [settings.memory_dir, settings.paths.data_dir, settings.db_path.parent]
        project = caller_project(
            cwd, workspaces=settings.memory_workspaces, private=private, trusted=True
        )
    return project, session_id if isinstance(session_id, str) else ""


def _fetch_context(
    settings: Settings, params: m.ContextParams, deadline: float | None, offline: Offline | None
) -> m.ContextResult:
    try:
        with Client(settings.socket_path, timeout=_remaining(deadline)) as client:
            return client.request(m.CONTEXT, params)
    except DaemonNotRunning:
        if offline is None:
            raise
    # The daemon is down: the index on disk still knows what was true when it stopped.
    result, _note = offline(settings, m.CONTEXT, params)
    assert isinstance(result, m.ContextResult)
    return result


def _remaining(deadline: float | None) -> float:
    if deadline is None:
        return TIME_LIMIT_S
    left = deadline - time.monotonic()
    if left <= 0:
        raise HookTimeout("time limit reached before the daemon was asked")
    return left


def _context_text(result: m.ContextResult) -> str:
    if not result.enabled:
        return ""
    return result.text if result.text.strip() else ""


def _has_query_matches(result: m.ContextResult) -> bool:
    return any(not _is_standing(s) for s in result.sections)


def _is_standing(section: m.ContextSection) -> bool:
    """True for memory that is in every context block whatever the query (already injected).

    Core and agent files are always loaded, and so is the current session's summary; project
    files are loaded for their project, with a nonzero `score` only when they match the query.
    """
    if section.source in ("core", "agent") or section.kind == "session-summary":
        return True
    if section.source == "project":
        return not section.score
    return False


def _hook_output(kind: str, text: str, assistant: str = CLAUDE_CODE_AGENT) -> str:
    # ASCII-only JSON: the hook's stdout encoding follows the user's locale, which may not be
    # UTF-8, and an encoding error would silently drop CJK memory.
    event = _EVENTS_OF.get(assistant, _EVENT_NAMES)[kind]
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    """Raise `HookTimeout` in the main thread after `seconds`, whatever it is blocked on.

    Socket timeouts bound each recv, not the whole exchange, and reading stdin has none; a real
    alarm is the only hard limit. Outside the main thread (in-process callers) it is a no-op.
    """

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise HookTimeout(f"hook exceeded {seconds:.2f}s")

    try:
        previous = signal.signal(signal.SIGALRM, on_alarm)
    except (ValueError, AttributeError):  # not the main thread, or no SIGALRM (Windows)
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


if __name__ == "__main__":
    raise SystemExit(main())
