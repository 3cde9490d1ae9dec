"""Cloud sync of the memory tree: the outbox hook, the `sync` job and `memd sync status`.

Local changes reach the outbox through `Syncer.on_change`, an indexer hook that runs inside
the transaction that indexes the change. One run of the job (scheduled, or `memd sync --now`):

1. **pull** the namespace's rows newer than the cursor and apply them (rules below);
2. **queue** what the hook could not see: files changed while sync was off, session summaries;
3. **push** due operations in enqueue order, in batches of `BATCH` (one transaction each).

Pull runs before push on purpose: pushing first would overwrite another device's newer
version in the cloud before this device had seen it, and that version would be lost without
a conflict copy. A version another device pushes between this run's pull and its push is
caught by the server: every pushed row names the cloud row it is based on (the last one
pulled for its path), and the server refuses it when another device stored something else
since (compare-and-swap). A refused operation stays queued without penalty; the run pulls
once more (conflict copy, as below) and pushes again on the new base.

Pull rules for a row of another device (the cloud keeps one row per file, its latest state):

- local file identical to the row: nothing to do;
- local file unchanged since the last sync (its bytes equal the synced base, nothing queued),
  or a never-synced file still equal to its first-start template: take the cloud version
  (write it atomically, or delete the file for a tombstone);
- otherwise the file changed on both sides: keep the local file, write the cloud version
  beside it as ``name.conflict-<device>-<time>.md`` (nothing for a tombstone), record the
  conflict for `status`, and push the local version, so every device converges on it.

Failures: a retryable error backs off the batch's operations (exponential, jittered, capped by
`sync.backoff_cap_s`) and the target as a whole; a permanent error parks the operation with
its error. When the backend itself is refused (credentials, schema), every queued operation
is parked; parked operations are queued again when the sync settings change, after
`memd sync init-schema`, or with `memd sync --now --retry-parked`. No operation is ever
dropped, except when a newer change of the same file replaces it or the server already has it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memd.core.errors import (
    ConfigError,
    EditConflict,
    MemdError,
    PathError,
    SyncError,
    SyncPermanent,
    SyncRetryable,
)
from memd.core.fsio import inside_any, read_regular, real
from memd.core.models import JobOutcome, JobResult
from memd.core.redact import redact
from memd.core.settings import Settings
from memd.db import Connection, Store
from memd.db.state import get_state, set_state
from memd.memory import repo as memories
from memd.memory import safe_write
from memd.memory.guard import GUARD
from memd.memory.indexer import FileChange, Indexer
from memd.sync import outbox
from memd.sync.backend import CloudBackend, PushResult, SyncRow, make_backend, schema_path
from memd.sync.outbox import TOMBSTONE, Op
from memd.sync.rules import (
    Action,
    backoff_delay,
    conflict_name,
    describe_error,
    is_excluded,
    namespace_of,
    plan_pull,
    pristine_sha,
    render_summary,
    safe_rel,
    sha_of,
    sync_config_fingerprint,
)
from memd.sync.status import OFF_HINT, REFUSED_HINT, describe, shorten

log = logging.getLogger(__name__)


def _sha_of_text(text: str | None) -> str:
    """`sha_of` a file's bytes, from its text as the safe writer reads it (None: missing)."""
    return TOMBSTONE if text is None else sha_of(safe_write.encode(text))


JOB = "sync"
BATCH = 100
PULL_PAGE = 500
SUMMARIES_DIR = "_sessions"
LAST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z: later times cannot be written as dates
SUMMARIES_PER_RUN = 1000
DEVICE_KEY = "sync.device_id"


# -- results of one run ---------------------------------------------------------------------
@dataclass(slots=True)
class RunReport:
    """What one sync run did."""

    pulled: int = 0
    applied: int = 0
    deleted: int = 0
    conflicts: int = 0
    skipped: int = 0
    queued: int = 0
    pushed: int = 0
    parked: int = 0
    retrying: int = 0
    refused: int = 0  # pushes refused by the server's compare-and-swap (pulled and sent again)
    conflict_paths: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__ if k != "conflict_paths"}


@dataclass(frozen=True, slots=True)
class _Pulled:
    row: SyncRow
    action: Action
    rel: str
    data: bytes  # the bytes the row stands for (empty for a tombstone)
    sha: str  # of `data`, TOMBSTONE for a tombstone
    queued: Op | None
    local_sha: str  # of the local file when planned (TOMBSTONE when missing)
    copy_rel: str = ""


