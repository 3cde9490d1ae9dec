"""One operation of memd on the memory files: everything it writes is one change of the history.

Each of its writes is a `TextEdit` of one file's text, handed to the door.

An operation (a remember, an extraction batch, an archival run, an undo ...) is opened with
`MemoryFiles.operation(cause)` and handed to every write it makes; the door notes in it each
file written, what the file held before and what memd left in it. When it ends, the door
records it. Journal entries are an operation that asks to be coalesced: the history records
them per file and minute instead.
Part of `memd.memory.files`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from memd.core.fsio import PRIVATE_FILE
from memd.history import Cause
from memd.memory.files.guard import Op

T = TypeVar("T")
NEW_FILE_MODE = PRIVATE_FILE


@dataclass(slots=True)
class Written:
    """One file an operation wrote: its text before the operation's first write of it (None:
    no file) and after its last (None: deleted)."""

    before: str | None
    after: str | None


@dataclass(slots=True)
class Operation:
    """What one operation wrote, by absolute path, in the order it first wrote each file."""

    cause: Cause
    detail: str = ""
    trailers: dict[str, str] = field(default_factory=dict)
    coalesce: bool = False  # journal entries: recorded per file and minute, not as one change
    files: dict[str, Written] = field(default_factory=dict)
    held: set[str] = field(default_factory=set)  # files whose hand edits wait for this change
    # memd's recent items the write guard applied again over an editor's older copy, by file
    # (the editor's copy, and it with them): a change of memd's own, recorded before this one.
    reapplied: dict[str, tuple[Cause, Written]] = field(default_factory=dict)
    # What the operation wrote to a file before someone else saved it and the operation wrote
    # it again: a change of memd's own, recorded before this one (the save between is theirs).
    split: list[tuple[str, Written]] = field(default_factory=list)


def texts(wrote: Mapping[str, Written]) -> dict[str | Path, tuple[str | None, str | None]]:
    """Each file's text before and after, as the history records a change."""
    return {p: (w.before, w.after) for p, w in wrote.items()}


@dataclass(frozen=True, slots=True)
class TextEdit(Generic[T]):
    """What memd does to one file's text.

    `apply(current text or None) -> (new text or None for "no change", result)` must be a
    pure function of its argument: it may run several times, each time on newer content.
    `guarded(result)` names the item changes the write guard keeps; without it the guard is
    not told (journal lines, status lines, whole files), and `apply` gets the file as it is:
    memd's recent items an older copy wrote over are applied again on top of its result.
    """

    apply: Callable[[str | None], tuple[str | None, T]]
    guarded: Callable[[T], list[Op]] | None = None
    new_mode: int = NEW_FILE_MODE


def cause_of(recorded: str) -> Cause:
    """The history's cause for a cause the write guard recorded (kept across restarts as text:
    one this version does not know is an edit)."""
    return Cause(recorded) if recorded in {c.value for c in Cause} else Cause.EDIT
