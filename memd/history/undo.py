"""Planning an undo: the new content of every file a change touched, or a refusal.

An undo is a new change that reverses an old one. Each file's reverse is computed against the
file as it is now (`memd.history.merge`), so later edits the change did not touch are kept; if
a later edit touched the change's own lines the whole undo is refused, naming the file, its
lines and the later change that edited them (the first one the reverse no longer applies to).
A change an undo in effect already reversed is refused as "already undone by" that undo.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType

from memd.core.errors import HistoryError, UndoConflict
from memd.history.files import read_real
from memd.history.git import BRANCH, Git
from memd.history.merge import Reverted, revert_text
from memd.history.models import Cause, Change, FileUndo, UndoPlan
from memd.history.query import file_versions, log_changes, resolve, undone

_NOT_UNDONE = MappingProxyType(
    {
        Cause.BASELINE.value: "it is where the history starts (undoing it would empty the tree)",
        Cause.PRUNE.value: "pruning changed no file",
    }
)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def _reverse_file(
    rel: str, before: str | None, after: str | None, current: str | None
) -> Reverted | str:
    """The reversed text of one file (a `Reverted`), or why it cannot be reversed (a str).

    A `Reverted` whose text is None-like is expressed by the caller: see `plan_undo`.
    """
    if after is None:  # the change deleted the file
        if current is not None:
            return f"{rel} was created again after this change deleted it"
        return revert_text("", before or "", "", label=rel)
    if current is None:
        return f"{rel} was deleted after this change"
    return revert_text(after, before or "", current, label=rel)


def plan_undo(git: Git, tree: Path, changes: Sequence[str]) -> UndoPlan:
    """Compute the undo of `changes` (one change, or all the changes of an extraction run)
    against the files as they are now; nothing is written.

    Several changes are reversed newest first, each on top of the previous reverse, and the
    plan holds the end result per file.
    """
    resolved = {c.commit: c for c in (resolve(git, x) for x in changes)}
    if not resolved:
        raise HistoryError("nothing to undo: no change given")
    order = {sha: n for n, sha in enumerate(git.out("rev-list", "--first-parent", BRANCH).split())}
    todo = sorted(resolved.values(), key=lambda c: order.get(c.commit, -1))
    for c in todo:
        why = _NOT_UNDONE.get(c.cause)
        if why:
            raise HistoryError(f"change {c.id} ({c.summary}) cannot be undone: {why}")
        if not c.files:
            raise HistoryError(f"change {c.id} ({c.summary}) changed no file; nothing to undo")
    _refuse_undone(git, todo)
    disk: dict[str, str | None] = {}
    virtual: dict[str, str | None] = {}
    conflicts: list[str] = []
    later: list[str] = []  # the changes that edited the lines since
    warnings: list[str] = []
    for c in todo:
        for rel, (before_b, after_b) in sorted(file_versions(git, c).items()):
            before, after = _text(before_b), _text(after_b)
            if rel not in disk:
                try:
                    disk[rel] = virtual[rel] = _text(read_real(tree, rel))
                except OSError as exc:
                    conflicts.append(f"{rel} cannot be read: {exc}")
                    continue
            current = virtual[rel]
            if before is None and current is None:
                warnings.append(f"{rel} is already gone")
                continue
            result = _reverse_file(rel, before, after, current)
            if isinstance(result, str) or result.conflicts:
                by, by_id = _edited_by(git, todo, rel, before, after)
                found = [result] if isinstance(result, str) else list(result.conflicts)
                conflicts += [f"{w} by {by}" for w in found]
                later += [by_id] if by_id and by_id not in later else []
                continue
            warnings.extend(result.warnings)
            new: str | None = result.text
            if before is None and not (new or "").strip():
                new = None  # the change created the file and nothing else is in it now
            virtual[rel] = new
    if conflicts:
        what = todo[0].id if len(todo) == 1 else f"{len(todo)} changes of one run"
        raise UndoConflict(
            f"cannot undo {what}: " + "; ".join(conflicts[:3])
            + (f"; and {len(conflicts) - 3} more" if len(conflicts) > 3 else ""),
            hint=(f"undo {', '.join(later)} first, or edit the file by hand" if later
                  else "edit the file by hand"),
            conflicts=tuple(conflicts),
        )  # fmt: skip
    files = tuple(
        FileUndo(tree / rel, rel, disk[rel], virtual[rel])
        for rel in sorted(virtual)
        if virtual[rel] != disk[rel]
    )
    return UndoPlan(tuple(todo), files, tuple(warnings))


def _refuse_undone(git: Git, todo: list[Change]) -> None:
    """`UndoConflict` when an undo in effect already reversed one of `todo`."""
    by = undone(git)
    done = [(c.id, by[c.id]) for c in todo if c.id in by]
    if done:
        cid, undo = done[0]
        raise UndoConflict(
            f"{cid} is already undone by {undo}",
            hint=f"undo {undo} to bring it back",
            conflicts=tuple(f"{c}: already undone by {u}" for c, u in done),
        )


def _edited_by(
    git: Git, todo: list[Change], rel: str, before: str | None, after: str | None
) -> tuple[str, str]:
    """The first change after `todo` whose version of `rel` the reverse no longer applies to,
    as ("id (cause, time)", id); ("a save not yet in the history", "") when no recorded one
    does (the file changed on disk since its last change)."""
    mine = {c.id for c in todo}
    later = log_changes(git, path=rel, rev=f"{todo[-1].commit}..{BRANCH}", limit=50)
    for lc in reversed(later):  # oldest first
        if lc.id in mine:
            continue
        version = git.entries(lc.commit, [rel]).get(rel)
        text = _text(git.blobs([version])[version]) if version else None
        result = _reverse_file(rel, before, after, text)
        if isinstance(result, str) or result.conflicts:
            when = dt.datetime.fromtimestamp(lc.at).strftime("%Y-%m-%d %H:%M")
            what = "hand edit" if lc.cause == Cause.HAND.value else lc.cause
            return f"{lc.id} ({what}, {when})", lc.id
    return "a save not yet in the history", ""
