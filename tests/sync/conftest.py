"""Fixtures of the sync tests: sync tables on the session's PostgreSQL, devices on real files.

A `Device` is one MEMD_HOME driven in-process: a real Engine over a real SQLite file and a
real memory tree, with `write`/`delete` doing what the watcher would (index the path, which
runs the outbox hook). Daemon-level tests use `tests.utils.DaemonProcess` instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memd.app import Engine
from memd.core.settings import Settings, load
from memd.db import Store
from memd.memory.tree import create_tree
from memd.sync import outbox
from memd.sync.backend import CloudBackend, PushResult, SyncRow, make_backend
from memd.sync.job import Syncer
from memd.sync.postgres import PostgresBackend
from tests.fakes.postgrest_server import FakePostgrest
from tests.pgserver import PgServer


class Device:
    """One memd home with sync settings, driven through the Engine like the CLI fallback."""

    def __init__(self, home: Path, **overrides: Any) -> None:
        self.home = home
        # Recall by meaning off, as for every test that does not ask for it (an environment
        # of its own left it at its default, on: each device loaded the model for nothing).
        env = {"MEMD_HOME": str(home), "MEMD_SEMANTIC_KIND": "off"}
        self.settings: Settings = load(env=env, overrides=overrides)
        create_tree(self.settings.memory_dir)
        self.store = Store.open(self.settings.db_path)
        self.engine = Engine(self.settings, self.store)
        self.engine.indexer.reconcile()
        hooks = [getattr(h, "__self__", None) for h in self.engine.indexer.hooks]
        syncers = [h for h in hooks if isinstance(h, Syncer)]
        self.syncer: Syncer = (
            syncers[0] if syncers else Syncer(self.settings, self.store, self.engine.indexer)
        )

    @property
    def memory(self) -> Path:
        return self.settings.memory_dir

    def path(self, rel: str) -> Path:
        return self.memory / rel

    def read(self, rel: str) -> str:
        return self.path(rel).read_text(encoding="utf-8")

    def write(self, rel: str, text: str) -> None:
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        self.engine.indexer.index_paths([str(p)])

    def delete(self, rel: str) -> None:
        self.path(rel).unlink()
        self.engine.indexer.index_paths([str(self.path(rel))])

    def sync(self, **params: Any) -> dict[str, Any]:
        res: dict[str, Any] = self.engine.handle("sync_now", params)
        return res

    def status(self) -> dict[str, Any]:
        st: dict[str, Any] = self.engine.handle("sync_status")
        return st

    def queue(self) -> list[outbox.Op]:
        return outbox.ops(self.store.read(), self.syncer.target())

    def close(self) -> None:
        self.syncer.close()
        self.store.close()


@pytest.fixture(scope="session")
def sync_dsn(pg: PgServer) -> str:
    """One database for the in-process sync tests; each test gets its own tables in it."""
    pg.start()
    return pg.create_database(f"sync_{uuid.uuid4().hex[:8]}")


@pytest.fixture
def table(pg: PgServer, sync_dsn: str) -> str:
    """A fresh `memd_files`-shaped table (and its events table) for one test."""
    pg.start()  # an earlier outage test may have failed before restarting the server
    name = f"t_{uuid.uuid4().hex[:10]}"
    backend = PostgresBackend(sync_dsn, name)
    backend.init_schema()
    backend.close()
    return name


@pytest.fixture
def devices(tmp_path: Path, sync_dsn: str, table: str) -> Iterator[Any]:
    """`devices(name, **settings)` → a Device syncing to this test's table (closed at the end)."""
    made: list[Device] = []

    def make(name: str, **overrides: Any) -> Device:
        settings = {
            "sync.backend": "postgres",
            "sync.dsn": sync_dsn,
            "sync.table": table,
            "sync.user_id": "alice",
            "sync.push_delay_s": 0.0,
            **overrides,
        }
        device = Device(tmp_path / name, **settings)
        made.append(device)
        return device

    yield make
    for device in made:
        device.close()


def cloud_rows(dsn: str, table: str) -> dict[str, dict[str, Any]]:
    """path → row of the cloud table (every namespace)."""
    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(f'select * from "{table}" order by synced_at')
        cols = [c.name for c in cur.description or ()]
        return {r[cols.index("path")]: dict(zip(cols, r, strict=True)) for r in cur.fetchall()}


def cloud_events(dsn: str, table: str) -> list[dict[str, Any]]:
    """The event log of `table`, in arrival order."""
    events = "memd_file_events" if table == "memd_files" else f"{table}_events"
    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(f'select * from "{events}" order by received_at')
        cols = [c.name for c in cur.description or ()]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


SUPABASE_KEY = "sb_secret_T3stKeyDoNotLeak0123456789"


@pytest.fixture
def server() -> Iterator[FakePostgrest]:
    """The fake PostgREST the supabase backend talks to (real HTTP, real postgrest-py)."""
    with FakePostgrest(api_key=SUPABASE_KEY) as fake:
        yield fake


def supabase_settings(
    server: FakePostgrest, key: str = SUPABASE_KEY, **extra: Any
) -> dict[str, Any]:
    """Device settings that sync to `server` as user alice, pushing at once."""
    return {"sync.backend": "supabase", "sync.url": server.url, "sync.key": key, "sync.user_id": "alice",
            "sync.push_delay_s": 0.0, **extra}  # fmt: skip


class RaceOnPush:
    """A device's backend that lets another device act between this run's pull and push.

    `before` runs just before each of the first `times` pushes goes out, `after` just after
    it returned (with its result); every push result is kept in `results`.
    """

    def __init__(self, real: CloudBackend, before: Callable[[], None],
                 after: Callable[[PushResult], None], times: int) -> None:  # fmt: skip
        self.real, self.before, self.after, self.times = real, before, after, times
        self.results: list[PushResult] = []
        self.name = real.name

    def push(self, rows: Sequence[SyncRow]) -> PushResult:
        first = len(self.results) < self.times
        if first:
            self.before()
        result = self.real.push(rows)
        self.results.append(result)
        if first:
            self.after(result)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def race_on_push(device: Device, before: Callable[[], None],
                 after: Callable[[PushResult], None], times: int = 1) -> RaceOnPush:  # fmt: skip
    """Give `device` a racing backend (for its next runs) and return it."""
    device.syncer.close()
    made: list[RaceOnPush] = []

    def factory(settings: Settings) -> Any:  # a CloudBackend by delegation
        made.append(RaceOnPush(make_backend(settings), before, after, times))
        return made[-1]

    device.syncer.backend_factory = factory
    device.syncer._open_backend()
    return made[0]
