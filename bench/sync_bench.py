"""Cloud sync: push and pull throughput to a local PostgreSQL, and reconnect to empty queue.

    python -m bench.sync_bench [--files 2000] [--backlog 1000] [--out docs/benchmarks.md] [--no-write]

1. PostgreSQL: a throwaway cluster in a temp folder (`tests/pgserver.py`: initdb + pg_ctl,
   through `runuser -u postgres` when run as root, fsync off like the tests). Each phase
   gets a fresh database holding the tables of `memd sync init-schema`.
2. Push: N generated files (`bench/corpus.py`) indexed by an in-process Engine with sync on,
   so the outbox hook queues every file inside the index transaction (timed against the same
   index with sync off: the hook's cost); then one sync run sends them: files/s and MB/s.
3. Pull: a second device of the same user pulls them, writes each file atomically and
   indexes it: files/s.
4. Reconnect: a real daemon (`python -m memd serve`, default sync settings) synced with the
   server; the server is stopped, --backlog files are edited (the watcher queues one
   operation per file) and the server is started again. Measured: from the server accepting
   connections to `sync_status` showing an empty queue, split into the backoff still to wait
   at reconnect and the drain itself.
Everything lives in temporary folders that are removed afterwards.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon
from bench.report import machine_line, publish, table

BLOCK = "sync"
ROUNDS = 3


def _engine(home: Path, dsn: str | None) -> Any:
    from memd.app import Engine
    from memd.core.settings import load
    from memd.db import Store
    from memd.memory.tree import create_tree

    overrides: dict[str, Any] = {"logs.claude_code": False}
    if dsn:
        overrides.update({"sync.backend": "postgres", "sync.dsn": dsn, "sync.user_id": "bench",
                          "sync.push_delay_s": 0.0})  # fmt: skip
    settings = load(env={"MEMD_HOME": str(home)}, overrides=overrides)
    create_tree(settings.memory_dir)
    return Engine(settings, Store.open(settings.db_path))


def _syncer(engine: Any) -> Any:
    from memd.sync.job import Syncer

    return next(
        h.__self__ for h in engine.indexer.hooks if isinstance(getattr(h, "__self__", None), Syncer)
    )


def _fresh_db(pg: Any) -> str:
    from memd.sync.postgres import PostgresBackend

    dsn: str = pg.create_database(f"bench_{uuid.uuid4().hex[:8]}")
    backend = PostgresBackend(dsn)
    backend.init_schema()
    backend.close()
    return dsn


def push_pull(pg: Any, work: Path, files: int, seed: int) -> dict[str, Any]:
    """Phases 2 and 3: in-process push of `files` files, then a second device pulls them."""
    dsn = _fresh_db(pg)
    info = corpus.generate(work / "tree", files=files, seed=seed)
    # Indexing with and without the hook, alternated on fresh indexes; the best of 3 each.
    index_plain: list[float] = []
    index_sync: list[float] = []
    a = None
    for r in range(ROUNDS):
        for name, target, times in (("plain", None, index_plain), ("a", dsn, index_sync)):
            home = work / f"{name}{r}"
            shutil.copytree(work / "tree", home / "memory")
            engine = _engine(home, target)
            t0 = time.perf_counter()
            engine.indexer.reconcile()
            times.append(time.perf_counter() - t0)
            if target and r == ROUNDS - 1:
                a = engine  # the last synced device pushes
            else:
                engine.store.close()
    assert a is not None
    syncer = _syncer(a)
    queued = syncer.status().pending
    t0 = time.perf_counter()
    res = syncer.run()
    push_s = time.perf_counter() - t0
    if res.counts.get("pushed") != queued:
        raise RuntimeError(f"push did not send the queue: {res}")
    syncer.close()
    a.store.close()

    b = _engine(work / "b", dsn)
    b.indexer.reconcile()
    t0 = time.perf_counter()
    res_b = _syncer(b).run()
    pull_s = time.perf_counter() - t0
    pulled = res_b.counts["applied"]
    if pulled < files * 0.95 or _syncer(b).status()["pending"]:
        raise RuntimeError(f"pull incomplete: {res_b}")
    _syncer(b).close()
    b.store.close()
    return {
        "files": files, "mb": info.bytes / 1e6, "queued": queued, "index_plain_s": min(index_plain),
        "index_sync_s": min(index_sync), "push_s": push_s, "pulled": pulled, "pull_s": pull_s,
    }  # fmt: skip


def reconnect(pg: Any, work: Path, backlog: int, seed: int) -> dict[str, Any]:
    """Phase 4: a real daemon, an outage with `backlog` edits, then the time to an empty queue."""
    dsn = _fresh_db(pg)
    home = work / "d"
    info = corpus.generate(home / "memory", files=backlog, seed=seed + 1)
    d = Daemon(home, MEMD_SYNC_BACKEND="postgres", MEMD_SYNC_DSN=dsn, MEMD_SYNC_USER_ID="bench")
    d.start()
    try:
        d.wait_ready()
        _wait(
            lambda: (
                d.call("sync_status")["last_success_at"] and d.call("sync_status")["pending"] == 0
            ),
            120,
        )
        pg.stop()
        down = time.perf_counter()
        for i, path in enumerate(info.files):
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"\n- edited offline {i}\n")
        _wait(lambda: d.call("sync_status")["pending"] >= backlog, 120)
        # Let the daemon fail a few runs, as a real outage would, before the server returns.
        _wait(lambda: (d.call("sync_status")["last_error_at"] or 0) > time.time() - 30, 60)
        pg.start()
        up = time.perf_counter()
        st = d.call("sync_status")
        backoff_left = max(0.0, (st["retry_at"] or 0) - time.time())
        _wait(lambda: d.call("sync_status")["pending"] == 0, 1200, interval=0.02)
        empty = time.perf_counter()
        st = d.call("sync_status")
        last_push = st["last_push_at"] or time.time()
        drain = max(0.0, empty - up - backoff_left)
    finally:
        pg.start()
        d.stop()
    return {
        "backlog": backlog, "outage_s": up - down, "reconnect_to_empty_s": empty - up,
        "backoff_left_s": backoff_left, "drain_s": drain, "last_push_at": last_push,
        "settings": "sync.interval_s 60, sync.backoff_cap_s 600, sync.push_delay_s 5 (defaults)",
    }  # fmt: skip


def _wait(pred: Any, timeout: float, interval: float = 0.1) -> None:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if pred():
            return
        time.sleep(interval)
    raise RuntimeError(f"condition not met within {timeout}s")


def render(pp: dict[str, Any], rc: dict[str, Any]) -> str:
    hook_ms = (pp["index_sync_s"] - pp["index_plain_s"]) * 1000
    rows = [
        (f"push: {pp['queued']:,} files ({pp['mb']:.1f} MB) in one sync run",
         f"**{pp['queued'] / pp['push_s']:,.0f} files/s** ({pp['mb'] / pp['push_s']:.1f} MB/s), {pp['push_s']:.2f} s"),
        (f"outbox hook while indexing {pp['files']:,} files (best of {ROUNDS})",
         f"{hook_ms:+,.0f} ms ({pp['index_sync_s']:.2f} s with sync, {pp['index_plain_s']:.2f} s without)"),
        (f"pull into a second device: {pp['pulled']:,} files written and indexed",
         f"**{pp['pulled'] / pp['pull_s']:,.0f} files/s**, {pp['pull_s']:.2f} s"),
        (f"reconnect → empty queue, {rc['backlog']:,}-operation backlog after a {rc['outage_s']:.0f} s outage",
         f"**{rc['reconnect_to_empty_s']:.1f} s**: {rc['backoff_left_s']:.1f} s of backoff left, then"
         f" {rc['drain_s']:.2f} s to drain ({rc['backlog'] / max(rc['drain_s'], 1e-9):,.0f} ops/s)"),
    ]  # fmt: skip
    return "\n".join([
        "### Cloud sync (PostgreSQL)",
        "",
        machine_line(),
        "The server is a local PostgreSQL cluster (fsync off), so these are memd's own costs,"
        " not a network's. The daemon ran with " + rc["settings"] + ": after reconnecting it"
        " waits out the backoff it had reached during the outage (at most sync.backoff_cap_s),"
        " then drains the queue in batches of 100, one transaction each.",
        "",
        table(["measure", "result"], rows),
    ])  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--files", type=int, default=2000, help="files pushed and pulled (default 2,000)"
    )
    ap.add_argument(
        "--backlog", type=int, default=1000, help="operations queued offline (default 1,000)"
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md",
    )
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    ap.add_argument("--seed", type=int, default=42, help="corpus seed")
    args = ap.parse_args()
    from tests.pgserver import PgServer

    work = Path(tempfile.mkdtemp(prefix="memd-sync-bench-"))
    try:
        with PgServer() as pg:
            pp = push_pull(pg, work, args.files, args.seed)
            print(f"push/pull: {pp}")
            rc = reconnect(pg, work, args.backlog, args.seed)
            print(f"reconnect: {rc}")
        publish(args, BLOCK, render(pp, rc))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
