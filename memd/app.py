"""Composition root: settings → store, indexer, watcher, operations, server; the daemon's life.

`Engine` is everything memd does minus the process, so the daemon and the CLI's no-daemon
fallback answer the same way. `Daemon` adds the process: lock, watcher, socket, signals,
readiness, periodic reconcile and an ordered shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from memd import __version__
from memd.core import settings as settings_mod
from memd.core.errors import DaemonAlreadyRunning, InvalidParams, MemdError, MethodNotFound
from memd.core.models import JobOutcome, JobResult
from memd.core.settings import Settings
from memd.core.watcher import Watcher
from memd.daemon import activation, sdnotify
from memd.daemon.scheduler import JobSpec, Scheduler
from memd.daemon.server import Server, bind_unix_socket
from memd.db import Store
from memd.memory import repo as docs
from memd.memory.context import ContextRequest, ConversationProvider, build_context
from memd.memory.indexer import Indexer, IndexReport, Root
from memd.memory.ops import PROJECT_DIR, MemoryOps, resolve_project
from memd.memory.search import search_sections
from memd.memory.tree import create_tree, is_memory_file

log = logging.getLogger("memd")
CACHE_TABLES = ("files", "sections", "items", "problems")


def serve_inline(method: str, params: dict[str, Any]) -> bool:
    """Whether a request is answered on the event loop, without a thread hop.

    Only reads that take a few milliseconds qualify. A `context` naming a project may first have
    to index that project's folder (waiting on the writer), so it goes to a thread.
    """
    return method == "search" or (method == "context" and not params.get("project"))


Handler = Callable[[dict[str, Any]], Any]


def _str(params: dict[str, Any], name: str, default: str = "") -> str:
    v = params.get(name, default)
    if v is None:
        return default
    if not isinstance(v, str):
        raise InvalidParams(f"param {name!r} must be a string")
    return v


def _int(params: dict[str, Any], name: str, default: int, lo: int = 0, hi: int = 1_000_000) -> int:
    v = params.get(name, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InvalidParams(f"param {name!r} must be an integer between {lo} and {hi}")
    return v


def _bool(params: dict[str, Any], name: str, default: bool = False) -> bool:
    v = params.get(name, default)
    if not isinstance(v, bool):
        raise InvalidParams(f"param {name!r} must be true or false")
    return v


def user_roots(settings: Settings) -> list[Root]:
    roots = [Root(settings.memory_dir)]
    for ws in settings.memory_workspaces:
        p = resolve_project(str(Path(ws).expanduser()))
        if p.memory_dir is not None:
            roots.append(Root(p.memory_dir, p.slug))
    return roots


class Engine:
    """Store + indexer + memory operations + retrieval behind a table of socket methods."""

    def __init__(
        self, settings: Settings, store: Store, *, started_at: float | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        self.started_at = started_at or time.time()
        self.indexer = Indexer(
            store, user_roots(settings), max_file_bytes=int(settings.index_max_file_mb * (1 << 20))
        )
        self.ops = MemoryOps(
            store,
            self.indexer,
            settings.memory_dir,
            enabled_default=settings.memory_enabled_default,
            on_new_root=self._root_added,
        )
        # Markdown edits are read-modify-write of a whole file: two at once on the same file
        # lose one of them. Every handler or job that edits memory files holds this lock.
        self.markdown_lock = threading.RLock()
        self.providers: list[ConversationProvider] = []
        self.status_parts: list[Callable[[], dict[str, Any]]] = []
        self.root_listeners: list[Callable[[Root], None]] = []
        self.watcher: Watcher | None = None
        self.daemon_pid: int | None = None
        self.jobs: dict[str, JobSpec] = {}
        self.scheduler: Scheduler | None = None
        self.handlers: dict[str, Handler] = {
            "context": self.context,
            "search": self.search,
            "remember": self.remember,
            "forget": self.forget,
            "memories": self.memories,
            "status": self.status,
            "reindex": self.reindex,
            "set_enabled": self.set_enabled,
            "run_job": self.run_job,
        }
        self.status_parts.append(self._jobs_status)
        # Daemon-only life cycle: features start watchers/tailers here and stop them on shutdown.
        self.on_start: list[Callable[[], None]] = []
        self.on_stop: list[Callable[[], None]] = []
        for wire in FEATURES:
            wire(self)

    def _root_added(self, root: Root) -> None:
        for fn in self.root_listeners:
            fn(root)

    def handle(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call a method the way the socket server does (the CLI's no-daemon path)."""
        fn = self.handlers.get(method)
        if fn is None:
            raise MethodNotFound(f"method not found: {method}")
        return fn(params or {})

    # -- methods ---------------------------------------------------------------------------
    def context(self, params: dict[str, Any]) -> dict[str, Any]:
        s = self.settings
        budget = _int(params, "budget_tokens", s.context_budget_tokens, 0, 200_000)
        if not self.ops.enabled():
            return {
                "enabled": False,
                "text": "",
                "tokens": 0,
                "budget": budget,
                "sections": [],
                "dropped": [],
            }
        project = _str(params, "project")
        slug = self.ops.project(project).slug if project else ""
        req = ContextRequest(
            query=_str(params, "query"),
            budget_tokens=budget,
            agent_id=_str(params, "agent_id"),
            project=slug,
            session_id=_str(params, "session_id"),
            shares=(s.context_user_tokens, s.context_project_tokens, s.context_conversation_tokens),
            relevant_only=_bool(params, "relevant_only"),
        )
        out = build_context(self.store.read(), req, self.providers)
        out["project"] = slug
        return out

    def search(self, params: dict[str, Any]) -> dict[str, Any]:
        query = _str(params, "query")
        if not query.strip():
            raise InvalidParams("param 'query' is required")
        limit = _int(params, "limit", 10, 1, 1000)
        hits = search_sections(self.store.read(), query, limit=limit)
        return {"query": query, "hits": [h.to_dict() for h in hits]}

    def remember(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.markdown_lock:
            return self.ops.remember(
                _str(params, "text"),
                scope=_str(params, "scope", "user"),
                project=_str(params, "project"),
                agent_id=_str(params, "agent_id"),
                type_=_str(params, "type"),
            )

    def forget(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.markdown_lock:
            return self.ops.forget(
                id=_str(params, "id"), query=_str(params, "query"), confirm=_bool(params, "confirm")
            )

    def memories(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.ops.memories(_str(params, "scope"), include_superseded=_bool(params, "all"))

    def set_enabled(self, params: dict[str, Any]) -> dict[str, Any]:
        if "enabled" not in params:
            raise InvalidParams("param 'enabled' (true/false) is required")
        return {"enabled": self.ops.set_enabled(_bool(params, "enabled"))}

    def reindex(self, params: dict[str, Any]) -> dict[str, Any]:
        full = _bool(params, "full")
        report = self.rebuild() if full else self.indexer.reconcile()
        return {"full": full, **_report_dict(report)}

    def status(self, params: dict[str, Any]) -> dict[str, Any]:
        conn = self.store.read()
        counts = docs.counts(conn)
        now = time.time()
        w = self.watcher
        last_event = w.last_event_at if w else 0.0
        last_indexed = self.indexer.last_indexed_at
        out: dict[str, Any] = {
            "version": __version__,
            "daemon": {"running": self.daemon_pid is not None, "pid": self.daemon_pid},
            "enabled": self.ops.enabled(),
            "memory_root": str(self.settings.memory_dir),
            "roots": [{"path": str(r.path), "project": r.project_slug} for r in self.indexer.roots],
            "index": {
                "path": str(self.store.path),
                **counts,
                "last_change_at": last_event or None,
                "last_indexed_at": last_indexed or None,
                # Freshness: a change seen by the watcher but not yet applied shows as lag.
                "lag_s": round(max(0.0, last_event - last_indexed), 3)
                if last_event > last_indexed
                else 0.0,
                "pending_writes": self.store.writer.pending() if self.store.writer else 0,
            },
            "watcher": {"mode": w.mode if w else "not running"},
            "problems": docs.problems(conn),
            "socket": str(self.settings.socket_path),
        }
        if self.daemon_pid is not None:
            out["daemon"].update(_process_stats(self.started_at, now))
        for part in self.status_parts:
            out.update(part())
        return out

    def run_job(self, params: dict[str, Any]) -> dict[str, Any]:
        """Run one job now (CLI `memd extract|archive|summarize|sync --now`) and report what it did."""
        name = _str(params, "name")
        if name not in self.jobs:
            raise InvalidParams(
                f"unknown job {name!r}; jobs: {', '.join(sorted(self.jobs)) or 'none'}"
            )
        if self.scheduler is not None:
            res = self.scheduler.run_now(name)
        else:
            started = time.time()
            res = self.jobs[name].fn()
            self.record_job(res, started, time.time())
        return {
            "job": res.job,
            "outcome": res.outcome.value,
            "message": res.message,
            "counts": res.counts,
        }

    def record_job(self, res: JobResult, started: float, finished: float) -> None:
        """Persist a job outcome (the scheduler's callback)."""
        counts = json.dumps(res.counts)
        ok = res.outcome in (JobOutcome.SUCCESS, JobOutcome.NOTHING_TO_DO)

        def write(c: sqlite3.Connection) -> None:
            c.execute(
                "INSERT INTO jobs(name, last_started, last_finished, outcome, message, counts, last_success, runs)"
                " VALUES (?,?,?,?,?,?,?,1) ON CONFLICT(name) DO UPDATE SET last_started = excluded.last_started,"
                " last_finished = excluded.last_finished, outcome = excluded.outcome, message = excluded.message,"
                " counts = excluded.counts, runs = jobs.runs + 1,"
                " last_success = CASE WHEN excluded.last_success > 0 THEN excluded.last_success ELSE jobs.last_success END",
                (
                    res.job,
                    started,
                    finished,
                    res.outcome.value,
                    res.message,
                    counts,
                    finished if ok else 0,
                ),
            )
            c.execute(
                "INSERT INTO job_runs(name, started, finished, outcome, message, counts) VALUES (?,?,?,?,?,?)",
                (res.job, started, finished, res.outcome.value, res.message, counts),
            )
            c.execute("DELETE FROM job_runs WHERE name = ? AND id NOT IN"
                      " (SELECT id FROM job_runs WHERE name = ? ORDER BY id DESC LIMIT 200)", (res.job, res.job))  # fmt: skip

        self.store.w.run(write)

    def _jobs_status(self) -> dict[str, Any]:
        rows = {r["name"]: dict(r) for r in self.store.read().execute("SELECT * FROM jobs")}
        nxt = self.scheduler.describe() if self.scheduler else {}
        out: dict[str, Any] = {}
        for name in sorted(set(self.jobs) | set(rows)):
            r = rows.get(name, {})
            out[name] = {
                "last_outcome": r.get("outcome") or None,
                "last_message": r.get("message") or "",
                "last_finished": r.get("last_finished") or None,
                "last_success": r.get("last_success") or None,
                "runs": r.get("runs", 0),
                "counts": json.loads(r.get("counts") or "{}"),
                "next_run": nxt.get(name, {}).get("next_run"),
                "running": nxt.get(name, {}).get("running", False),
            }
        return {"jobs": out}

    # -- maintenance -----------------------------------------------------------------------
    def rebuild(self) -> IndexReport:
        """`reindex --full`: build a fresh index in a new file and swap it in atomically."""
        final = self.store.path
        tmp = final.with_name(final.name + ".rebuild")
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        fresh = Store.open(tmp)
        try:
            report = Indexer(
                fresh, self.indexer.roots, max_file_bytes=self.indexer.max_file_bytes
            ).reconcile()
        finally:
            fresh.close()

        def copy_state(conn: sqlite3.Connection) -> None:
            # Everything that is not a rebuildable cache (switch state, log offsets, outbox, jobs,
            # conversations) is carried over into the new file inside the writer's queue slot.
            conn.execute("ATTACH DATABASE ? AS fresh", (str(tmp),))
            try:
                conn.execute("BEGIN IMMEDIATE")
                tables = [
                    r[0]
                    for r in conn.execute(
                        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                        " AND name != '_memd_migrations' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
                    )
                ]
                shadow = {
                    r[0]
                    for r in conn.execute(
                        "SELECT name FROM main.sqlite_master WHERE type = 'table'"
                    )
                    if any(r[0].startswith(v + "_") for v in _virtual_tables(conn))
                }
                for t in tables:
                    if t in CACHE_TABLES or t in shadow:
                        continue
                    conn.execute(f'DELETE FROM fresh."{t}"')
                    conn.execute(f'INSERT INTO fresh."{t}" SELECT * FROM main."{t}"')
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                conn.execute("DETACH DATABASE fresh")

        self.store.w.swap_to(tmp, copy_state).result(300)
        # Changes made while the new index was being built are caught by one more pass.
        report.merge(self.indexer.reconcile())
        return report


# Feature wiring: each function adds handlers, jobs, providers, hooks and status parts to an
# Engine. Features are optional parts of one daemon, not plugins; the order is the start order.
FEATURES: list[Callable[[Engine], None]] = []


def _wire_conversations(engine: Engine) -> None:
    """Conversation memory: log tailing, `ingest`, `import`, `recall`, turn search, journal."""
    from memd.conversations import imports, journal, logs
    from memd.conversations import recall as rc
    from memd.conversations.formats import parse_jsonl_line
    from memd.conversations.ingest import summaries_due, write_turns

    s, store = engine.settings, engine.store
    ingest_log = logging.getLogger("memd.ingest")

    def write_journal(sessions: Iterable[str] | None) -> None:
        st = engine.settings
        if not st.journal_enabled:
            return
        oldest = time.time() - st.journal_max_age_days * 86400
        if sessions is None:
            sessions = journal.lagging_sessions(store.read(), oldest)
        if sessions:
            with engine.markdown_lock:
                journal.write_journal(store, st.memory_dir / "journal", sessions, oldest=oldest)

    sources = logs.sources_from_settings(s.logs_claude_code, s.claude_dir, s.logs_sources)
    ingestor = logs.LogIngestor(
        store,
        sources,
        enabled=engine.ops.enabled,
        on_turns=lambda rep: write_journal(rep.sessions),
        on_poll=lambda: write_journal(None),
        poll_s=s.logs_poll_s,
    )
    engine.on_start.append(ingestor.start)
    engine.on_stop.append(ingestor.stop)
    engine.providers.append(lambda req: rc.conversation_candidates(store.read(), req))

    def ingest(params: dict[str, Any]) -> dict[str, Any]:
        records = params.get("turns", [params] if "session_id" in params else None)
        if not isinstance(records, list) or not records:
            raise InvalidParams(
                'give one turn ({"session_id", "role", "content", …}) or "turns": [ … ]'
            )
        if not engine.ops.enabled():
            return {"enabled": False, "accepted": 0, "added": 0, "sessions": []}
        now = time.time()
        turns = []
        for i, rec in enumerate(records):
            if not isinstance(rec, dict):
                raise InvalidParams(f"turns[{i}] is not an object")
            # Pushed turns without a time are stamped now, which also keeps their ids distinct.
            raw = json.dumps({"ts": now, **rec} if rec.get("ts") is None else rec).encode()
            try:
                parsed = parse_jsonl_line(raw, path="", lineno=i + 1)
            except MemdError as exc:
                raise InvalidParams(f"turns[{i}]: {exc}") from exc
            turns += [dataclasses.replace(t, source="ingest", line=0) for t in parsed]
        rep = store.w.run(lambda c: write_turns(c, turns, now=now))
        if rep.added or rep.updated:
            ingestor.notify(rep)
        return {"enabled": True, "accepted": len(turns), "added": rep.added, "updated": rep.updated,
                "sessions": sorted(rep.sessions)}  # fmt: skip

    def import_(params: dict[str, Any]) -> dict[str, Any]:
        path = _str(params, "path")
        if not path:
            raise InvalidParams("param 'path' is required")
        return imports.import_path(ingestor, Path(path), _str(params, "format"))

    def recall(params: dict[str, Any]) -> dict[str, Any]:
        return rc.recall(
            store.read(),
            mode=_str(params, "mode"),
            query=_str(params, "query"),
            session_id=_str(params, "session_id"),
            limit=_int(params, "limit", 20, 1, 1000),
            per_session=_int(params, "per_session", rc.PER_SESSION, 1, 100),
            project=_str(params, "project"),
            agent_id=_str(params, "agent_id"),
        )

    base_search = engine.handlers["search"]

    def search(params: dict[str, Any]) -> dict[str, Any]:
        scope = _str(params, "scope", "all")
        if scope not in ("all", "memory", "conversations"):
            raise InvalidParams("param 'scope' must be all, memory or conversations")
        query = _str(params, "query")
        if not query.strip():
            raise InvalidParams("param 'query' is required")
        limit = _int(params, "limit", 10, 1, 1000)
        out: dict[str, Any] = (
            base_search(params) if scope != "conversations" else {"query": query, "hits": []}
        )
        if scope != "memory":
            filters = {k: _str(params, k) for k in ("session_id", "project", "agent_id")}
            out["hits"] += [
                h.to_dict() for h in rc.turn_hits(store.read(), query, limit, **filters)
            ]
        return out

    def status() -> dict[str, Any]:
        conn = store.read()
        turns, sessions = (
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("turns", "sessions")
        )
        return {"logs": {**ingestor.status(), "sessions": sessions, "turns": turns,
                         "summaries_due": summaries_due(conn)}}  # fmt: skip

    engine.handlers.update(ingest=ingest, recall=recall, search=search)
    engine.handlers["import"] = import_
    engine.status_parts.append(status)
    ingest_log.debug(
        "conversation sources: %s", ", ".join(f"{x.root} ({x.format})" for x in sources) or "none"
    )


FEATURES.append(_wire_conversations)


def _wire_jobs(engine: Engine) -> None:
    """Memory jobs: extraction, session summaries, archival; item use recorded for decay."""
    import threading

    from memd.conversations import summary_job as summaries
    from memd.extraction import job as extraction
    from memd.llm.budget import llm_status
    from memd.memory import archival
    from memd.memory.jobs import JobContext

    # Jobs and the socket handlers that edit Markdown share the engine's lock when it has one.
    lock = getattr(engine, "markdown_lock", None) or threading.RLock()

    def ctx() -> JobContext:
        return JobContext(engine.settings, engine.store, engine.indexer, engine.ops, lock=lock)

    s = engine.settings
    engine.jobs.update(
        extract=JobSpec(
            "extract", lambda: extraction.run_extraction(ctx()), s.extract_interval_min * 60, 120
        ),
        summarize=JobSpec(
            "summarize",
            lambda: summaries.run_summaries(ctx()),
            max(60, s.summary_idle_min * 30),
            180,
        ),
        archive=JobSpec("archive", lambda: archival.run_archival(ctx()), 86400, 600),
    )
    usage = archival.UsageTracker(engine.store, time.time)
    for name in ("context", "search"):
        engine.handlers[name] = usage.wrap(engine.handlers[name])
    engine.on_stop.append(usage.flush)
    engine.status_parts.append(lambda: {"llm": llm_status(ctx())})


FEATURES.append(_wire_jobs)


def _wire_sync(engine: Engine) -> None:
    """Cloud sync: outbox hook, `sync` job, `sync_status` / `sync_now` / `sync_init_schema`."""
    from memd.sync.job import JOB, Syncer

    s = engine.settings
    syncer = Syncer(
        s, engine.store, engine.indexer, edit_lock=engine.markdown_lock,
        next_run=lambda: engine.scheduler.next_runs().get(JOB) if engine.scheduler else None,
    )  # fmt: skip

    def sync_now(params: dict[str, Any]) -> dict[str, Any]:
        syncer.prepare_now(retry_parked=_bool(params, "retry_parked"))
        if engine.daemon_pid is None:
            engine.indexer.reconcile()  # no watcher in this process: catch up with the files
        return {**engine.run_job({"name": JOB}), "status": syncer.status()}

    engine.handlers.update(
        sync_status=lambda params: syncer.status(),
        sync_now=sync_now,
        sync_init_schema=lambda params: syncer.init_schema(),
    )
    engine.status_parts.append(lambda: {"sync": syncer.status(detail=False)})
    if not syncer.enabled:
        return
    engine.indexer.hooks.append(syncer.on_change)
    engine.jobs[JOB] = JobSpec(JOB, syncer.run, s.sync_interval_s, first_delay_s=1.0)
    engine.on_stop.append(syncer.close)
    syncer.wake = lambda delay_s: engine.scheduler.nudge(JOB, delay_s) if engine.scheduler else None
    answer_context = engine.handlers["context"]

    def context(params: dict[str, Any]) -> Any:
        syncer.on_conversation()
        return answer_context(params)

    engine.handlers["context"] = context


FEATURES.append(_wire_sync)


def _wire_export(engine: Engine) -> None:
    """`export` (the versioned JSON document) and memd exports taken by `import`."""
    import datetime as dt

    from memd.sync.job import DEVICE_KEY
    from memd.transfer import export, merge

    def export_(params: dict[str, Any]) -> dict[str, Any]:
        path = _str(params, "path")
        if not path or not os.path.isabs(path):
            raise InvalidParams(
                "param 'path' (an absolute file path; the daemon writes it) is required"
            )
        device = docs.get_state(engine.store.read(), DEVICE_KEY)
        rep = export.write_export(engine.store, Path(path), memory_root=engine.settings.memory_dir,
                                  tree=_bool(params, "tree", True), device_id=device)  # fmt: skip
        return rep.to_dict()

    other_import = engine.handlers.get("import")

    def import_(params: dict[str, Any]) -> Any:
        path, fmt = _str(params, "path"), _str(params, "format")
        if fmt != "memd" and (fmt or not export.is_export_file(Path(path))):
            if other_import is None:
                raise InvalidParams("only memd exports can be imported here")
            return other_import(params)
        engine.ops.require_enabled()
        doc = export.read_export(Path(path))
        return merge.apply_export(
            doc, store=engine.store, indexer=engine.indexer, memory_root=engine.settings.memory_dir,
            lock=engine.markdown_lock, today=dt.date.today(), now=time.time(),
        )  # fmt: skip

    engine.handlers.update({"export": export_, "import": import_})


FEATURES.append(_wire_export)


def _virtual_tables(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        )
    ]


def _report_dict(r: IndexReport) -> dict[str, Any]:
    return {
        "indexed": r.indexed,
        "unchanged": r.unchanged,
        "deleted": r.deleted,
        "problems": r.problems,
        "bytes": r.bytes,
        "seconds": round(r.seconds, 4),
    }


def _process_stats(started_at: float, now: float) -> dict[str, Any]:
    import psutil

    p = psutil.Process()
    with p.oneshot():
        cpu = p.cpu_times()
        return {
            "uptime_s": round(now - started_at, 1),
            "rss_mb": round(p.memory_info().rss / (1 << 20), 1),
            "cpu_s": round(cpu.user + cpu.system, 2),
            "cpu_percent": p.cpu_percent(None),
            "threads": p.num_threads(),
        }


def setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


class InstanceLock:
    """An flock on the data folder: one daemon per MEMD_HOME, whatever socket it uses."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            pid = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise DaemonAlreadyRunning(
                f"memd is already running (pid {pid}) for {self.path.parent}",
                hint="stop it first, or point MEMD_HOME elsewhere",
            ) from exc
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Daemon:
    """The long-running process behind `memd serve`."""

    def __init__(
        self,
        settings: Settings,
        *,
        config_file: Path | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.config_file = config_file
        # Command-line overrides (`--log-level`) outlive a SIGHUP reload of the file.
        self.overrides = overrides
        self.stop_event: asyncio.Event | None = None
        self.engine: Engine | None = None
        self._bound_path: Path | None = None

    def run(self) -> int:
        return asyncio.run(self._main())

    async def _main(self) -> int:
        s = self.settings
        lock = InstanceLock(
            s.paths.data_dir / "memd.lock" if not s.index_path else s.db_path.with_suffix(".lock")
        )
        lock.acquire()
        server: Server | None = None
        watcher: Watcher | None = None
        store: Store | None = None
        self.stop_event = asyncio.Event()
        loop = asyncio.get_running_loop()
        try:
            created = create_tree(s.memory_dir)
            if created:
                log.info("created the memory tree in %s", s.memory_dir)
            store = Store.open(s.db_path)
            store.make_hot_reader()  # context/search are answered on this (the loop's) thread
            engine = Engine(s, store)
            engine.daemon_pid = os.getpid()
            self.engine = engine
            rep = await asyncio.to_thread(engine.indexer.reconcile)
            log.info(
                "index ready: %d indexed, %d unchanged, %d deleted, %d problems in %.2fs",
                rep.indexed, rep.unchanged, rep.deleted, rep.problems, rep.seconds,
            )  # fmt: skip
            watcher = Watcher(
                engine.indexer.index_paths,
                accept=_accept_markdown,
                debounce_s=s.index_debounce_ms / 1000,
                name="memory-watcher",
            )
            for r in engine.indexer.roots:
                watcher.watch(r.path)
            watcher.start()
            engine.watcher = watcher
            engine.root_listeners.append(lambda r: watcher.watch(r.path) if watcher else None)
            server = Server(
                engine.handlers,
                max_request_bytes=s.server_max_request_kb * 1024,
                read_timeout=s.server_read_timeout_s,
                inline=serve_inline,
            )
            sock = self._listen_socket()
            await server.start(sock)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop_event.set)
            loop.add_signal_handler(signal.SIGHUP, self._reload)
            scheduler = Scheduler(engine.record_job)
            for spec in engine.jobs.values():
                scheduler.add(spec)
            engine.scheduler = scheduler
            scheduler.start()
            tasks = [asyncio.create_task(self._reconcile_loop(engine))]
            interval = sdnotify.watchdog_interval()
            if interval:
                tasks.append(asyncio.create_task(self._watchdog_loop(interval)))
            for start in engine.on_start:
                await asyncio.to_thread(start)
            log.info("memd %s serving on %s (pid %d)", __version__, s.socket_path, os.getpid())
            ix = engine.status({})["index"]
            sdnotify.ready(f"serving; {ix['files']} files, {ix['sections']} sections indexed")
            await self.stop_event.wait()
            log.info("stopping")
            sdnotify.stopping()
            for t in tasks:
                t.cancel()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                with contextlib.suppress(Exception):
                    loop.remove_signal_handler(sig)
            if server is not None:
                await server.stop(grace=5.0)
            if self.engine is not None and self.engine.scheduler is not None:
                # Jobs stop at their next checkpoint; waiting keeps a half-done batch from being cut.
                await asyncio.to_thread(self.engine.scheduler.shutdown, True)
            if watcher is not None:
                await asyncio.to_thread(watcher.stop)
            if self.engine is not None:
                for stop in reversed(self.engine.on_stop):
                    with contextlib.suppress(Exception):
                        await asyncio.to_thread(stop)
            if store is not None:
                store.close()
            if self._bound_path is not None:
                self._bound_path.unlink(missing_ok=True)
            lock.release()
        log.info("stopped cleanly")
        return 0

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
        sdnotify.reloading()
        try:
            new = settings_mod.load(self.config_file, overrides=self.overrides)
        except MemdError as exc:
            log.error("SIGHUP: settings not reloaded: %s", exc)
            sdnotify.ready("settings reload failed; still serving")
            return
        changed = self.settings.changed(new)
        restart = [k for k in changed if k in settings_mod.RESTART_REQUIRED]
        log.info("SIGHUP: reloaded settings; changed: %s", ", ".join(changed) or "nothing")
        if restart:
            log.warning("SIGHUP: %s only take effect after a restart", ", ".join(restart))
            # Until then the running values stay in force, and `status` must report those.
            new = dataclasses.replace(new, **{
                f.name: getattr(self.settings, f.name)
                for f in dataclasses.fields(Settings)
                if f.metadata.get("key") in restart
            })  # fmt: skip
        self.settings = new
        logging.getLogger().setLevel(getattr(logging, new.log_level.upper(), logging.INFO))
        if self.engine is not None:
            self.engine.settings = new
            # Parts built from settings at start read them again here; the rest read
            # engine.settings on every use.
            self.engine.indexer.max_file_bytes = int(new.index_max_file_mb * (1 << 20))
            if self.engine.watcher is not None:
                self.engine.watcher.debounce_s = new.index_debounce_ms / 1000
        sdnotify.ready("settings reloaded")

    async def _watchdog_loop(self, interval: float) -> None:
        while True:
            sdnotify.watchdog_ping()
            await asyncio.sleep(interval)

    async def _reconcile_loop(self, engine: Engine) -> None:
        while True:
            await asyncio.sleep(max(5, self.settings.index_reconcile_s))
            try:
                rep = await asyncio.to_thread(engine.indexer.reconcile)
                if rep.indexed or rep.deleted:
                    log.info("reconcile: %d indexed, %d deleted", rep.indexed, rep.deleted)
            except MemdError as exc:
                log.error("reconcile failed: %s", exc)


def _accept_markdown(path: str) -> bool:
    name = os.path.basename(path)
    return is_memory_file(name) or PROJECT_DIR.name in path
