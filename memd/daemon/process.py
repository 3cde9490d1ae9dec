"""The daemon process behind `memd serve`: lock, store, engine, socket, signals, readiness,
periodic work and an ordered shutdown. It serves whatever engine the composition root builds.

Its life is three steps, as `Daemon.serve` runs them. `startup`: stop and reload signals
handled → instance lock → store → engine → socket (answering `status` only) → the features'
startup steps (arm the watcher, catch up with the files, apply what the watcher saw) → every
method → scheduler → periodic loops → the features' `on_start` (tailers) → ready. `main_loop`:
serve until SIGTERM/SIGINT. `shutdown`, from wherever the start got: stop accepting and let
requests finish → scheduler (jobs stop at their next checkpoint) → the features' `on_stop` in
reverse order → store (its writer drains queued writes) → socket file → lock. A stop during
the start ends the step under way at its next progress report and takes the same shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import logging
import os
import signal
import socket
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

from memd import __version__
from memd.api import messages as msg
from memd.api.methods import Periodic
from memd.core import settings as settings_mod
from memd.core import trim
from memd.core.errors import DaemonStopping, DiskFull, MemdError
from memd.core.fsio import PRIVATE_DIR, make_private_dir, tighten
from memd.core.models import Recovery
from memd.core.settings import Settings, SettingValue
from memd.daemon import activation, repo, sdnotify
from memd.daemon.engine import Engine
from memd.daemon.lock import InstanceLock
from memd.daemon.scheduler import Scheduler
from memd.daemon.server import Server, bind_unix_socket
from memd.db import Store, recovery

log = logging.getLogger("memd")
# A stop ends within this many seconds of SIGTERM; below the service unit's TimeoutStopSec
# (memd/cli/templates/memd.service), so memd exits on its own before the manager kills it.
STOP_DEADLINE_S = 15.0
# How long a stop during the start waits for the step under way to reach its next checkpoint.
STEP_STOP_WAIT_S = 5.0
# glibc's arenas for the daemon's threads (its default: eight per core); see core/trim.py.
MALLOC_ARENAS = 2
EngineFactory = Callable[[Settings, Store], Engine]


def setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


class Daemon:
    """The long-running process behind `memd serve`: `startup`, `main_loop`, `shutdown`.

    The stop signals are handled from the first instant (`serve` installs them before the
    instance lock is taken): a SIGTERM while the first index runs ends that index at its next
    batch and takes the same ordered shutdown as a stop while serving.
    """

    def __init__(
        self,
        settings: Settings,
        build: EngineFactory,
        *,
        config_file: Path | None = None,
        overrides: Mapping[str, SettingValue] | None = None,
    ) -> None:
        self.settings = settings
        self.build = build
        self.config_file = config_file
        # Command-line overrides (`--log-level`) outlive a SIGHUP reload of the file.
        self.overrides = overrides
        self.stop_event: asyncio.Event | None = None
        self.engine: Engine | None = None
        self.server: Server | None = None
        self._lock: InstanceLock | None = None
        self._store: Store | None = None
        self._bound_path: Path | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._reloads: set[asyncio.Task[None]] = set()
        self._reload_lock = asyncio.Lock()
        self._reload_wanted = False  # a SIGHUP during the start, applied once serving
        self._serving = False  # every feature started (its tailers too): reloads apply at once

    def run(self) -> int:
        # Before the first thread: its twenty-odd threads mostly wait, and an arena each would
        # hold their freed memory apart (the daemon's resting size).
        trim.limit_arenas(MALLOC_ARENAS)
        return asyncio.run(self.serve())

    async def serve(self) -> int:
        """Start up, serve until a stop signal, shut down in order; the exit code."""
        self.stop_event = asyncio.Event()
        self._install_signal_handlers()
        try:
            if await self.startup():
                await self.main_loop()
        finally:
            await self.shutdown()
            self._remove_signal_handlers()
        log.info("stopped cleanly")
        return 0

    # -- signals ---------------------------------------------------------------------------
    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, self._on_sighup)

    def _remove_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)

    def request_stop(self) -> None:
        """SIGTERM/SIGINT: begin the ordered shutdown, bounded by `STOP_DEADLINE_S`."""
        assert self.stop_event is not None
        if self.stop_event.is_set():
            return
        log.info("stopping")
        sdnotify.stopping()
        _exit_by(STOP_DEADLINE_S)
        self.stop_event.set()
        if self.engine is not None:
            self.engine.progress.stop()  # long work (the first index, a rebuild) ends early

    def _on_sighup(self) -> None:
        if self.engine is None or not self._serving:
            # The features' reload hooks run once every one has started: never beside an
            # `on_start` still under way (a tailer starting with the old sources).
            self._reload_wanted = True
            return
        self._reload()

    @property
    def stopping(self) -> bool:
        return self.stop_event is not None and self.stop_event.is_set()

    # -- the three steps -------------------------------------------------------------------
    async def startup(self) -> bool:
        """Lock, index, engine, socket (answering `status` only), the features' startup steps,
        then every method, jobs and tailers. False when a stop came before it was done."""
        s = self.settings
        # memd's data folder holds the index (every conversation): the owner's alone.
        make_private_dir(s.paths.data_dir)
        tighten(s.paths.data_dir, PRIVATE_DIR)
        # A change made without the daemon holds the lock for a moment: waited for; a daemon
        # answering on its socket is refused at once.
        self._lock = InstanceLock(s.lock_path)
        if not await self._lock.take(s.socket_path, lambda: self.stopping):
            return False
        self._store, recovered, read_only = open_index(s.db_path)
        if self.stopping:
            return False
        engine = self.build(s, self._store)
        engine.daemon_pid = os.getpid()
        engine.recovered = recovered
        engine.read_only = read_only
        self.engine = engine
        self.server = self._make_server(engine, self._store)
        _raise_open_files_limit(s.server_max_connections + 256)
        # The socket opens before the first index, which can take minutes on a big tree:
        # meanwhile `status` answers with its progress and other calls are told to wait.
        engine.starting = True
        await self.server.start(self._listen_socket())
        if not await self._unless_stopped(self._startup_steps(engine)):
            return False
        # Starting reads every memory file at least once (the first index, the history's
        # first recording) in several threads; glibc keeps what they freed in per-thread
        # arenas, where the daemon would carry it as resting size all day (measured:
        # 10,000 files, 87 -> 76 MB).
        await asyncio.to_thread(trim.give_memory_back)
        engine.starting = False
        self._start_background(engine)
        if not await self._unless_stopped(self._on_start(engine)):
            return False
        log.info("memd %s serving on %s (pid %d)", __version__, s.socket_path, os.getpid())
        sdnotify.ready(self._ready_status(engine))
        self._serving = True
        if self._reload_wanted:
            self._reload()
        return True

    async def main_loop(self) -> None:
        """Serve until a stop signal (the server and the background tasks run meanwhile)."""
        assert self.stop_event is not None
        await self.stop_event.wait()

    async def shutdown(self) -> None:
        """The start the other way round, from wherever it got: stop accepting and let
        requests finish → background tasks → scheduler (jobs stop at their next checkpoint)
        → the features' `on_stop` in reverse order → store (its writer drains queued writes)
        → socket file → lock."""
        for t in self._tasks:
            t.cancel()
        if self.server is not None:
            await self.server.stop(grace=5.0)
        engine = self.engine
        if engine is not None and engine.scheduler is not None:
            # Jobs stop at their next checkpoint; waiting keeps a half-done batch from being cut.
            await asyncio.to_thread(engine.scheduler.shutdown, True)
        if engine is not None:
            for stop in reversed(engine.on_stop):
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(stop)
        if self._store is not None:
            self._store.close()
        if self._bound_path is not None:
            self._bound_path.unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.release()

    # -- parts of the start ----------------------------------------------------------------
    def _make_server(self, engine: Engine, store: Store) -> Server:
        s = self.settings
        return Server(
            engine,
            max_request_bytes=s.server_max_request_kb * 1024,
            read_timeout=s.server_read_timeout_s,
            max_connections=s.server_max_connections,
            max_buffered_bytes=s.server_max_buffered_mb << 20,
            workers=s.server_workers,
            readers=max(1, os.cpu_count() or 1),
            # The query threads answer most requests: they get the large page cache.
            on_reader_thread=store.make_hot_reader,
        )

    async def _unless_stopped(self, work: Coroutine[Any, Any, None]) -> bool:
        """Run `work` unless a stop comes first: True when it finished. On a stop, the step
        under way (in a thread) is given a moment to end at its next progress report."""
        assert self.stop_event is not None
        task = asyncio.create_task(work)
        stop = asyncio.create_task(self.stop_event.wait())
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not task.done():
            if self.engine is not None:
                self.engine.progress.stop()  # also when the stop came before the engine
            await asyncio.wait({task}, timeout=STEP_STOP_WAIT_S)
        if not task.done():
            log.warning("stopping while a start-up step still runs")
            task.add_done_callback(_quiet)
            return False
        if task.exception() is not None and not isinstance(task.exception(), DaemonStopping):
            raise task.exception()  # type: ignore[misc]
        return not self.stopping and task.exception() is None

    async def _startup_steps(self, engine: Engine) -> None:
        """The features' startup steps, in order (catch up with the files, start watching),
        with the first index's progress in the log and the service manager's status."""
        ticker = asyncio.create_task(_report_progress(engine))
        try:
            for step in engine.startup:
                if self.stopping:
                    return
                try:
                    await asyncio.to_thread(step)
                except DaemonStopping:
                    raise
                except Exception as exc:
                    if not (engine.read_only or recovery.is_disk_full(exc)):
                        raise
                    engine.read_only = engine.read_only or "disk full"
                    log.warning("read-only: %s skipped (%s)", _step_name(step), exc)
        finally:
            ticker.cancel()

    def _start_background(self, engine: Engine) -> None:
        """Jobs and periodic scans (none read-only: they all write), the watchdog's pings."""
        if not engine.read_only:
            scheduler = Scheduler(engine.record_job)
            for spec in engine.jobs.values():
                scheduler.add(spec)
            engine.scheduler = scheduler
            scheduler.start()
            self._tasks += [asyncio.create_task(self._periodic(p)) for p in engine.periodic]
        interval = sdnotify.watchdog_interval()
        if interval:
            self._tasks.append(asyncio.create_task(self._watchdog_loop(interval)))

    async def _on_start(self, engine: Engine) -> None:
        """The features' `on_start` (tailers); none while read-only."""
        if engine.read_only:
            log.error("%s: serving read-only (queries answered, writes refused) until restarted"
                      " with space to write", engine.read_only)  # fmt: skip
            return
        for start in engine.on_start:
            if self.stopping:
                return
            await asyncio.to_thread(start)

    @staticmethod
    def _ready_status(engine: Engine) -> str:
        from memd.daemon.api import status_of

        ix = status_of(engine).index
        if isinstance(ix, msg.IndexStatus):
            return f"serving; {ix.files} files, {ix.sections} sections indexed"
        return "serving"

    def _listen_socket(self) -> socket.socket:
        inherited = activation.inherited_unix_listener()
        if inherited is not None:
            # systemd owns the socket file: never unlink or rebind it.
            inherited.setblocking(False)
            log.info("using the socket passed by the service manager")
            return inherited
        path = self.settings.socket_path
        sock = bind_unix_socket(path)
        self._bound_path = path
        return sock

    def _reload(self) -> None:
        """SIGHUP: read the settings again and apply every change that can be applied live.

        Runs on the event loop: the file is read and the server's limits set here; the
        features' `on_reload` hooks (which may restart tailers or reindex a new workspace) run
        in a thread, one reload after the other, and READY is sent when they are done.
        Settings that need a restart keep their running values until then and are listed in
        `status` (`daemon.restart_required`).
        """
        sdnotify.reloading()
        try:
            wanted = settings_mod.load(self.config_file, overrides=self.overrides)
        except MemdError as exc:
            log.error("SIGHUP: settings not reloaded: %s", exc)
            sdnotify.ready("settings reload failed; still serving")
            return
        changed = self.settings.changed(wanted)
        restart = [k for k in changed if k in settings_mod.restart_required()]
        log.info("SIGHUP: reloaded settings; changed: %s", ", ".join(changed) or "nothing")
        # Until a restart the running values stay in force, and `status` must report those.
        new = wanted.keeping_restart_values(self.settings)
        pending = [k for k in settings_mod.restart_required() if wanted.value(k) != new.value(k)]
        if restart:
            log.warning("SIGHUP: restart required for: %s", ", ".join(restart))
        self.settings = new
        logging.getLogger().setLevel(getattr(logging, new.log_level.upper(), logging.INFO))
        if self.server is not None:
            self.server.apply_limits(
                max_request_bytes=new.server_max_request_kb * 1024,
                read_timeout=new.server_read_timeout_s,
                max_connections=new.server_max_connections,
                max_buffered_bytes=new.server_max_buffered_mb << 20,
            )
            _raise_open_files_limit(new.server_max_connections + 256)
        if self.engine is None:
            sdnotify.ready("settings reloaded")
            return
        self.engine.settings = new
        self.engine.restart_required = sorted(pending)
        task = asyncio.get_running_loop().create_task(self._apply_reload(self.engine, new))
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    async def _apply_reload(self, engine: Engine, new: Settings) -> None:
        async with self._reload_lock:
            failed = await asyncio.to_thread(_run_reload_hooks, engine, new)
        if failed:
            sdnotify.ready(f"settings reloaded; {failed} part(s) failed to apply (see the log)")
        else:
            sdnotify.ready("settings reloaded")

    async def _watchdog_loop(self, interval: float) -> None:
        while True:
            sdnotify.watchdog_ping()
            await asyncio.sleep(interval)

    async def _periodic(self, p: Periodic) -> None:
        while True:
            await asyncio.sleep(p.interval())
            try:
                await asyncio.to_thread(p.fn)
            except MemdError as exc:
                log.error("%s failed: %s", p.name, exc)


