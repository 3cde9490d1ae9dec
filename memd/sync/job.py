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

The pull side lives in `memd.sync.pull`, the push side (with the queueing of unseen changes)
in `memd.sync.push`; this module holds the run that orders them, the hook and the status.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memd.api.messages import SyncSchemaResult, SyncStatus, SyncSummary
from memd.core.errors import ConfigError, SyncPermanent, SyncRetryable
from memd.core.fsio import inside_any
from memd.core.models import JobOutcome, JobResult
from memd.core.redact import redact
from memd.core.settings import Settings
from memd.db import Connection, Store
from memd.db.state import get_state, set_state
from memd.memory.indexer import FileChange, Indexer
from memd.sync import outbox
from memd.sync.backend import CloudBackend, make_backend, schema_path
from memd.sync.outbox import TOMBSTONE
from memd.sync.pull import Pull
from memd.sync.push import Push, queue_unsynced
from memd.sync.rules import (
    backoff_delay,
    describe_error,
    is_excluded,
    namespace_of,
    sha_of,
    sync_config_fingerprint,
)
from memd.sync.status import OFF_HINT, REFUSED_HINT, describe, shorten

log = logging.getLogger(__name__)


JOB = "sync"
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
        next_run: Callable[[], str | None] = lambda: None,
        now: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self.store = store
        self.indexer = indexer
        self.root = settings.memory_dir
        self.backend_factory = backend_factory
        # The door every pulled file is written through (the indexer's: the memory feature's).
        self.files = indexer.files
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
        if state.refused_config == self.fingerprint:
            return JobResult(
                JOB, JobOutcome.CONFIG_ERROR, f"refused: {state.last_error}; {REFUSED_HINT}"
            )
        if state.retry_at > now:
            wait = state.retry_at - now
            self.wake(wait)  # an early run (a local change) must not lose the planned retry
            return JobResult(
                JOB,
                JobOutcome.RETRY_LATER,
                f"backing off for {wait:.0f}s after: {state.last_error}",
            )
        report = RunReport()
        try:
            backend = self._open_backend()
            pull = Pull(self, backend, target, report)
            push = Push(self, backend, target, report)
            pull.run()
            queue_unsynced(self, target, report)
            if push.run():
                # Another device wrote these files after the pull above: take its versions
                # now (conflict copies where both changed) and send ours on top. Once: a
                # device writing the same file again meanwhile waits for the next run.
                pull.run()
                if push.run():
                    self.wake(self.settings.sync_push_delay_s or 1.0)
        except SyncRetryable as exc:
            failures = state.failures + 1
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
        pending = outbox.queue_stats(self.store.read(), target, self.now()).pending
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

    def _begin(self, conn: Connection, target: str, now: float) -> outbox.TargetState:
        fp = self.fingerprint
        outbox.update_target(conn, target, self.settings.sync_backend, last_attempt_at=now)
        outbox.unpark(conn, target, unless_config=fp)
        state = outbox.target_state(conn, target)
        if state.refused_config not in ("", fp):
            outbox.update_target(conn, target, self.settings.sync_backend, refused_config="")
            state.refused_config = ""
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

    def init_schema(self) -> SyncSchemaResult:
        """Create the cloud tables (postgres); for supabase, say how to create them."""
        if not self.enabled:
            raise ConfigError("sync is off", hint=OFF_HINT)
        if self.settings.sync_backend == "supabase":
            return SyncSchemaResult(
                backend="supabase",
                created=False,
                schema_path=str(schema_path()),
                message=f"paste {schema_path()} into the Supabase SQL editor (Database → SQL)",
            )
        backend = self._open_backend()
        backend.init_schema()
        description = backend.check()
        target = self.target()
        backend_name = self.settings.sync_backend

        def retry(conn: Connection) -> int:
            outbox.update_target(conn, target, backend_name, refused_config="", retry_at=0)
            return outbox.unpark(conn, target)

        unparked = self.store.w.run(retry)
        return SyncSchemaResult(
            backend=self.settings.sync_backend,
            created=True,
            schema_path=str(schema_path()),
            message=description,
            unparked=unparked,
        )

    # -- status -----------------------------------------------------------------------------
    def status(self) -> SyncStatus:
        """Queue depth, oldest pending, parked ops, last success/error, next attempt, per target."""
        conn = self.store.read()
        return describe(
            conn, self.settings, device_id=self._device_id or get_state(conn, DEVICE_KEY),
            fingerprint=self.fingerprint, next_run=self.next_run(), now=self.now(),
        )  # fmt: skip

    def summary(self) -> SyncSummary:
        """The short form for the daemon's `status` (counts and times, no lists)."""
        return shorten(self.status())
