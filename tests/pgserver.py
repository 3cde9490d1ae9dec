"""A throwaway PostgreSQL cluster for tests: initdb in a temp dir, pg_ctl start/stop, cleanup.

    with PgServer() as pg:
        psycopg.connect(pg.dsn)
        pg.stop()      # outage: clients get "connection refused"
        pg.start()     # same data dir and port, so the same dsn works again

The server refuses to run as root, so when the tests run as root every server binary is run
through ``runuser -u postgres`` and the temp dir is chowned to that user (DESIGN.md §6).

The session fixture ``pg`` is defined here so any conftest can register it with
``from tests.pgserver import pg  # noqa: F401``; register it once, in the highest conftest
that needs it, to share one cluster. Without server binaries it skips with the reason,
except on CI (``CI=true``), where a silently skipped Postgres suite would hide a broken setup.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

_SERVER_BINARIES = ("initdb", "pg_ctl", "postgres")
_RUN_AS = "postgres"


def find_pg_bin() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, or None when they are not installed."""
    candidates: list[Path] = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    # Debian/Ubuntu keep the server binaries off PATH; prefer the newest major version.
    versioned = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(
        (Path(p) for p in versioned),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for directory in candidates:
        if all((directory / name).is_file() for name in _SERVER_BINARIES):
            return directory
    return None


def missing_reason() -> str:
    """Why a server cannot be started here, or "" when it can."""
    if find_pg_bin() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or in /usr/lib/postgresql/*/bin"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root but runuser is missing, and postgres refuses to run as root"
        try:
            pwd.getpwnam(_RUN_AS)
        except KeyError:
            return f"running as root but there is no {_RUN_AS!r} user to run the server as"
    return ""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServerError(RuntimeError):
    """A server binary failed; the message carries its output and the server log tail."""


# The clusters of this process (tests/cpustat.py counts their server's CPU: not a descendant).
LIVE: weakref.WeakSet[PgServer] = weakref.WeakSet()


class PgServer:
    """A PostgreSQL cluster in a temp dir, listening on 127.0.0.1:<port> and a Unix socket.

    Trust authentication, fsync off: for tests only. ``start()`` after ``stop()`` reuses
    the same data dir and port, so data and DSNs survive an outage.
    """

    def __init__(self, *, port: int | None = None, base_dir: str | os.PathLike[str] | None = None):
        bin_dir = find_pg_bin()
        reason = missing_reason()
        if bin_dir is None or reason:
            raise PgServerError(reason or "PostgreSQL binaries not found")
        self.bin_dir = bin_dir
        self.port = port or free_port()
        self.user = "postgres"
        self._as_root = os.geteuid() == 0
        # Short path: the Unix socket path must stay under ~100 bytes.
        self.base_dir = Path(tempfile.mkdtemp(prefix="memd-pg-", dir=base_dir))
        self.data_dir = self.base_dir / "data"
        self.socket_dir = self.base_dir / "sock"
        self.log_file = self.base_dir / "server.log"
        self.socket_dir.mkdir()
        self.log_file.touch()
        if self._as_root:
            entry = pwd.getpwnam(_RUN_AS)
            for path in (self.base_dir, self.socket_dir, self.log_file):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self._initialised = False
        self._running = False
        self._closed = False
        atexit.register(self.close)
        LIVE.add(self)

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def dsn(self) -> str:
        """A libpq DSN for the ``postgres`` database over TCP."""
        return self.dsn_for("postgres")

    def dsn_for(self, dbname: str) -> str:
        """A libpq DSN for another database of this cluster (see ``create_database``)."""
        return f"host={self.host} port={self.port} user={self.user} dbname={dbname}"

    @property
    def running(self) -> bool:
        return self._running

    def _run(self, *args: str, timeout: float = 60) -> str:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", _RUN_AS, "--", *cmd]
        proc = subprocess.run(
            cmd,
            cwd=self.base_dir,  # the server user may not be able to enter the caller's cwd
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "LC_ALL": "C", "TZ": "UTC"},
            check=False,
        )
        if proc.returncode != 0:
            raise PgServerError(
                f"{args[0]} failed ({proc.returncode}): {proc.stdout}{proc.stderr}\n"
                f"--- server log ---\n{self.log_tail()}"
            )
        return proc.stdout

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server log, for failure messages."""
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def init(self) -> None:
        """Create the cluster (idempotent)."""
        if self._initialised:
            return
        self._run(
            "initdb",
            "-D", str(self.data_dir),
            "-A", "trust",
            "-U", self.user,
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip
        self._initialised = True

    def start(self) -> None:
        """Start the server and wait until it accepts connections (idempotent)."""
        if self._closed:
            raise PgServerError("server already closed")
        self.init()
        if self._running:
            return
        options = " ".join(
            [
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.socket_dir}",
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
                "-c max_connections=50",
                "-c shared_buffers=16MB",
            ]
        )
        self._run(
            "pg_ctl", "start", "-w", "-t", "60",
            "-D", str(self.data_dir), "-l", str(self.log_file), "-o", options,
        )  # fmt: skip
        self._running = True

    def stop(self, mode: str = "fast") -> None:
        """Stop the server. ``fast`` disconnects clients (admin shutdown); ``immediate`` kills it."""
        if not self._running:
            return
        self._run("pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", str(self.data_dir))
        self._running = False

    def create_database(self, name: str) -> str:
        """Create a database (fails if it exists) and return its DSN; isolates test modules."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
        return self.dsn_for(name)

    def close(self) -> None:
        """Stop the server if running and delete the temp dir (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._running:
                self.stop(mode="immediate")
        finally:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            atexit.unregister(self.close)

    def __enter__(self) -> PgServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    """A running PostgreSQL server for the whole session (`.dsn`, `.stop()`, `.start()`)."""
    reason = missing_reason()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"PostgreSQL binaries required on CI: {reason}")
        pytest.skip(reason)
    server = PgServer()
    try:
        server.start()
        yield server
    finally:
        server.close()
