"""The push side of a sync run: local changes the hook did not see queued, then the outbox sent.

Operations go in enqueue order, in batches of `BATCH`, each row naming the cloud row it is based
on (compare-and-swap). A retryable error backs the batch off; a permanent one finds out whether
the backend or some rows are to blame and parks only those rows.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memd.core.errors import MemdError, SyncError, SyncPermanent, SyncRetryable
from memd.core.fsio import read_regular
from memd.core.redact import redact
from memd.db import Connection
from memd.memory import repo as memories
from memd.sync import outbox
from memd.sync.backend import CloudBackend, PushResult, SyncRow
from memd.sync.outbox import TOMBSTONE, Op
from memd.sync.pull import SUMMARIES_DIR
from memd.sync.rules import backoff_delay, describe_error, render_summary, sha_of

if TYPE_CHECKING:
    from memd.sync.job import RunReport, Syncer

log = logging.getLogger(__name__)

BATCH = 100
LAST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z: later times cannot be written as dates
SUMMARIES_PER_RUN = 1000


def queue_unsynced(s: Syncer, target: str, report: RunReport) -> None:
    """Queue the files changed or deleted while sync was off, and new session summaries."""
    loaded = _unsynced(s, target)
    summaries = s.settings.sync_summaries
    if not loaded and not summaries:
        return
    now = s.now()

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
            n += _queue_summaries(s, conn, target, now)
        return n

    report.queued += s.store.w.run(queue)


def _queue_summaries(s: Syncer, conn: Connection, target: str, now: float) -> int:
    cursor = outbox.target_state(conn, target).summaries_cursor
    rows = outbox.summaries_since(conn, cursor, SUMMARIES_PER_RUN)
    n = 0
    for row in rows:
        # A session id is an app's own string: it goes out redacted like everything else.
        rel = f"{SUMMARIES_DIR}/{_file_safe(redact(row.session_id))}.md"
        cursor = max(cursor, row.summary_at)
        if s.excluded(rel):
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
        outbox.update_target(conn, target, s.settings.sync_backend, summaries_cursor=cursor)
    return n


def _unsynced(s: Syncer, target: str) -> list[tuple[str, bytes | None]]:
    """The tree's files the cloud has not seen as they are, with their bytes (None: gone)."""
    conn = s.store.read()
    root = str(s.root)
    changed = [rel for rel, _ in outbox.unsynced_files(conn, target, root) if not s.excluded(rel)]
    gone: list[str] = []
    # An empty index (a new or moved memory root not indexed yet) is no reason to delete
    # every file in the cloud.
    if memories.has_files(conn, root):
        gone = [
            rel
            for rel in outbox.vanished_files(conn, target, root)
            if not rel.startswith(SUMMARIES_DIR + "/") and not s.excluded(rel)
        ]
    loaded: list[tuple[str, bytes | None]] = []
    for rel in changed:
        try:
            loaded.append((rel, read_regular(s.root / rel, inside=[s.root])))
        except FileNotFoundError:
            loaded.append((rel, None))
        except (OSError, MemdError) as exc:
            # A link or FIFO in its place, or a file outside the tree: never sent.
            log.warning("sync: not queuing %s: %s", rel, exc)
    return loaded + [(rel, None) for rel in gone]


@dataclass(slots=True)
class Push:
    """Send the target's due operations to one backend and record what became of them."""

    s: Syncer
    backend: CloudBackend
    target: str
    report: RunReport

    def run(self) -> int:
        """Send every due operation; return how many the server refused (left queued)."""
        s, target = self.s, self.target
        namespace, device = s.namespace(), s.device_id()
        last: list[int] = []
        held: set[int] = set()  # refused in this push: not sent again before a pull
        while True:
            due = outbox.due(s.store.read(), target, s.now(), BATCH + len(held))
            batch = [op for op in due if op.seq not in held][:BATCH]
            seqs = [op.seq for op in batch]
            if not batch or seqs == last:
                break
            last = seqs
            held |= self._send(batch, namespace, device)
        if self.report.pushed:
            now, backend_name = s.now(), s.settings.sync_backend
            s.store.w.run(lambda c: outbox.update_target(c, target, backend_name, last_push_at=now))
        return len(held)

    def _send(
        self, batch: list[Op], namespace: str, device: str, *, isolating: bool = False
    ) -> set[int]:
        """Push one batch; return the seqs the server refused by compare-and-swap."""
        s, target = self.s, self.target
        now = s.now()
        s.store.w.run(lambda c: outbox.mark_attempt(c, [op.seq for op in batch], now))
        # The base is read now, not when the change was queued: a pull since then (a conflict
        # resolved, the other device's version taken) moved it.
        conn = s.store.read()
        rows = [
            _row(op, namespace, device, outbox.push_base(conn, target, op.path)) for op in batch
        ]
        try:
            result = self.backend.push(rows)
        except SyncRetryable as exc:
            self._back_off(batch, exc)
            self.report.retrying += len(batch)
            raise
        except SyncPermanent as exc:
            return self._isolate(batch, exc, namespace, device, isolating)
        return self._complete(batch, result)

    def _complete(self, batch: list[Op], result: PushResult) -> set[int]:
        target, backend_name = self.target, self.s.settings.sync_backend
        # Applied, or dropped because the server already has it or a newer version from this
        # device: either way nothing is left to send.
        done = [op for op in batch if op.op_id not in result.refused]
        refused = [op for op in batch if op.op_id in result.refused]

        def record(conn: Connection) -> None:
            outbox.complete(conn, done)
            outbox.unmark_attempt(conn, [op.seq for op in refused])
            outbox.update_target(conn, target, backend_name, add_pushed=len(done))

        self.s.store.w.run(record)
        self.report.pushed += len(done)
        self.report.refused += len(refused)
        for op in refused:
            log.info("sync: %s v%d refused: another device changed it since the last pull",
                     op.path, op.version)  # fmt: skip
        return {op.seq for op in refused}

    def _back_off(self, batch: list[Op], exc: SyncError) -> None:
        s = self.s
        cap = s.settings.sync_backoff_cap_s
        delays = {op.seq: backoff_delay(op.attempts + 1, cap, s.rand()) for op in batch}
        error, now = describe_error(exc), s.now()
        s.store.w.run(lambda c: outbox.retry_later(c, delays, error, now))

    def _isolate(
        self, batch: list[Op], exc: SyncPermanent, namespace: str, device: str, isolating: bool
    ) -> set[int]:
        """A batch was refused: find out whether the backend or some rows are the problem."""
        s = self.s
        now, fp = s.now(), s.fingerprint
        if not isolating:
            try:
                # A SyncPermanent here (credentials, a missing or outdated schema) refuses the
                # whole run (see `Syncer.run`) instead of parking rows one by one.
                self.backend.check()
            except SyncRetryable:
                self._back_off(batch, exc)
                self.report.retrying += len(batch)
                raise
        if len(batch) == 1:
            error = describe_error(exc)
            s.store.w.run(lambda c: outbox.park(c, [batch[0].seq], error, fp, now))
            self.report.parked += 1
            log.warning("sync: parked %s v%d: %s", batch[0].path, batch[0].version, error)
            return set()
        # The backend works: send the rows one by one and park only those it refuses.
        held: set[int] = set()
        for op in batch:
            held |= self._send([op], namespace, device, isolating=True)
        return held


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
