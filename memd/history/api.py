"""The history of the memory tree as the daemon serves it: `history`, `show_change`, `undo`,
the daily prune job and the history part of `status`.

The history itself is started and closed with the memory feature (it must record from before
the watcher starts until after it stops); this feature only reads it and applies an undo
through what the memory feature gives it: the door to the memory files, which writes a file
only while it still holds the text the undo was planned on, and records the undo as a change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from memd.api import messages as msg
from memd.api.methods import Feature, JobSpec, Method
from memd.core.errors import InvalidParams, NotFound
from memd.core.models import JobOutcome, JobResult
from memd.history.models import UndoPlan
from memd.history.recorder import History

# Writes a plan's files (each only while it holds the text the plan was made on, else
# `UndoConflict`) and records the undo; returns the tree-relative paths written.
ApplyUndo = Callable[[UndoPlan], list[str]]
PRUNE_JOB = "history-prune"
WAIT_S = 5.0  # for changes queued to be committed


class HistoryFeature:
    """Reading and undoing the recorded changes of one memory tree."""

    def __init__(
        self,
        history: History,
        *,
        apply: ApplyUndo,
        reindex: Callable[[list[str]], object],
        lock: contextlib.AbstractContextManager[Any] | None = None,
    ) -> None:
        self.history = history
        self.apply = apply
        self.reindex = reindex
        self.lock = lock if lock is not None else contextlib.nullcontext()

    def log(self, p: msg.HistoryParams) -> msg.HistoryResult:
        self.history.wait(WAIT_S)  # what was just written is in the answer
        changes = self.history.log(p.path or None, since=p.since_ts(), limit=p.limit)
        return msg.HistoryResult(changes=list(changes))

    def show(self, p: msg.ShowChangeParams) -> msg.ShowChangeResult:
        if not p.change:
            raise InvalidParams("param 'change' is required (an id from `history`)")
        self.history.wait(WAIT_S)
        d = self.history.show(p.change)
        return msg.ShowChangeResult(change=d.change, diffs=list(d.diffs))

    def _targets(self, p: msg.UndoParams) -> list[str]:
        given = [x for x in (bool(p.change), bool(p.changes), bool(p.run)) if x]
        if len(given) != 1:
            raise InvalidParams("give exactly one of 'change', 'changes' or 'run'")
        if p.run:
            found = self.history.run_changes(p.run)
            if not found:
                raise NotFound(f"no recorded changes of run {p.run!r}")
            return [c.id for c in found]
        return [p.change] if p.change else list(p.changes)

    def undo(self, p: msg.UndoParams) -> msg.UndoResult:
        self.history.wait(WAIT_S)
        # Hand edits not recorded yet are recorded now: a refusal can name the one it meets.
        self.history.flush(force=True)
        plan = self.history.undo(self._targets(p))
        written: list[str] = []
        if not p.dry_run and plan.files:
            with self.lock:
                written = self.apply(plan)
            self.reindex([str(self.history.tree / rel) for rel in written])
        return msg.UndoResult(
            changes=list(plan.changes),
            files=[
                msg.UndoFile(
                    path=str(f.path), rel=f.rel, delete=f.new is None, create=f.expected is None
                )
                for f in plan.files
            ],  # fmt: skip
            warnings=list(plan.warnings),
            dry_run=p.dry_run,
            written=written,
        )

    def prune(self) -> JobResult:
        r = self.history.prune()
        counts = {"squashed": r.squashed, "kept": r.kept}
        if not r.squashed:
            return JobResult(PRUNE_JOB, JobOutcome.NOTHING_TO_DO, "nothing old enough", counts)
        return JobResult(
            PRUNE_JOB,
            JobOutcome.SUCCESS,
            f"{r.squashed} changes older than {self.history.keep_days} days squashed",
            counts,
        )

    def status_into(self, out: msg.StatusResult) -> None:
        """The history part of `status`: whether changes are recorded, and if not, why."""
        out.history = self.history.status()

    def feature(self) -> Feature:
        return Feature(
            "history",
            methods=[
                Method(msg.HISTORY, self.log, why="runs `git log`: ms to tens of ms"),
                Method(msg.SHOW_CHANGE, self.show, why="runs `git show`: ms"),
                Method(msg.UNDO, self.undo, writes=True, why="runs git, writes files"),
            ],
            jobs=[JobSpec(PRUNE_JOB, self.prune, 86400, 1800)],
            status_into=[self.status_into],
        )
