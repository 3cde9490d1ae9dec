"""A fork server for the tests' `python -m memd …` processes.

The suite starts some 300 daemons and 350 CLI calls; each exec'd one spends most of its start
importing the same modules (~0.3 s of CPU for a daemon). A test process instead starts, once, a
server that has imported them (`PRELOAD`) and opened nothing else; every daemon or CLI call is
then a child forked from it, given the test's argv, environment, working directory, umask and
stdio, which runs `memd` as `python -m memd` would (`runpy`, `sys.argv`, `sys.path[0]`).

The child is a real process: the test signals it by its pid and reads its exit status, which
the server (its parent) relays over the child's own connection; `ForkedPopen` is a
`subprocess.Popen` whose waits read that status. A child inherits no thread, socket, file or
SQLite connection: the server imports and opens nothing else (it checks), and the child closes
every descriptor but its stdio before it runs memd. Python reseeds `random` in a forked child.

Where a call cannot be forked as it would be exec'd it is exec'd: another interpreter or
interpreter options, a variable read at interpreter start (`PYTHON*`, the locale's) that
differs from the server's, a working directory that does not exist, descriptors to pass, a new
session. `MEMD_TEST_FORK=0` (in the test process's environment) execs every call, to check a
failure on the exec path; a test about the process itself asks for exec (`exec_memd` marker).

Run as `python -m tests.forkserver SOCKET` by `Server.start`, never by hand.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import io
import json
import logging
import os
import runpy
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SWITCH = "MEMD_TEST_FORK"
# A folder: each forked child writes a cProfile of each of its threads there
# (`<pid>-<thread>.prof`, at the thread's end or the process's), for `python -m pstats`.
PROFILE = "MEMD_TEST_PROFILE"
# What a daemon and a CLI call import at start (measured: a daemon's sys.modules at its exit,
# beyond memd.app). Importing them opens nothing and starts no thread (the server checks).
PRELOAD = (
    "memd.app",
    "memd.api.client",
    "memd.cli",
    "memd.cli.parser",
    "memd.cli.argv",
    "memd.cli.progress",
    "memd.cli.render",
    "memd.cli.commands.conversations",
    "memd.cli.commands.daemon",
    "memd.cli.commands.history",
    "memd.cli.commands.memory",
    "memd.cli.commands.transfer",
    "apscheduler.schedulers.background",
    "apscheduler.triggers.interval",
    "apscheduler.executors.pool",
    "apscheduler.jobstores.memory",
    "concurrent.futures.process",
    "importlib.metadata",
    "multiprocessing",
    "psutil",
    "tzlocal",
    "zoneinfo",
    "argparse",
    "resource",
)
_MAX_MESSAGE = 1 << 20


def _startup_key(env: Mapping[str, str]) -> dict[str, str]:
    """The variables an interpreter reads once at its start (the locale's and Python's own): a
    forked child keeps the server's, so a call is forked only where they are the same."""
    keys = ("LANG", "LC_ALL", "LC_CTYPE")
    return {k: v for k, v in env.items() if k.startswith("PYTHON") or k in keys}


# -- the server (in its own process) ------------------------------------------------------


@dataclass
class _Request:
    module: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    umask: int
    fds: list[int]


def _clear_caches() -> None:
    """Empty every module-level functools cache of memd: what a fresh process starts with.
    Done once, in the server after its preload (it runs no memd code after that), not in each
    child: ~2.5 ms of CPU a child, every module's objects touched (their pages copied)."""
    for name, module in list(sys.modules.items()):
        if name == "memd" or name.startswith("memd."):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear) and hasattr(value, "cache_info"):
                    clear()


