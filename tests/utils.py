"""Test helpers: a real daemon process, polling waits."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memd.api import client
from memd.core.errors import DaemonNotRunning
from tests import forkserver

ROOT = Path(__file__).resolve().parent.parent


def wait_for(pred: Callable[[], Any], timeout: float = 5.0, interval: float = 0.02) -> Any:
    """Poll `pred` until it returns something truthy; fail with its last value after `timeout`."""
    end = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < end:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s (last value: {last!r})")


def unit_stop_timeout() -> float:
    """TimeoutStopSec of the systemd unit memd installs: how long a stop may take."""
    unit = (ROOT / "memd" / "cli" / "templates" / "memd.service").read_text()
    m = re.search(r"^TimeoutStopSec=(\d+)$", unit, re.M)
    assert m is not None
    return float(m.group(1))


# Variables that point a program at a person's own files, settings or keys: memd's own, the
# XDG base directories, systemd's socket activation, and where each AI assistant keeps its
# conversations and configuration (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, …). None of
# them reaches a test's daemon or CLI, nor the test process itself (conftest).
PRIVATE_ENV = (
    "MEMD_", "XDG_", "LISTEN_", "NOTIFY_", "ANTHROPIC_", "SUPABASE_", "OPENAI_", "GOOGLE_",
    "CLAUDE_", "CODEX_", "GEMINI_", "OPENCODE_", "AIDER_", "CONTINUE_", "CLINE_", "ROO_",
    "CURSOR_", "WINDSURF_", "VSCODE_",
)  # fmt: skip
# Kept for the test process: where `scripts/install-clis` put the assistants' CLIs (tests/clis.py),
# whether its memd processes are forked from a fork server (tests/forkserver.py), and where
# it writes its files' CPU (tests/cpustat.py).
KEPT_ENV = ("MEMD_CLIS_DIR", forkserver.SWITCH, forkserver.PROFILE, "MEMD_TEST_CPU")

# The HOME the running test was given by conftest (`_isolate_env`); None outside a test's own
# set-up (a module- or session-scoped fixture), where a daemon gets a HOME of its own.
TEST_HOME: Path | None = None


def user_dirs(user_home: Path) -> dict[str, str]:
    """HOME and the XDG base directories of a throwaway user whose home is `user_home`."""
    return {
        "HOME": str(user_home),
        "XDG_CONFIG_HOME": str(user_home / ".config"),
        "XDG_DATA_HOME": str(user_home / ".local" / "share"),
        "XDG_STATE_HOME": str(user_home / ".local" / "state"),
        "XDG_CACHE_HOME": str(user_home / ".cache"),
        "XDG_RUNTIME_DIR": str(user_home / ".run"),
    }


def user_home_of(home: Path, extra: Mapping[str, str] | None = None) -> Path:
    """The HOME a daemon or CLI on MEMD_HOME `home` runs with (see `memd_env`)."""
    if extra and "HOME" in extra:
        return Path(extra["HOME"])
    if TEST_HOME is not None:
        return Path(os.environ["HOME"])  # the test's (conftest's, or one the test set)
    return home / "user-home"


def memd_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a test's daemon or CLI: its own MEMD_HOME, HOME and XDG folders.

    HOME is the running test's own (conftest gives every test one), or, when a module- or
    session-scoped fixture starts the process, a folder inside `home`. Nothing that points at a
    person's files is inherited (`PRIVATE_ENV`); `extra` overrides all of it.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE_ENV)}
    user_home = user_home_of(home, extra)
    if user_home == home / "user-home":
        user_home.mkdir(parents=True, exist_ok=True)
    env.update(user_dirs(user_home))
    env.update({"MEMD_HOME": str(home), "PYTHONPATH": str(ROOT), "MEMD_LOG_LEVEL": "DEBUG"})
    # Off unless a test asks for it (`MEMD_SEMANTIC_KIND="packaged"` in `extra`): see conftest.
    env["MEMD_SEMANTIC_KIND"] = "off"
    env.update(extra)
    return env


def call(socket_path: Path, method: str, params: Any = None, timeout: float = 30.0) -> Any:
    """One call by method name with JSON params, its answer as JSON (connect, call, close): a
    test's way to send what it likes and read what the socket says."""
    with client.Client(socket_path, timeout=timeout) as c:
        return c.call(method, params)


