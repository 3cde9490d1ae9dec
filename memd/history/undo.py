"""Planning an undo: the new content of every file a change touched, or a refusal.

An undo is a new change that reverses an old one. Each file's reverse is computed against the
file as it is now (`memd.history.merge`), so later edits the change did not touch are kept; if
a later edit touched the change's own lines the whole undo is refused, naming the file, its
lines and the later changes to that file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from memd.core.errors import HistoryError, UndoConflict
from memd.history.files import read_real
from memd.history.git import BRANCH, Git
from memd.history.merge import Reverted, revert_text
from memd.history.models import Cause, Change, FileUndo, UndoPlan
from memd.history.query import file_versions, log_changes, resolve

_NOT_UNDONE = {
    Cause.BASELINE.value: "it is where the history starts (undoing it would empty the tree)",
    Cause.PRUNE.value: "pruning changed no file",
}


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
    disk: dict[str, str | None] = {}
    virtual: dict[str, str | None] = {}
    conflicts: list[str] = []
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
            if isinstance(result, str):
                conflicts.append(result)
                continue
            if result.conflicts:
                conflicts.extend(result.conflicts)
                continue
            warnings.extend(result.warnings)
            new: str | None = result.text
            if before is None and not (new or "").strip():
                new = None  # the change created the file and nothing else is in it now
            virtual[rel] = new
    if conflicts:
        what = (
            f"change {todo[0].id} ({todo[0].summary})"
            if len(todo) == 1
            else (f"{len(todo)} changes ({', '.join(c.id for c in todo)})")
        )
        raise UndoConflict(
            f"cannot undo {what}: " + "; ".join(conflicts),
            hint=_later_hint(git, todo),
            conflicts=tuple(conflicts),
        )
    files = tuple(
        FileUndo(tree / rel, rel, disk[rel], virtual[rel])
        for rel in sorted(virtual)
        if virtual[rel] != disk[rel]
    )
    return UndoPlan(tuple(todo), files, tuple(warnings))


def _later_hint(git: Git, todo: list[Change]) -> str:
    later: list[str] = []
    mine = {c.id for c in todo}
    oldest = todo[-1]
    for f in {f.path for c in todo for f in c.files}:
        for lc in log_changes(git, path=f, rev=f"{oldest.commit}..{BRANCH}", limit=5):
            if lc.id in mine:
                continue
            when = dt.datetime.fromtimestamp(lc.at).strftime("%Y-%m-%d %H:%M")
            entry = f"{lc.id} ({lc.summary}, {when})"
            if entry not in later:
                later.append(entry)
    if later:
        return (
            "later changes to these files: "
            + ", ".join(later)
            + "; undo those first, or edit the files by hand"
        )
    return "the files were edited after this change; edit them by hand"
