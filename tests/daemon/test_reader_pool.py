"""The query threads: one client's queries keep to one thread (and its page cache); overlapping
queries spread over the pool; a stop cancels what waits."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import CancelledError
from pathlib import Path

import pytest

from memd.api.client import Client
from memd.app import Engine
from memd.core.settings import load
from memd.daemon.pool import ReaderPool
from memd.daemon.server import Server, bind_unix_socket
from memd.db import Store


def _reader_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("memd-reader")}


@pytest.fixture
def served(home: Path) -> Iterator[Path]:
    """A real engine behind a real server and socket, its loop in a thread of this process."""
    settings = load(env={"MEMD_HOME": str(home), "MEMD_SEMANTIC_KIND": "off"})
    (home / "memory" / "topics").mkdir(parents=True)
    (home / "memory" / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- keep small\n")
    store = Store.open(settings.db_path)
    engine = Engine(settings, store)
    engine.memory.indexer.reconcile()
    stop: asyncio.Event | None = None
    started = threading.Event()
    loop_box: list[asyncio.AbstractEventLoop] = []

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        loop_box.append(asyncio.get_running_loop())
        server = Server(engine, readers=2)
        await server.start(bind_unix_socket(settings.socket_path))
        started.set()
        await stop.wait()
        await server.stop(grace=1)

    t = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    t.start()
    assert started.wait(30)
    try:
        yield settings.socket_path
    finally:
        assert stop is not None
        loop_box[0].call_soon_threadsafe(stop.set)
        t.join(10)
        store.close()


def test_one_clients_queries_keep_to_one_query_thread(served: Path) -> None:
    # Each query thread has its own 8 MB page cache: answering one client by turns from every
    # thread filled all of them with the same pages (and missed in each as often).
    with Client(served, timeout=10) as c:
        for _ in range(60):
            assert c.call("search", {"query": "components", "limit": 3})["hits"]
    assert len(_reader_threads()) == 1


def test_overlapping_tasks_spread_over_the_pool_and_a_stop_cancels_the_rest() -> None:
    pool = ReaderPool(2, "test-reader")
    gate = threading.Event()
    both = threading.Barrier(2)
    running = [pool.submit(lambda: (both.wait(10), gate.wait(10))) for _ in range(2)]
    waiting = pool.submit(lambda: "never")
    assert pool.threads == 2
    gate.set()
    for f in running:
        f.result(10)
    assert waiting.result(10) == "never"  # the backlog is served once a thread is free
    assert pool.submit(lambda: threading.current_thread().name).result(10) in {
        "test-reader_0",
        "test-reader_1",
    }
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result(10)
    gate.clear()
    blockers = [pool.submit(gate.wait, 10) for _ in range(2)]
    queued = pool.submit(lambda: "late")
    pool.shutdown(wait=False, cancel_futures=True)
    with pytest.raises(CancelledError):
        queued.result(10)
    gate.set()
    for f in blockers:
        assert f.result(10) is True
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(lambda: None)
