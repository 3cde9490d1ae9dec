"""The pull side of a sync run: another device's rows applied to the memory tree.

The rules (take, keep, conflict copy) are `memd.sync.rules.plan_pull`'s; the module docstring
of `memd.sync.job` tells them in full. Every write goes through the safe writer and only while
the file is as planned, so a save made meanwhile is never overwritten.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memd.core.errors import EditConflict, MemdError, PathError
from memd.core.fsio import inside_any, read_regular, real
from memd.db import Connection
from memd.history import Cause
from memd.memory.files import Operation, encode
from memd.sync import outbox
from memd.sync.backend import CloudBackend, SyncRow
from memd.sync.outbox import TOMBSTONE, Op
from memd.sync.rules import Action, conflict_name, plan_pull, pristine_sha, safe_rel, sha_of

if TYPE_CHECKING:
    from memd.sync.job import RunReport, Syncer

log = logging.getLogger(__name__)

PULL_PAGE = 500
SUMMARIES_DIR = "_sessions"


@dataclass(frozen=True, slots=True)
class Pulled:
    """One pulled row and what the rules decided for it."""

    row: SyncRow
    action: Action
    rel: str
    data: bytes  # the bytes the row stands for (empty for a tombstone)
    sha: str  # of `data`, TOMBSTONE for a tombstone
    queued: Op | None
    local_sha: str  # of the local file when planned (TOMBSTONE when missing)
    copy_rel: str = ""


@dataclass(slots=True)
class Pull:
    """Pull the namespace's rows newer than the target's cursor and apply them, page by page."""

    s: Syncer
    backend: CloudBackend
    target: str
    report: RunReport

    def run(self) -> None:
        """Every page newer than the cursor; the cursor moves with each settled page."""
        namespace = self.s.namespace()
        cursor = outbox.target_state(self.s.store.read(), self.target).pull_cursor
        while True:
            rows = self.backend.pull(namespace, cursor, PULL_PAGE)
            if not rows:
                break
            self._apply_page(rows)
            cursor = rows[-1].synced_at
            if len(rows) < PULL_PAGE:
                break
        now, target, backend = self.s.now(), self.target, self.s.settings.sync_backend
        self.s.store.w.run(lambda c: outbox.update_target(c, target, backend, last_pull_at=now))

    def _plan(self, row: SyncRow) -> Pulled | None:
        rel, root = row.path, self.s.root
        if rel.startswith(SUMMARIES_DIR + "/") or self.s.excluded(rel) or not safe_rel(rel):
            return None  # summaries are a cloud copy only; unsafe paths are never written
        if not inside_any(root / rel, [root]):
            log.warning("sync: %s leads outside the memory root (symlink); not pulled", rel)
            return None
        conn = self.s.store.read()
        state = outbox.file_state(conn, self.target, row.path)
        queued = outbox.queued(conn, self.target, row.path)
        data = b"" if row.deleted else row.content.encode()
        sha = TOMBSTONE if row.deleted else sha_of(data)
        local = self.local_sha(rel)
        action = plan_pull(
            remote_device=row.device_id, remote_sha=sha, device_id=self.s.device_id(),
            local_sha=local, base_sha=state.base_sha if state else "",
            queued_sha=queued.local_sha if queued else None, pristine_sha=pristine_sha(rel),
        )  # fmt: skip
        pulled = Pulled(row, action, rel, data, sha, queued, local)
        return _as_conflict(pulled) if action is Action.CONFLICT else pulled

    def local_sha(self, rel: str) -> str:
        """The hash of the local file as it is now (TOMBSTONE when missing)."""
        root = self.s.root
        try:
            # A link inside the tree is read at its target; a FIFO is never waited on.
            return sha_of(read_regular(real(root / rel), inside=[root]))
        except FileNotFoundError:
            return TOMBSTONE
        except (OSError, MemdError):
            return "unreadable"  # never equal to a hash: treated as a local change

    def _apply_page(self, rows: Sequence[SyncRow]) -> None:
        planned = [(row, self._plan(row)) for row in rows]
        self.report.pulled += len(rows)
        self.report.skipped += sum(1 for _, p in planned if p is None)
        items = [p for _, p in planned if p is not None]
        takes = [p for p in items if p.action is Action.TAKE]
        # Announce memd's own writes first: the hook then knows them even if the watcher sees
        # the file before this page is settled, or memd dies in between.
        if takes:
            moved = self.s.store.w.run(lambda c: self._announce(c, takes))
            items = [_as_conflict(p) if p.rel in moved else p for p in items]
        touched: list[str] = []
        applied: list[Pulled] = []
        # The page's files are one change of the history (a run pulls one page unless more
        # than PULL_PAGE files changed).
        with self.s.files.operation(Cause.SYNC, f"pulled {len(items)} files") as op:
            for p in items:
                final, paths = self._apply_file(p, op)
                touched += paths
                applied.append(final)
        if touched:
            self.s.indexer.index_paths(touched)
        cursor, now = rows[-1].synced_at, self.s.now()
        self.s.store.w.run(lambda c: self._settle(c, applied, len(rows), cursor, now))

    def _announce(self, conn: Connection, takes: list[Pulled]) -> set[str]:
        """Record the bytes memd is about to write; return the paths changed since the plan."""
        moved = set()
        for p in takes:
            now_queued = outbox.queued(conn, self.target, p.rel)
            if (now_queued and now_queued.seq) != (p.queued and p.queued.seq):
                moved.add(p.rel)  # a local change was queued since the plan
                continue
            outbox.set_incoming(conn, self.target, p.rel, p.sha)
            if p.queued is not None:
                outbox.drop(conn, [p.queued.seq])  # an untouched template: nothing to send
        return moved

    def _settle(
        self, conn: Connection, items: list[Pulled], pulled: int, cursor: float, now: float
    ) -> None:
        target = self.target
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
                self._add_conflict(conn, p, now)
        outbox.update_target(
            conn, target, self.s.settings.sync_backend, pull_cursor=cursor, add_pulled=pulled,
            add_conflicts=sum(p.action is Action.CONFLICT for p in items),
        )  # fmt: skip

    def _apply_file(self, p: Pulled, op: Operation) -> tuple[Pulled, list[str]]:
        # A link inside the tree is written at its target (checked inside by `_plan`, and by
        # the safe writer again where it writes: a folder made a link since is refused).
        report, root, files = self.report, self.s.root, self.s.files
        dest = Path(real(root / p.rel))
        if p.action is Action.TAKE:
            try:  # only while the file is as planned: a save since the plan is never overwritten
                files.replace_when(dest, lambda now: _sha_of_text(now) == p.local_sha,
                                   None if p.row.deleted else p.row.content, op)  # fmt: skip
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
        copy = root / p.copy_rel
        try:
            files.replace_when(copy, lambda _now: True, p.row.content, op)
        except PathError as exc:
            log.warning("sync: conflict copy %s not written: %s", p.copy_rel, exc)
            return dataclasses.replace(p, copy_rel=""), []
        report.conflict_paths.append(p.copy_rel)
        return p, [str(copy)]

    def _add_conflict(self, conn: Connection, p: Pulled, now: float) -> None:
        kind = (
            "deleted-remotely"
            if p.row.deleted
            else ("deleted-locally" if self.local_sha(p.rel) == TOMBSTONE else "changed-both")
        )
        # A page pulled again after a crash must not report it twice.
        if not outbox.conflict_recorded(conn, self.target, p.rel, p.row.version, p.row.device_id):
            outbox.add_conflict(
                conn, self.target, p.rel, kind=kind, copy_path=p.copy_rel,
                remote_device=p.row.device_id, remote_version=p.row.version, at=now,
            )  # fmt: skip


def _as_conflict(p: Pulled) -> Pulled:
    copy = "" if p.row.deleted else conflict_name(p.rel, p.row.device_id, p.row.updated_at)
    return dataclasses.replace(p, action=Action.CONFLICT, copy_rel=copy)


def _sha_of_text(text: str | None) -> str:
    """`sha_of` a file's bytes, from its text as the safe writer reads it (None: missing)."""
    return TOMBSTONE if text is None else sha_of(encode(text))
