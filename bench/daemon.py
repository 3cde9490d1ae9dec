"""Start and stop a real `memd serve` process on a throwaway MEMD_HOME for the benchmarks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.report import REPO

# Variables of the caller that must not leak into a benchmark daemon (real homes, keys, clouds).
_DROP_PREFIXES = ("MEMD_", "ANTHROPIC_", "SUPABASE_", "CLAUDE_CONFIG_DIR")


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a benchmark process: everything under `home`, nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        MEMD_HOME=str(home),
        MEMD_LOG_LEVEL="WARNING",
        # Never tail the user's real assistant logs from a benchmark.
        MEMD_LOGS_CLAUDE_CODE="false",
        MEMD_LOGS_CLAUDE_DIR=str(home / "no-claude-logs"),
        # The full-text path, as without the extra, unless a benchmark turns recall by
        # meaning on (`--semantic`: MEMD_SEMANTIC_KIND=packaged).
        MEMD_SEMANTIC_KIND="off",
        # With it on, every query waits for its vector: a recall figure must not depend on
        # the machine's load (the latency benches measure the shipped `semantic.query_wait_ms`).
        MEMD_SEMANTIC_QUERY_WAIT_MS="0",
        PYTHONPATH=str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
    )
    env.update(extra)
    return env


def socket_path(home: Path) -> Path:
    from memd.core import settings

    return settings.load(env=bench_env(home)).socket_path


class Daemon:
    """`python -m memd serve` as a child process, its log in `<home>/daemon.log`."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.env = bench_env(home, **env)
        self.sock = socket_path(home)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = home / "daemon.log"
        self.started_at = 0.0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memd", "serve"],
            env=self.env, cwd=str(self.home), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()

    def wait_ready(self, timeout: float = 170.0) -> float:
        """Seconds from spawn until the socket answers `status` (the startup index is done)."""
        from memd.api.client import Client
        from memd.core.errors import DaemonNotRunning

        assert self.proc is not None
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}:\n{self.log_tail()}")
            if self.sock.exists():
                try:
                    with Client(self.sock, timeout=5) as c:
                        starting = c.call("status")["daemon"].get("starting")
                    # `status` answers during the first index: ready is when that is done.
                    if not starting:
                        return time.perf_counter() - self.started_at
                except DaemonNotRunning:
                    pass
            time.sleep(0.01)
        raise RuntimeError(f"daemon not ready after {timeout}s:\n{self.log_tail()}")

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> Any:
        from memd.api.client import Client

        with Client(self.sock, timeout=timeout) as c:
            return c.call(method, params or {})

    def stop(self, timeout: float = 20.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> Daemon:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def cpu_s(pid: int) -> float:
    """The CPU seconds (user + system) process `pid` has used so far."""
    import psutil

    t = psutil.Process(pid).cpu_times()
    return float(t.user + t.system)


def proc_mem(pid: int) -> dict[str, float]:
    """Current and peak resident memory of a process, in MB (Linux /proc; psutil elsewhere)."""
    out = {"rss_mb": float("nan"), "peak_mb": float("nan")}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss_mb"] = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                out["peak_mb"] = int(line.split()[1]) / 1024
    except OSError:
        import psutil

        out["rss_mb"] = psutil.Process(pid).memory_info().rss / (1 << 20)
    return out


def memory_map(pid: int) -> dict[str, float]:
    """Resident MB of a process by what backs it (Linux /proc/<pid>/smaps): each file holding
    over 1 MB by its name, the other files together, the main heap, and anonymous memory
    (Python's object arenas, numpy arrays, the C allocator's thread arenas, thread stacks).
    Empty where there is no smaps."""
    kb: dict[str, int] = {}
    where = ""
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return {}
    for line in text.splitlines():
        head = line.split(maxsplit=5)
        if not head:
            continue
        if "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
            name = head[5] if len(head) > 5 else ""
            where = f"file {Path(name).name}" if name.startswith("/") else (name or "anonymous")
        elif head[0] == "Rss:":
            kb[where] = kb.get(where, 0) + int(head[1])
    out: dict[str, float] = {}
    for name, size in sorted(kb.items(), key=lambda kv: -kv[1]):
        key = name if size >= 1024 or not name.startswith("file ") else "other files"
        out[key] = out.get(key, 0.0) + size / 1024
    return out