class _Server:
    def __init__(self, path: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(path)
        self.listener.listen(64)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "control")
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)

    def serve(self) -> _Request | None:
        """Serve until the test process goes; in a forked child, return its request."""
        while True:
            for key, _ in self.selector.select():
                if key.data == "control" and not os.read(sys.stdin.fileno(), 64):
                    return None  # the test process ended
                if key.data == "accept":
                    request = self._accept()
                    if request is not None:
                        return request
                if key.data == "child":
                    self._reap(key.fd)

    def _accept(self) -> _Request | None:
        conn, _ = self.listener.accept()
        fds: list[int] = []
        try:
            data, fds, _flags, _addr = socket.recv_fds(conn, _MAX_MESSAGE, 3)
            if len(fds) != 3:  # never a child without its own three standard streams
                raise ValueError(f"{len(fds)} descriptors, not 3")
            raw = json.loads(data)
            request = _Request(
                raw["module"], raw["args"], raw["env"], raw["cwd"], raw["umask"], fds
            )
            pid = os.fork()
        except Exception as e:  # a request this server cannot serve: the client execs instead
            for fd in fds:
                os.close(fd)
            # Said before the connection closes: the client reads it once it sees the close.
            print(f"refused a request: {e!r}", file=sys.stderr, flush=True)
            conn.close()
            return None
        if pid == 0:
            self._close_all(conn)
            return request
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, conn)
        self.selector.register(pidfd, selectors.EVENT_READ, "child")
        self._send(conn, {"pid": pid})
        return None

    def _reap(self, pidfd: int) -> None:
        pid, conn = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status, usage = os.wait4(pid, 0)
        # Its CPU, its own children's included: tests/cpustat.py counts it by command.
        self._send(
            conn, {"status": status, "cpu_ms": int(1000 * (usage.ru_utime + usage.ru_stime))}
        )
        conn.close()

    @staticmethod
    def _send(conn: socket.socket, message: dict[str, int]) -> None:
        try:
            conn.send(json.dumps(message).encode())
        except OSError:
            pass  # the test let go of the process (as of an exec'd one it no longer waits for)

    def _close_all(self, conn: socket.socket) -> None:
        """In a child: close what the server holds through its own objects, so none of them
        later closes a descriptor number the child has reused."""
        conn.close()
        for pidfd, (_, other) in self.children.items():
            os.close(pidfd)
            other.close()
        self.selector.close()
        self.listener.close()


def _stdio(fd: int) -> io.TextIOWrapper:
    """The standard stream on `fd` as the interpreter makes it at its start (PYTHONUNBUFFERED:
    the same in the server and the child)."""
    template = {0: sys.__stdin__, 1: sys.__stdout__, 2: sys.__stderr__}[fd]
    assert template is not None
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    mode = "rb" if fd == 0 else "wb"
    raw = open(fd, mode, buffering=0 if unbuffered and fd > 0 else -1, closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(
        raw,  # a FileIO where unbuffered, as the interpreter's
        encoding=template.encoding,
        errors=template.errors,
        line_buffering=not unbuffered and (fd == 2 or (fd == 1 and os.isatty(fd))),
        write_through=unbuffered,
    )


def _become(request: _Request, server_cwd: str) -> None:
    """In a forked child: take the request's stdio, umask, directory and environment, then run
    its module as `python -m` would. Its SystemExit ends this process as the interpreter ends
    any: non-daemon threads joined, atexit handlers run, streams flushed."""
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
        os.close(fd)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.umask(request.umask)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        stream = _stdio(fd)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    time.tzset()
    tempfile.tempdir = None
    if sys.path and sys.path[0] == server_cwd:
        sys.path[0] = os.getcwd()
    importlib.invalidate_caches()
    sys.argv = [sys.argv[0], *request.args]
    sys.orig_argv = [sys.executable, "-m", request.module, *request.args]

    def run() -> None:
        runpy.run_module(request.module, run_name="__main__", alter_sys=True)

    try:
        if _PROFILE_FOLDER:  # the server's (a child's environment is the test's)
            _profiled(_PROFILE_FOLDER, run)
        else:
            run()
    except SystemExit as e:
        _end_without_teardown(e.code)
    _end_without_teardown(None)


def _end_without_teardown(code: object) -> None:
    """End the child as the interpreter ends any process on `SystemExit(code)` in all that
    anyone can see: the message of a code that is not a number, its non-daemon threads
    joined, every atexit handler run (the preload's too, in the same order), its streams
    flushed, its status. What it skips is the interpreter's teardown of every module and
    object, which in a child of this server cost ~30 ms of CPU (the preloaded modules' pages
    copied as their objects were freed), as much as the rest of a bare daemon's stop: memd
    closes what it opened itself. An uncaught error other than SystemExit is left to the
    interpreter (its traceback, its exit)."""
    status = 0 if code is None else code if isinstance(code, int) else 1
    if code is not None and not isinstance(code, int):
        with contextlib.suppress(Exception):
            print(code, file=sys.stderr)
    threading._shutdown()  # type: ignore[attr-defined]  # the interpreter's first step
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status & 0xFF)  # as the system takes a process's status


_PROFILE_FOLDER = os.environ.get(PROFILE, "")


def _profiled(folder: str, run: Callable[[], object]) -> None:
    """Run `run` with every thread of this process under cProfile (PROFILE), timed by the
    thread's own CPU time (not the wall clock: a thread waiting costs nothing)."""
    import cProfile

    profiles: list[tuple[str, cProfile.Profile]] = []
    thread_run = threading.Thread.run

    def dump(name: str, profile: cProfile.Profile) -> None:
        profile.disable()
        profile.dump_stats(os.path.join(folder, f"{os.getpid()}-{name}-{id(profile)}.prof"))

    def profiled_run(self: threading.Thread) -> None:
        profile = cProfile.Profile(time.thread_time)
        profiles.append((self.name, profile))
        profile.enable()
        try:
            thread_run(self)
        finally:
            profiles.remove((self.name, profile))
            dump(self.name, profile)

    threading.Thread.run = profiled_run  # type: ignore[method-assign]
    main = cProfile.Profile(time.thread_time)
    main.enable()
    try:
        run()
    finally:
        dump("main", main)
        for name, profile in list(profiles):  # threads still running (daemon threads)
            dump(name, profile)


