"""Claude Code hooks: fail-open behaviour in-process and as a process, and real context output."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.core.errors import ConfigError, DaemonNotRunning
from memd.core.settings import Settings, load
from memd.integrations import hooks
from tests.utils import ROOT, DaemonProcess, memd_env, wait_for

SESSION = "8b7c0e2e-0d4c-4a0e-9a53-5f2b6f1f0c11"


def payload(**fields: Any) -> str:
    base = {
        "session_id": SESSION,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/tmp",
    }
    return json.dumps({**base, **fields})


def run(kind: str, stdin: str, settings: Settings, **kw: Any) -> tuple[int, str, float]:
    out = io.StringIO()
    start = time.monotonic()
    code = hooks.run_hook(kind, io.StringIO(stdin), out, lambda: settings, **kw)
    return code, out.getvalue(), time.monotonic() - start


@pytest.fixture
def settings(home: Path) -> Settings:
    return load(env=memd_env(home))


# --- fail open, in-process --------------------------------------------------------------


@pytest.mark.serial  # asserts a wall-clock bound (scripts/test runs it alone)
@pytest.mark.parametrize("kind", hooks.KINDS)
def test_daemon_down_prints_nothing_and_returns_quickly(kind: str, settings: Settings) -> None:
    stdin = payload(hook_event_name="SessionStart", source="compact", prompt="what did we do?")
    code, out, elapsed = run(kind, stdin, settings)
    assert (code, out) == (0, "")
    assert elapsed < 0.5


@pytest.mark.parametrize(
    ("kind", "stdin"),
    [
        ("session-start", ""),
        ("session-start", "{not json"),
        ("session-start", "[1, 2]"),
        ("session-start", "null"),
        ("user-prompt", '{"prompt": 5}'),
        ("user-prompt", '{"session_id": "x"}'),
        ("user-prompt", "\x00\xff garbage"),
    ],
)
def test_malformed_payload_prints_nothing(kind: str, stdin: str, settings: Settings) -> None:
    assert run(kind, stdin, settings)[:2] == (0, "")


def test_errors_are_reported_only_where_asked(settings: Settings) -> None:
    err = io.StringIO()
    code, out, _ = run("session-start", "{oops", settings, stderr=err)
    assert (code, out) == (0, "")
    assert "memd hook session-start: ValueError: hook payload is not JSON" in err.getvalue()


def test_unknown_kind_and_bad_config_print_nothing(settings: Settings) -> None:
    assert run("post-compact", payload(), settings)[:2] == (0, "")

    def broken() -> Settings:
        raise ConfigError("config.toml: unknown setting 'x.y'")

    out = io.StringIO()
    assert hooks.run_hook("session-start", io.StringIO(payload()), out, broken) == 0
    assert out.getvalue() == ""


def test_blank_prompt_needs_no_daemon(settings: Settings) -> None:
    assert hooks.user_prompt(payload(prompt="   "), settings) == ""
    with pytest.raises(DaemonNotRunning):
        hooks.user_prompt(payload(prompt="hello"), settings)


@pytest.fixture
def silent_daemon(home: Path) -> Iterator[Path]:
    """A socket that accepts connections and never answers: a wedged daemon."""
    path = home / "wedged.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()
    path.unlink()


@pytest.mark.serial  # asserts a wall-clock bound (scripts/test runs it alone)
def test_wedged_daemon_is_cut_off_at_the_time_limit(home: Path, silent_daemon: Path) -> None:
    settings = load(env=memd_env(home, MEMD_SOCKET=str(silent_daemon)))
    code, out, elapsed = run("session-start", payload(source="startup"), settings, time_limit=0.3)
    assert (code, out) == (0, "")
    assert 0.25 < elapsed < 0.6


@pytest.mark.serial  # asserts a wall-clock bound (scripts/test runs it alone)
def test_stdin_that_never_closes_is_cut_off(settings: Settings) -> None:
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(read_fd, "r") as stdin:
            out = io.StringIO()
            start = time.monotonic()
            code = hooks.run_hook("user-prompt", stdin, out, lambda: settings, time_limit=0.3)
            elapsed = time.monotonic() - start
    finally:
        os.close(write_fd)
    assert (code, out.getvalue()) == (0, "")
    assert elapsed < 0.6


# --- as a process ---------------------------------------------------------------------------


def hook_process(
    argv: list[str], stdin: str, home: Path
) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=memd_env(home),
        cwd=ROOT,
        timeout=30,
    )
    return proc, time.monotonic() - start


MODULE = ["-m", "memd.integrations.hooks"]
CLI_ARGV = ["-m", "memd", "hook"]


@pytest.mark.serial  # asserts a wall-clock bound (scripts/test runs it alone)
@pytest.mark.parametrize(
    "argv", [pytest.param(MODULE, id="module"), pytest.param(CLI_ARGV, id="cli")]
)
@pytest.mark.parametrize(
    ("kind", "stdin"),
    [
        ("session-start", payload(hook_event_name="SessionStart", source="compact")),
        ("user-prompt", payload(hook_event_name="UserPromptSubmit", prompt="last time?")),
        ("session-start", "{malformed"),
        ("user-prompt", ""),
    ],
)
def test_process_with_daemon_down_exits_0_silently(
    argv: list[str], kind: str, stdin: str, home: Path
) -> None:
    # With a limit far above what it needs, the hook must still end at once: a daemon that is
    # down is seen on the first connect, never waited for. (How long a hook takes at its
    # default limit is measured by bench/hook_bench.py, not asserted here: a loaded machine
    # takes longer than 1 s just to start Python.)
    proc, elapsed = hook_process([*argv, "--time-limit", "30", kind], stdin, home)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert elapsed < 15


# --- against a real daemon --------------------------------------------------------------


@pytest.fixture
def daemon(home: Path) -> Iterator[Settings]:
    """A real `memd serve` on its own MEMD_HOME, with a few Markdown memories."""
    memory = home / "memory"
    (memory / "_core").mkdir(parents=True)
    (memory / "topics").mkdir()
    (memory / "_core" / "preferences.md").write_text(
        "# Preferences\n\n## Style\n\n- Answers short, code first (marker: QUOKKA-PREF)\n"
    )
    (memory / "topics" / "vue.md").write_text(
        "# Vue\n\n## Testing\n\nFor Vue components use vitest with @vue/test-utils "
        "(marker: WOMBAT-VUE).\n"
    )
    proc = DaemonProcess(home).start()
    try:
        wait_for(lambda: proc.search_paths("WOMBAT"), timeout=10)
        # Two conversations pushed the way any app can: an older one, and the session that
        # Claude Code is about to compact.
        now = time.time()
        proc.call(
            "ingest",
            {
                "turns": [
                    turn(
                        "older", "user", "How do I set up the Kubernetes ingress?", now - 3 * 86400
                    ),
                    turn(
                        "older",
                        "assistant",
                        "Use ingress-nginx with cert-manager.",
                        now - 3 * 86400,
                    ),
                    turn(
                        SESSION, "user", "Draft the changelog for release 2.0 (EMU-CUR)", now - 60
                    ),
                    turn(SESSION, "assistant", "Here is a changelog draft for 2.0.", now - 50),
                ]
            },
        )
        yield load(env=memd_env(home))
    finally:
        proc.stop()


def turn(session_id: str, role: str, content: str, ts: float) -> dict[str, Any]:
    return {"session_id": session_id, "role": role, "content": content, "ts": ts}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project folder below the user's home with its own project-tier memory, as Claude
    Code's `cwd`."""
    root = tmp_path / "home" / "app"
    (root / ".memd" / "memory").mkdir(parents=True)
    (root / ".memd" / "memory" / "context.md").write_text(
        "# Project app\n\n## Context\n\n- Monorepo on pnpm workspaces (marker: KOALA-PROJ)\n"
    )
    return root