def _quiet(task: asyncio.Task[None]) -> None:
    """Retrieve a start-up step's outcome once it ends after the stop moved on."""
    if not task.cancelled():
        task.exception()


def _exit_by(seconds: float) -> None:
    """Make sure the process ends within `seconds` of now, whatever a thread is stuck on.

    The ordered shutdown normally ends long before; a handler blocked in a system call (a
    read that never returns) would otherwise keep the process alive until the service
    manager kills it. Every write memd makes is atomic (Markdown by rename, SQLite by its
    journal), so ending here loses nothing that was acknowledged.
    """

    def force() -> None:
        log.error("shutdown did not finish within %.0f s; exiting now. Busy threads:", seconds)
        with contextlib.suppress(Exception):
            faulthandler.dump_traceback(all_threads=True)
        logging.shutdown()
        os._exit(1)

    timer = threading.Timer(seconds, force)
    timer.daemon = True
    timer.name = "memd-stop-deadline"
    timer.start()


async def _report_progress(engine: Engine, every_s: float = 5.0) -> None:
    """While the daemon starts: its long work in the log and the service manager's status."""
    while True:
        await asyncio.sleep(every_s)
        for t in engine.progress.snapshot():
            of = f" of {t.total:,}" if t.total else ""
            text = f"{t.what}: {t.done:,}{of} {t.unit}".rstrip()
            log.info("starting: %s (%.0f s)", text, t.elapsed_s)
            sdnotify.status(f"starting: {text}")