# -- the syncer --------------------------------------------------------------------------------
class Syncer:
    """Sync of one memory tree with the configured cloud backend.

    Cheap to create: no backend is opened and nothing is written until the first hook call
    or run, so the read-only CLI can build one to answer `sync status`.
    """

    def __init__(
        self,
        settings: Settings,
        store: Store,
        indexer: Indexer,
        *,
        backend_factory: Callable[[Settings], CloudBackend] = make_backend,
        edit_lock: contextlib.AbstractContextManager[Any] | None = None,
        next_run: Callable[[], str | None] = lambda: None,
        now: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self.store = store
        self.indexer = indexer
        self.root = settings.memory_dir
        self.backend_factory = backend_factory
        self.edit_lock = edit_lock or contextlib.nullcontext()
        self.next_run = next_run
        self.now = now
        self.rand = rand
        # Asks the scheduler for a run within the given seconds (never later than planned).
        self.wake: Callable[[float], None] = lambda delay_s: None
        self._backend: CloudBackend | None = None
        self._device_id = ""

    @property
    def enabled(self) -> bool:
        return bool(self.settings.sync_backend)

    @property
    def fingerprint(self) -> str:
        return sync_config_fingerprint(self.settings)

    # -- identity ---------------------------------------------------------------------------
    def device_id(self, conn: Connection | None = None) -> str:
        """This device's id, generated once and stored (needs `conn` inside a write)."""
        if self._device_id:
            return self._device_id
        found = get_state(conn or self.store.read(), DEVICE_KEY)
        if not found and conn is not None:
            found = str(uuid.uuid4())
            set_state(conn, DEVICE_KEY, found)
        if not found:
            found = self.store.w.run(lambda c: self.device_id(c))
        self._device_id = found
        return found

    def namespace(self, conn: Connection | None = None) -> str:
        return namespace_of(self.settings, self.device_id(conn))

    def target(self, conn: Connection | None = None) -> str:
        """The key of the configured target: backend, table and namespace."""
        s = self.settings
        return f"{s.sync_backend}:{s.sync_table}:{self.namespace(conn)}"

    # -- the hook (writer thread, inside the index transaction) ------------------------------
    def on_change(self, conn: Connection, changes: Sequence[FileChange]) -> None:
        """Queue the changed memory files of the user tree (an `Indexer` hook)."""
        root = str(self.root)
        mine = [c for c in changes if c.root == root and not self.excluded(c.rel)]
        # Nothing read from outside the memory tree is ever queued for the cloud (the indexer
        # reads none; checked again here, where the content would leave the machine).
        mine = [c for c in mine if c.deleted or inside_any(c.path, [self.root])]
        if not mine:
            return
        target = self.target(conn)
        now = self.now()
        queued_any = False
        for change in mine:
            local_sha = TOMBSTONE if change.deleted else change.sha256
            state = outbox.file_state(conn, target, change.rel)
            queued = outbox.queued(conn, target, change.rel)
            if state is not None and local_sha == state.incoming_sha:
                continue  # memd's own pull wrote (or deleted) it
            if queued is None and state is not None and local_sha == state.base_sha:
                continue  # back to the bytes the cloud already has
            if queued is not None and queued.local_sha == local_sha:
                continue
            never_synced = state is None or state.base_sha in ("", TOMBSTONE)
            if change.deleted and never_synced:
                # Created and deleted without ever reaching the cloud: nothing to tell it.
                if queued is not None and queued.attempts == 0:
                    outbox.drop(conn, [queued.seq])
                    continue
                if queued is None:
                    continue
            content = "" if change.deleted else redact(change.content)
            outbox.enqueue(
                conn, target, change.rel, op_id=str(uuid.uuid4()), content=content,
                sha256=sha_of(content.encode()), local_sha=local_sha, deleted=change.deleted,
                updated_at=now, now=now,
            )  # fmt: skip
            queued_any = True
        if queued_any and self.settings.sync_push_delay_s > 0:
            self.wake(self.settings.sync_push_delay_s)

    def on_conversation(self) -> None:
        """A conversation asked for context: pull news and retry failed pushes soon (seed 000).

        A target backing off keeps its backoff; the run only comes earlier than the interval.
        """
        if self.enabled and self.settings.sync_push_delay_s > 0:
            self.wake(self.settings.sync_push_delay_s)

    def excluded(self, rel: str) -> bool:
        return is_excluded(rel, self.settings.sync_exclude)

    # -- the job ---------------------------------------------------------------------------
    def run(self) -> JobResult:
        """One sync run: pull, queue unseen local changes, push. Never raises a SyncError."""
        if not self.enabled:
            return JobResult(JOB, JobOutcome.NOTHING_TO_DO, "sync is off (sync.backend is empty)")
        now = self.now()
        target = self.target()
        state = self.store.w.run(lambda c: self._begin(c, target, now))
        if state["refused_config"] == self.fingerprint:
            return JobResult(
                JOB, JobOutcome.CONFIG_ERROR, f"refused: {state['last_error']}; {REFUSED_HINT}"
            )
        if state["retry_at"] > now:
            wait = state["retry_at"] - now
            self.wake(wait)  # an early run (a local change) must not lose the planned retry
            return JobResult(
                JOB,
                JobOutcome.RETRY_LATER,
                f"backing off for {wait:.0f}s after: {state['last_error']}",
            )
        report = RunReport()
        try:
            backend = self._open_backend()
            self._pull(backend, target, report)
            self._queue_unsynced(target, report)
            if self._push(backend, target, report):
                # Another device wrote these files after the pull above: take its versions
                # now (conflict copies where both changed) and send ours on top. Once: a
                # device writing the same file again meanwhile waits for the next run.
                self._pull(backend, target, report)
                if self._push(backend, target, report):
                    self.wake(self.settings.sync_push_delay_s or 1.0)
        except SyncRetryable as exc:
            failures = state["failures"] + 1
            delay = backoff_delay(failures, self.settings.sync_backoff_cap_s, self.rand())
            self._record(
                target, error=describe_error(exc), failures=failures, retry_at=self.now() + delay
            )
            self.wake(delay)  # retries follow the backoff, not the (longer) interval
            return JobResult(
                JOB, JobOutcome.RETRY_LATER, f"{exc}; next try in {delay:.0f}s", report.counts()
            )
        except SyncPermanent as exc:
            # Settings, credentials, schema or the pull itself were refused: nothing queued can
            # get through, so it all waits, parked, for a settings change or the user.
            report.parked += self._refuse(target, exc)
            return JobResult(JOB, JobOutcome.CONFIG_ERROR, describe_error(exc), report.counts())
        self._record(target, error="", success=True)
        pending = outbox.queue_stats(self.store.read(), target, self.now())["pending"]
        message = (
            f"pulled {report.pulled} ({report.applied} applied, {report.deleted} deleted,"
            f" {report.conflicts} conflicts); pushed {report.pushed}; {pending} pending"
        )
        if report.parked:
            message += f", {report.parked} parked"
        if report.refused:
            message += f"; {report.refused} refused by the cloud (changed by another device)"
        if report.conflict_paths:
            message += "; conflict copies: " + ", ".join(report.conflict_paths)
        busy = (report.applied or report.deleted or report.conflicts or report.pushed
                or report.parked or report.refused)  # fmt: skip
        outcome = JobOutcome.SUCCESS if busy else JobOutcome.NOTHING_TO_DO
        return JobResult(JOB, outcome, message, {**report.counts(), "pending": pending})

    def _begin(self, conn: Connection, target: str, now: float) -> dict[str, Any]:
        fp = self.fingerprint
        outbox.update_target(conn, target, self.settings.sync_backend, last_attempt_at=now)
        outbox.unpark(conn, target, unless_config=fp)
        state = outbox.target_state(conn, target)
        if state["refused_config"] not in ("", fp):
            outbox.update_target(conn, target, self.settings.sync_backend, refused_config="")
            state["refused_config"] = ""
        return state

    def _refuse(self, target: str, exc: SyncPermanent) -> int:
        error, now, fp = describe_error(exc), self.now(), self.fingerprint
        backend = self.settings.sync_backend
        log.error("sync: %s", error)

        def refuse(conn: Connection) -> int:
            outbox.update_target(conn, target, backend, last_error=error, last_error_at=now,
                                 refused_config=fp)  # fmt: skip
            return outbox.park_all(conn, target, error, fp, now)

        return self.store.w.run(refuse)

    def _record(self, target: str, *, error: str, success: bool = False, **fields: Any) -> None:
        now = self.now()
        if success:
            fields.update(last_success_at=now, failures=0, retry_at=0)
        else:
            fields.update(last_error=error, last_error_at=now)
        backend = self.settings.sync_backend
        self.store.w.run(lambda c: outbox.update_target(c, target, backend, **fields))

    def _open_backend(self) -> CloudBackend:
        if self._backend is None:
            self._backend = self.backend_factory(self.settings)
        return self._backend

    def close(self) -> None:
        """Release the backend's connections."""
        backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()

    # -- pull -------------------------------------------------------------------------------
    def _pull(self, backend: CloudBackend, target: str, report: RunReport) -> None:
        namespace = self.namespace()
        cursor = outbox.target_state(self.store.read(), target)["pull_cursor"]
        while True:
            rows = backend.pull(namespace, cursor, PULL_PAGE)
            if not rows:
                break
            self._apply_page(target, rows, report)
            cursor = rows[-1].synced_at
            if len(rows) < PULL_PAGE:
                break
        self._record_pull(target)

    def _record_pull(self, target: str) -> None:
        now = self.now()
        backend = self.settings.sync_backend
        self.store.w.run(lambda c: outbox.update_target(c, target, backend, last_pull_at=now))

    def _plan(self, target: str, row: SyncRow) -> _Pulled | None:
        rel = row.path
        if rel.startswith(SUMMARIES_DIR + "/") or self.excluded(rel) or not safe_rel(rel):
            return None  # summaries are a cloud copy only; unsafe paths are never written
        if not inside_any(self.root / rel, [self.root]):
            log.warning("sync: %s leads outside the memory root (symlink); not pulled", rel)
            return None
        conn = self.store.read()
        state = outbox.file_state(conn, target, row.path)
        queued = outbox.queued(conn, target, row.path)
        data = b"" if row.deleted else row.content.encode()
        sha = TOMBSTONE if row.deleted else sha_of(data)
        local = self._local_sha(rel)
        action = plan_pull(
            remote_device=row.device_id, remote_sha=sha, device_id=self.device_id(),
            local_sha=local, base_sha=state.base_sha if state else "",
            queued_sha=queued.local_sha if queued else None, pristine_sha=pristine_sha(rel),
        )  # fmt: skip
        pulled = _Pulled(row, action, rel, data, sha, queued, local)
        return _as_conflict(pulled) if action is Action.CONFLICT else pulled

    def _local_sha(self, rel: str) -> str:
        try:
            # A link inside the tree is read at its target; a FIFO is never waited on.
            return sha_of(read_regular(real(self.root / rel), inside=[self.root]))
        except FileNotFoundError:
            return TOMBSTONE
        except (OSError, MemdError):
            return "unreadable"  # never equal to a hash: treated as a local change

    def _apply_page(self, target: str, rows: Sequence[SyncRow], report: RunReport) -> None:
        planned = [(row, self._plan(target, row)) for row in rows]
        report.pulled += len(rows)
        report.skipped += sum(1 for _, p in planned if p is None)
        items = [p for _, p in planned if p is not None]
        takes = [p for p in items if p.action is Action.TAKE]
        # Announce memd's own writes first: the hook then knows them even if the watcher sees
        # the file before this page is settled, or memd dies in between.
        if takes:

            def announce(conn: Connection) -> set[str]:
                moved = set()
                for p in takes:
                    now_queued = outbox.queued(conn, target, p.rel)
                    if (now_queued and now_queued.seq) != (p.queued and p.queued.seq):
                        moved.add(p.rel)  # a local change was queued since the plan
                        continue
                    outbox.set_incoming(conn, target, p.rel, p.sha)
                    if p.queued is not None:
                        outbox.drop(conn, [p.queued.seq])  # an untouched template: nothing to send
                return moved

            moved = self.store.w.run(announce)
            items = [_as_conflict(p) if p.rel in moved else p for p in items]
        touched: list[str] = []
        applied: list[_Pulled] = []
        with self.edit_lock:
            for p in items:
                final, paths = self._apply_file(p, report)
                touched += paths
                applied.append(final)
        items = applied
        if touched:
            self.indexer.index_paths(touched)
        cursor = rows[-1].synced_at
        now = self.now()

        def settle(conn: Connection) -> None:
            for p in items:
                row = p.row
                base: str | None = None
                if p.action in (Action.TAKE, Action.SAME):
                    base = p.sha
                if p.action is Action.OWN and p.queued is not None and p.queued.op_id == row.op_id:
                    outbox.complete(conn, [p.queued])  # arrived before memd could record it
                if p.action is Action.SAME and p.queued is not None and p.queued.local_sha == p.sha:
                    outbox.drop(conn, [p.queued.seq])  # the cloud already holds these bytes
                outbox.settle(
                    conn, target, p.rel, base_sha=base, remote_version=row.version,
                    remote_device=row.device_id, remote_sha=row.sha256,
                )  # fmt: skip
                if p.action is Action.CONFLICT:
                    self._add_conflict(conn, target, p, now)
            outbox.update_target(
                conn, target, self.settings.sync_backend, pull_cursor=cursor,
                add_pulled=len(rows), add_conflicts=sum(p.action is Action.CONFLICT for p in items),
            )  # fmt: skip

        self.store.w.run(settle)

    def _apply_file(self, p: _Pulled, report: RunReport) -> tuple[_Pulled, list[str]]:
        # A link inside the tree is written at its target (checked inside by `_plan`, and by
        # the safe writer again where it writes: a folder made a link since is refused).
        roots = self.indexer.root_paths()
        dest = Path(real(self.root / p.rel))
        if p.action is Action.TAKE:
            try:  # only while the file is as planned: a save since the plan is never overwritten
                safe_write.replace_when(dest, lambda now: _sha_of_text(now) == p.local_sha,
                                        None if p.row.deleted else p.row.content, guard=GUARD,
                                        inside=roots)  # fmt: skip
            except EditConflict:
                p = _as_conflict(p)
            except PathError as exc:
                log.warning("sync: %s not pulled: %s", p.rel, exc)
                p = dataclasses.replace(p, action=Action.CONFLICT, copy_rel="")
            else:
                report.deleted += p.row.deleted
                report.applied += not p.row.deleted
                return p, [str(dest)]
        if p.action is not Action.CONFLICT:
            return p, []
        report.conflicts += 1
        if not p.copy_rel:
            return p, []
        copy = self.root / p.copy_rel
        try:
            safe_write.replace_when(copy, lambda _now: True, p.row.content, inside=roots)
        except PathError as exc:
            log.warning("sync: conflict copy %s not written: %s", p.copy_rel, exc)
            return dataclasses.replace(p, copy_rel=""), []
        report.conflict_paths.append(p.copy_rel)
        return p, [str(copy)]

    def _add_conflict(self, conn: Connection, target: str, p: _Pulled, now: float) -> None:
        kind = (
            "deleted-remotely"
            if p.row.deleted
            else ("deleted-locally" if self._local_sha(p.rel) == TOMBSTONE else "changed-both")
        )
        # A page pulled again after a crash must not report it twice.
        if not outbox.conflict_recorded(conn, target, p.rel, p.row.version, p.row.device_id):
            outbox.add_conflict(
                conn, target, p.rel, kind=kind, copy_path=p.copy_rel,
                remote_device=p.row.device_id, remote_version=p.row.version, at=now,
            )  # fmt: skip

    # -- local changes the hook did not see ------------------------------------------------
    def _queue_unsynced(self, target: str, report: RunReport) -> None:
        conn = self.store.read()
        root = str(self.root)
        changed = [
            rel for rel, _ in outbox.unsynced_files(conn, target, root) if not self.excluded(rel)
        ]
        gone: list[str] = []
        # An empty index (a new or moved memory root not indexed yet) is no reason to delete
        # every file in the cloud.
        if memories.has_files(conn, root):
            gone = [
                rel
                for rel in outbox.vanished_files(conn, target, root)
                if not rel.startswith(SUMMARIES_DIR + "/") and not self.excluded(rel)
            ]
        loaded: list[tuple[str, bytes | None]] = []
        for rel in changed:
            try:
                loaded.append((rel, read_regular(self.root / rel, inside=[self.root])))
            except FileNotFoundError:
                loaded.append((rel, None))
            except (OSError, MemdError) as exc:
                # A link or FIFO in its place, or a file outside the tree: never sent.
                log.warning("sync: not queuing %s: %s", rel, exc)
        loaded += [(rel, None) for rel in gone]
        summaries = self.settings.sync_summaries
        if not loaded and not summaries:
            return
        now = self.now()

        def queue(conn: Connection) -> int:
            n = 0
            for rel, data in loaded:
                if outbox.queued(conn, target, rel) is not None:
                    continue  # the hook got there first
                state = outbox.file_state(conn, target, rel)
                local_sha = TOMBSTONE if data is None else sha_of(data)
                if state is not None and local_sha == state.base_sha:
                    continue
                content = "" if data is None else redact(_text(data))
                outbox.enqueue(
                    conn, target, rel, op_id=str(uuid.uuid4()), content=content,
                    sha256=sha_of(content.encode()), local_sha=local_sha, deleted=data is None,
                    updated_at=now, now=now,
                )  # fmt: skip
                n += 1
            if summaries:
                n += self._queue_summaries(conn, target, now)
            return n

        report.queued += self.store.w.run(queue)

    def _queue_summaries(self, conn: Connection, target: str, now: float) -> int:
        cursor = outbox.target_state(conn, target)["summaries_cursor"]
        rows = outbox.summaries_since(conn, cursor, SUMMARIES_PER_RUN)
        n = 0
        for row in rows:
            # A session id is an app's own string: it goes out redacted like everything else.
            rel = f"{SUMMARIES_DIR}/{_file_safe(redact(row.session_id))}.md"
            cursor = max(cursor, row.summary_at)
            if self.excluded(rel):
                continue
            if not 0 <= row.started_at <= LAST_TIME:
                row = dataclasses.replace(row, started_at=0.0)  # stored by an older memd
            content = render_summary(row)
            sha = sha_of(content.encode())
            state = outbox.file_state(conn, target, rel)
            if state is not None and state.base_sha == sha:
                continue
            outbox.enqueue(
                conn, target, rel, op_id=str(uuid.uuid4()), content=content, sha256=sha,
                local_sha=sha, deleted=False, updated_at=row.summary_at, now=now,
            )  # fmt: skip
            n += 1
        if rows:
            outbox.update_target(conn, target, self.settings.sync_backend, summaries_cursor=cursor)
        return n

    # -- push -------------------------------------------------------------------------------
    def _push(self, backend: CloudBackend, target: str, report: RunReport) -> int:
        """Send every due operation; return how many the server refused (left queued)."""
        namespace, device = self.namespace(), self.device_id()
        last: list[int] = []
        held: set[int] = set()  # refused in this push: not sent again before a pull
        while True:
            due = outbox.due(self.store.read(), target, self.now(), BATCH + len(held))
            batch = [op for op in due if op.seq not in held][:BATCH]
            seqs = [op.seq for op in batch]
            if not batch or seqs == last:
                break
            last = seqs
            held |= self._send(backend, target, batch, namespace, device, report)
        if report.pushed:
            now = self.now()
            backend_name = self.settings.sync_backend
            self.store.w.run(
                lambda c: outbox.update_target(c, target, backend_name, last_push_at=now)
            )
        return len(held)

    def _send(
        self,
        backend: CloudBackend,
        target: str,
        batch: list[Op],
        namespace: str,
        device: str,
        report: RunReport,
        *,
        isolating: bool = False,
    ) -> set[int]:
        """Push one batch; return the seqs the server refused by compare-and-swap."""
        now = self.now()
        self.store.w.run(lambda c: outbox.mark_attempt(c, [op.seq for op in batch], now))
        # The base is read now, not when the change was queued: a pull since then (a conflict
        # resolved, the other device's version taken) moved it.
        conn = self.store.read()
        rows = [
            _row(op, namespace, device, outbox.push_base(conn, target, op.path)) for op in batch
        ]
        try:
            result = backend.push(rows)
        except SyncRetryable as exc:
            self._back_off(batch, exc)
            report.retrying += len(batch)
            raise
        except SyncPermanent as exc:
            return self._isolate(backend, target, batch, exc, namespace, device, report, isolating)
        return self._complete(target, batch, result, report)

    def _complete(
        self, target: str, batch: list[Op], result: PushResult, report: RunReport
    ) -> set[int]:
        backend_name = self.settings.sync_backend
        # Applied, or dropped because the server already has it or a newer version from this
        # device: either way nothing is left to send.
        done = [op for op in batch if op.op_id not in result.refused]
        refused = [op for op in batch if op.op_id in result.refused]

        def record(conn: Connection) -> None:
            outbox.complete(conn, done)
            outbox.unmark_attempt(conn, [op.seq for op in refused])
            outbox.update_target(conn, target, backend_name, add_pushed=len(done))

        self.store.w.run(record)
        report.pushed += len(done)
        report.refused += len(refused)
        for op in refused:
            log.info("sync: %s v%d refused: another device changed it since the last pull",
                     op.path, op.version)  # fmt: skip
        return {op.seq for op in refused}

    def _back_off(self, batch: list[Op], exc: SyncError) -> None:
        cap = self.settings.sync_backoff_cap_s
        delays = {op.seq: backoff_delay(op.attempts + 1, cap, self.rand()) for op in batch}
        error, now = describe_error(exc), self.now()
        self.store.w.run(lambda c: outbox.retry_later(c, delays, error, now))

    def _isolate(
        self,
        backend: CloudBackend,
        target: str,
        batch: list[Op],
        exc: SyncPermanent,
        namespace: str,
        device: str,
        report: RunReport,
        isolating: bool,
    ) -> set[int]:
        """A batch was refused: find out whether the backend or some rows are the problem."""
        now, fp = self.now(), self.fingerprint
        if not isolating:
            try:
                # A SyncPermanent here (credentials, a missing or outdated schema) refuses the
                # whole run (see `run`) instead of parking rows one by one.
                backend.check()
            except SyncRetryable:
                self._back_off(batch, exc)
                report.retrying += len(batch)
                raise
        if len(batch) == 1:
            error = describe_error(exc)
            self.store.w.run(lambda c: outbox.park(c, [batch[0].seq], error, fp, now))
            report.parked += 1
            log.warning("sync: parked %s v%d: %s", batch[0].path, batch[0].version, error)
            return set()
        # The backend works: send the rows one by one and park only those it refuses.
        held: set[int] = set()
        for op in batch:
            held |= self._send(backend, target, [op], namespace, device, report, isolating=True)
        return held

    # -- user actions -----------------------------------------------------------------------
    def prepare_now(self, *, retry_parked: bool = False) -> None:
        """Before `memd sync --now`: forget backoffs (and queue parked operations again)."""
        if not self.enabled:
            raise ConfigError("sync is off", hint=OFF_HINT)
        target = self.target()
        backend = self.settings.sync_backend

        def reset(conn: Connection) -> None:
            outbox.make_due(conn, target)
            outbox.update_target(conn, target, backend, retry_at=0, refused_config="")
            if retry_parked:
                outbox.unpark(conn, target)

        self.store.w.run(reset)

    def init_schema(self) -> dict[str, Any]:
        """Create the cloud tables (postgres); for supabase, say how to create them."""
        if not self.enabled:
            raise ConfigError("sync is off", hint=OFF_HINT)
        if self.settings.sync_backend == "supabase":
            return {
                "backend": "supabase",
                "created": False,
                "schema_path": str(schema_path()),
                "message": f"paste {schema_path()} into the Supabase SQL editor (Database → SQL)",
            }
        backend = self._open_backend()
        backend.init_schema()
        description = backend.check()
        target = self.target()
        backend_name = self.settings.sync_backend

        def retry(conn: Connection) -> int:
            outbox.update_target(conn, target, backend_name, refused_config="", retry_at=0)
            return outbox.unpark(conn, target)

        unparked = self.store.w.run(retry)
        return {
            "backend": self.settings.sync_backend,
            "created": True,
            "schema_path": str(schema_path()),
            "message": description,
            "unparked": unparked,
        }

    # -- status -----------------------------------------------------------------------------
    def status(self, *, detail: bool = True) -> dict[str, Any]:
        """Queue depth, oldest pending, parked ops, last success/error, next attempt, per target.

        Without `detail`: the short form for the daemon's `status` (counts, no lists).
        """
        conn = self.store.read()
        full = describe(
            conn, self.settings, device_id=self._device_id or get_state(conn, DEVICE_KEY),
            fingerprint=self.fingerprint, next_run=self.next_run(), now=self.now(),
        )  # fmt: skip
        return full if detail else shorten(full)


def _as_conflict(p: _Pulled) -> _Pulled:
    copy = "" if p.row.deleted else conflict_name(p.rel, p.row.device_id, p.row.updated_at)
    return dataclasses.replace(p, action=Action.CONFLICT, copy_rel=copy)


def _row(op: Op, namespace: str, device: str, base: str) -> SyncRow:
    return SyncRow(
        namespace=namespace, path=op.path, content=op.content, sha256=op.sha256,
        updated_at=op.updated_at, deleted=op.deleted, device_id=device, version=op.version,
        op_id=op.op_id, base_sha256=base,
    )  # fmt: skip


def _text(data: bytes) -> str:
    # The same normalisation the indexer applies before handing content to the hook.
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\r\n", "\n")


def _file_safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:120] or "session"