def test_session_start_after_compaction_injects_the_context(
    daemon: Settings, workspace: Path
) -> None:
    stdin = payload(hook_event_name="SessionStart", source="compact", cwd=str(workspace))
    code, out, _ = run("session-start", stdin, daemon)
    assert code == 0
    answer = json.loads(out)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "QUOKKA-PREF" in context and "KOALA-PROJ" in context
    # What the compaction summarised away comes back: this session's own summary.
    assert "EMU-CUR" in context
    assert context.startswith('<memory source="memd">')
    assert out.isascii()


def test_user_prompt_adds_only_relevant_memory(daemon: Settings, tmp_path: Path) -> None:
    relevant = payload(prompt="How should I test my Vue components?", cwd=str(tmp_path))
    code, out, _ = run("user-prompt", relevant, daemon)
    assert code == 0
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    assert "WOMBAT-VUE" in answer["additionalContext"]

    recalled = payload(prompt="Did we talk about the kubernetes ingress last time?")
    context = json.loads(run("user-prompt", recalled, daemon)[1])["hookSpecificOutput"]
    assert "ingress-nginx" in context["additionalContext"]

    # Core memory, project memory and this session's summary are already in the session:
    # a prompt that matches nothing else adds nothing.
    unrelated = payload(prompt="zyzzyva quantum kumquat", cwd=str(tmp_path))
    assert run("user-prompt", unrelated, daemon)[:2] == (0, "")


def test_gemini_cli_prompt_after_its_session_start_context(daemon: Settings) -> None:
    """Gemini CLI, run with a prompt, hands its per-prompt hook (`BeforeAgent`) the prompt with
    the SessionStart hook's text before it, in `<hook_context>` (as Gemini CLI 0.61 does): the
    question alone is the query, else the memory's own words drown it."""
    start = json.loads(run("session-start", payload(hook_event_name="SessionStart"), daemon,
                           assistant="gemini")[1])["hookSpecificOutput"]  # fmt: skip
    assert start["hookEventName"] == "SessionStart"
    prompt = (f"<hook_context>{start['additionalContext']}</hook_context>\n\n"
              "How do I set up the Kubernetes ingress?")  # fmt: skip
    out = run("user-prompt", payload(hook_event_name="BeforeAgent", prompt=prompt), daemon,
              assistant="gemini")[1]  # fmt: skip
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "BeforeAgent"
    assert "user: How do I set up the Kubernetes ingress?" in answer["additionalContext"]


@pytest.mark.parametrize(
    "argv", [pytest.param(MODULE, id="module"), pytest.param(CLI_ARGV, id="cli")]
)
def test_session_start_process_prints_hook_json(
    argv: list[str], daemon: Settings, home: Path, workspace: Path
) -> None:
    stdin = payload(hook_event_name="SessionStart", source="compact", cwd=str(workspace))
    proc, _ = hook_process([*argv, "session-start"], stdin, home)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "QUOKKA-PREF" in context and "KOALA-PROJ" in context