def _run_reload_hooks(engine: Engine, new: Settings) -> int:
    """Every feature's `on_reload` in order; one that fails is logged and the others still run."""
    failed = 0
    for hook in engine.on_reload:
        try:
            hook(new)
        except Exception:
            failed += 1
            log.exception("SIGHUP: applying the new settings failed in %s", _step_name(hook))
    return failed


def open_index(path: Path) -> tuple[Store, Recovery | None, str]:
    """Open the index for writing (a damaged one is moved aside and rebuilt); on a full disk,
    open it read-only: (store, recovery, why read-only or "")."""
    recovered = None
    try:
        store, recovered = recovery.open_store(path)
        try:
            # A write the size of one page: an index that opens may still have no room to grow.
            store.w.run(repo.touch_header)
        except BaseException:
            store.close()
            raise
        return store, recovered, ""
    except (MemdError, sqlite3.Error, OSError) as exc:
        if not recovery.is_disk_full(exc):
            raise
    log.error("disk full: cannot write the index %s; opening it read-only", path)
    try:
        return Store.open_readonly(path), recovered, "disk full"
    except MemdError as exc:
        raise DiskFull(
            f"disk full: no space to create the index {path}",
            hint="free some space and start again",
        ) from exc


def _step_name(step: Callable[..., None]) -> str:
    return str(getattr(step, "__qualname__", None) or getattr(step, "__name__", repr(step)))


def _raise_open_files_limit(wanted: int) -> None:
    """Let the process hold as many connections as it is allowed to serve (up to the hard limit)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