class DaemonProcess:
    """A real `memd serve` subprocess on its own MEMD_HOME."""

    def __init__(
        self,
        home: Path,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        **more_env: str,
    ) -> None:
        self.home = home
        self.cwd = cwd  # the daemon's working directory (default: the tests')
        self.extra_env = {**(env or {}), **more_env}
        self.sock = home / "run" / "memd.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home / "daemon.log"
        # A test may run it another way; run this way, it is forked from tests/forkserver.py.
        self.argv = [sys.executable, "-m", "memd", "serve"]
        self.user_home: Path | None = None

    @property
    def memory(self) -> Path:
        return self.home / "memory"

    @property
    def pid(self) -> int:
        """The daemon's process id (once started)."""
        assert self.proc is not None, "the daemon was not started"
        return self.proc.pid

    def start(self, timeout: float = 20.0) -> DaemonProcess:
        self.home.mkdir(parents=True, exist_ok=True)
        logf = open(self.log, "ab")  # noqa: SIM115 - owned by the process for its lifetime
        env = memd_env(self.home, **self.extra_env)
        self.user_home = Path(env["HOME"])  # the HOME it runs with (see `memd_env`)
        self.proc = forkserver.popen(
            self.argv,
            env=env,
            cwd=self.cwd,
            stdout=logf,
            stderr=subprocess.STDOUT,
        )
        logf.close()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"daemon exited with {self.proc.returncode}:\n{self.log.read_text()}"
                )
            try:
                # The socket answers `status` during the first index: ready is when that is done.
                if not call(self.sock, "status", timeout=2)["daemon"].get("starting"):
                    return self
            except DaemonNotRunning:
                pass
            time.sleep(0.05)
        raise AssertionError(f"daemon did not start:\n{self.log.read_text()}")

    def send_signal(self, sig: int) -> None:
        assert self.proc is not None, "the daemon was not started"
        self.proc.send_signal(sig)

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return call(self.sock, method, params or {}, timeout=30)

    def search_paths(self, query: str) -> set[str]:
        return {h["path"] for h in self.call("search", {"query": query, "limit": 50})["hits"]}

    def stop(self, sig: int = signal.SIGTERM, timeout: float | None = None) -> int:
        """Signal the daemon and wait for it to exit: by default as long as memd's service unit
        lets a stop take (TimeoutStopSec), after which it kills it and fails."""
        timeout = unit_stop_timeout() if timeout is None else timeout
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"daemon did not stop within {timeout}s:\n{self.log.read_text()}"
            ) from None
        self._released()
        return code

    def _released(self, timeout: float = 10.0) -> None:
        """Wait (a while at most) until nothing holds the daemon's instance lock, as a service
        manager waits for all of a unit's processes before starting it again. A child the daemon
        was starting (git) holds copies of its descriptors, the lock's and the listening
        socket's, until that child's exec: killed, the daemon is gone but its lock is held for a
        few milliseconds more (2 stops in 30 at load ~5), and a daemon started on the same home
        then found it held and the socket answering, and exited "already running"."""
        lock = self.home / "data" / "memd.lock"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                fd = os.open(lock, os.O_RDONLY)
            except FileNotFoundError:
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            finally:
                os.close(fd)  # lets go of the lock, if taken
            time.sleep(0.01)

    def cli(
        self,
        *args: str,
        input: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        **more_env: str,
    ) -> subprocess.CompletedProcess[str]:
        return run_memd(
            *args, env=memd_env(self.home, **{**(env or {}), **more_env}), cwd=cwd, input=input
        )


def run_memd(
    *args: str,
    env: Mapping[str, str],
    cwd: Path | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """`python -m memd ARGS` run to its end, its output as text: forked from the test process's
    fork server (tests/forkserver.py), or exec'd where that cannot stand for an exec."""
    return forkserver.run(
        [sys.executable, "-m", "memd", *args],
        env=env, cwd=cwd, input=input, timeout=timeout, capture_output=True, text=True,
    )  # fmt: skip


@contextlib.contextmanager
def answering_once(sock_path: Path, result: object) -> Iterator[None]:
    """A socket at `sock_path` that answers the first request with `result` (a daemon of
    another version, say), for the block's duration."""
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        server.listen(1)

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                request = json.loads(conn.makefile().readline())
                reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
                conn.sendall(json.dumps(reply).encode() + b"\n")

        t = threading.Thread(target=answer)
        t.start()
        try:
            yield
        finally:
            t.join(10)