def main(path: str) -> None:
    """The server: preload, say ready, serve; in each forked child, run its request."""
    before = _process_state()
    for name in PRELOAD:
        importlib.import_module(name)
    _check_process_state(before)
    _clear_caches()  # what the preload's imports cached (a child starts with none)
    gc.collect()
    gc.freeze()  # the preloaded objects stay out of every child's collections: fewer copied pages
    server_cwd = os.getcwd()
    server = _Server(path)
    _check_clean(server)
    sys.stdout.write(f"ready {os.getpid()}\n")
    sys.stdout.flush()
    request = server.serve()
    if request is not None:
        _become(request, server_cwd)


def _target(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except FileNotFoundError:
        return None


def _check_clean(server: _Server) -> None:
    """The server holds nothing a child must not inherit: one thread, no descriptor but stdio
    and its own listener and selector."""
    own = {server.listener.fileno(), server.selector.fileno()}
    tasks = os.listdir("/proc/self/task")
    if len(tasks) != 1 or threading.active_count() != 1:
        raise RuntimeError(f"the preload started threads: {tasks}, {threading.enumerate()}")
    # The listing's own descriptor is gone once listed: keep those still open.
    listed = {int(fd) for fd in os.listdir("/proc/self/fd")} - own - {0, 1, 2}
    targets = {fd: _target(fd) for fd in listed}
    targets = {fd: t for fd, t in targets.items() if t is not None}
    if targets:
        raise RuntimeError(f"the preload left descriptors open: {targets}")


_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGCHLD,
            signal.SIGPIPE, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)  # fmt: skip


def _process_state() -> tuple[object, ...]:
    """What of the process a preload could set and a child would inherit: logging's root
    handlers and level, and how each signal is handled (a fresh interpreter's, as the server
    started with: the test process's ignored signals stay ignored across an exec too)."""
    handlers = tuple(signal.getsignal(sig) for sig in _SIGNALS)
    return (tuple(logging.root.handlers), logging.root.level, handlers)


def _check_process_state(before: tuple[object, ...]) -> None:
    """The preload set up no logging and handles no signal."""
    after = _process_state()
    if after != before:
        raise RuntimeError(f"the preload changed the process's state: {before} -> {after}")


# -- the client (in the test process) -------------------------------------------------------

# Set by conftest for a test marked `exec_memd` (its processes are what it tests).
EXEC_ONLY = False


class Refused(Exception):
    """The server did not fork this request (it says why in its log): exec it instead."""


def _umask() -> int:
    """This process's umask, read without setting it (another thread may be creating files)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise RuntimeError("no Umask in /proc/self/status")


class Server:
    """This test process's fork server: started at its first use, ended with the process."""

    _lock = threading.Lock()
    _started: Server | None = None
    base = "/tmp"  # where its folder goes: AF_UNIX paths must stay short

    def __init__(self, key: Mapping[str, str], path_var: str) -> None:
        self.key = dict(key)
        self.dir = Path(tempfile.mkdtemp(prefix="memd-fs-", dir=self.base))
        self.path = str(self.dir / "s")
        self.log = self.dir / "server.log"
        # No HOME of a person's, nor of a test's: the preload must read none (it reads none).
        env = {**self.key, "PATH": path_var, "HOME": str(self.dir / "no-home")}
        if os.environ.get(PROFILE):
            env[PROFILE] = os.environ[PROFILE]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.forkserver", self.path],
                cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            )  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        self.proc.stdout.close()
        if not line.startswith(b"ready"):
            self.proc.wait()
            said = self.log.read_text()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise RuntimeError(f"the fork server did not start:\n{said}")

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> Server | None:
        """The server a process of `env` can be forked from, or None (exec it)."""
        key = _startup_key(env)
        with cls._lock:
            if cls._started is None:
                cls._started = cls(key, env.get("PATH", os.defpath))
                import atexit

                atexit.register(cls._started.close)
        return cls._started if cls._started.key == key else None

    def close(self) -> None:
        """End the server (its children run on, as exec'd ones would) and remove its folder."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def fork(
        self, module: str, args: list[str], env: Mapping[str, str], cwd: str, fds: list[int]
    ) -> tuple[socket.socket, int]:
        """A child running `module` with `args`; its connection (which says its exit status)
        and its pid."""
        request = {"module": module, "args": args, "env": dict(env), "cwd": cwd,
                   "umask": _umask()}  # fmt: skip
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(self.path)
            socket.send_fds(conn, [json.dumps(request).encode()], fds)
            reply = conn.recv(4096)
        except OSError:
            conn.close()
            raise
        if not reply:
            conn.close()
            raise Refused(self.log.read_text())
        return conn, int(json.loads(reply)["pid"])


class ForkedPopen(subprocess.Popen[Any]):
    """A `subprocess.Popen` whose child is forked by the fork server instead of exec'd: the
    pipes, `communicate`, signals and timeouts are Popen's; a wait reads the exit status the
    server relays (it is the child's parent)."""

    # Popen's own, which typeshed does not declare.
    _waitpid_lock: threading.Lock
    _child_created: bool
    _handle_exitstatus: Callable[[int], None]
    _close_pipe_fds: Callable[..., None]

    def __init__(self, server: Server, argv: Sequence[str], **kwargs: Any) -> None:
        self._server = server
        self._conn: socket.socket | None = None
        super().__init__(list(argv), **kwargs)

    def _execute_child(
        self, args: list[str], executable: Any, preexec_fn: Any, close_fds: Any, pass_fds: Any,
        cwd: Any, env: Mapping[str, str] | None, startupinfo: Any, creationflags: Any, shell: Any,
        p2cread: int, p2cwrite: int, c2pread: int, c2pwrite: int, errread: int, errwrite: int,
        *rest: Any,
    ) -> None:  # fmt: skip
        # -1: the child inherits the test process's stream, as an exec'd one would.
        fds = [p2cread, c2pwrite, errwrite]
        fds = [fd if fd != -1 else i for i, fd in enumerate(fds)]
        try:
            self._conn, self.pid = self._server.fork(
                args[2], args[3:], os.environ if env is None else env,
                os.fspath(cwd) if cwd is not None else os.getcwd(), fds,
            )  # fmt: skip
            self._child_created = True
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        conn = self._conn
        assert conn is not None
        if wait_flags & os.WNOHANG and not select.select([conn], [], [], 0)[0]:
            return (0, 0)
        reply = conn.recv(4096)
        if not reply:
            raise RuntimeError(f"the fork server ended before process {self.pid} did")
        conn.close()
        said = json.loads(reply)
        if "cpu_ms" in said:
            from tests import cpustat

            cpustat.record(self.args, said["cpu_ms"] / 1000, forked=True)
        return (self.pid, int(said["status"]))

    def _internal_poll(self, _deadstate: int | None = None, *_: Any, **__: Any) -> int | None:
        if self.returncode is None and self._waitpid_lock.acquire(False):
            try:
                if self.returncode is None:
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)
            except (OSError, RuntimeError):
                if _deadstate is None:
                    raise
                self.returncode = _deadstate
            finally:
                self._waitpid_lock.release()
        return self.returncode


def _server_for(
    argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None,
    kwargs: Mapping[str, Any],
) -> Server | None:  # fmt: skip
    """The server to fork this call from, or None where it must be exec'd (module doc)."""
    if EXEC_ONLY or os.environ.get(SWITCH) == "0":
        return None
    if len(argv) < 3 or argv[0] != sys.executable or argv[1] != "-m":
        return None
    if kwargs.get("pass_fds") or kwargs.get("start_new_session") or kwargs.get("preexec_fn"):
        return None
    if kwargs.get("executable") or kwargs.get("shell") or kwargs.get("process_group") is not None:
        return None
    if cwd is not None and not os.path.isdir(cwd):
        return None  # the exec path raises the error a test expects
    return Server.for_env(os.environ if env is None else env)


def popen(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None, **kwargs: Any,
) -> subprocess.Popen[Any]:  # fmt: skip
    """`subprocess.Popen(argv, …)`, forked from the fork server where it can be."""
    server = _server_for(argv, env, cwd, kwargs)
    if server is not None:
        try:
            return ForkedPopen(server, argv, env=env, cwd=cwd, **kwargs)
        except Refused:
            pass
    return subprocess.Popen(list(argv), env=env, cwd=cwd, **kwargs)


def run(
    argv: Sequence[str], *, input: str | bytes | None = None, timeout: float | None = None,
    check: bool = False, capture_output: bool = False, **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:  # fmt: skip
    """`subprocess.run(argv, …)`, forked from the fork server where it can be (the same
    steps as subprocess.run: on a timeout the child is killed and the error raised)."""
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    with popen(argv, **kwargs) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            proc.kill()
            e.output, e.stderr = proc.communicate()
            raise
        except BaseException:
            proc.kill()
            raise
        code = proc.poll()
    assert code is not None
    if check and code:
        raise subprocess.CalledProcessError(code, list(argv), out, err)
    return subprocess.CompletedProcess(list(argv), code, out, err)


if __name__ == "__main__":
    main(sys.argv[1])
