"""Messages of the history methods: `history`, `show_change`, `undo`."""

from __future__ import annotations

from msgspec import Struct

from memd.api.messages.base import Limit, Params, Result, check_path
from memd.core.errors import InvalidParams
from memd.core.models import MAX_TS


class HistoryParams(Params, frozen=True, kw_only=True):
    path: str = ""  # a file or folder of the memory tree (absolute, or relative to it)
    since: str | float = ""  # epoch seconds, an ISO date/time, or git's "2 days ago"
    limit: Limit = 50

    def __post_init__(self) -> None:
        check_path(self.path, "path")
        if not isinstance(self.since, str) and not 0 <= self.since <= MAX_TS:
            raise InvalidParams("param 'since': epoch seconds between 1970 and the year 9999")


class ChangeFile(Struct, kw_only=True):
    path: str  # relative to the memory tree
    status: str  # A (added), M (modified), D (deleted)


class ChangeInfo(Struct, kw_only=True):
    """One recorded change of the memory tree."""

    id: str  # what `show_change` and `undo` take
    commit: str
    at: float
    cause: str  # remember, forget, extract, supersede, archive, import, sync, journal, edit, …
    detail: str
    summary: str
    author: str
    files: list[ChangeFile]
    undoes: str = ""  # for an undo: the ids it reversed
    run: str = ""  # the job run that made it (`undo` takes `run`)


class HistoryResult(Result, kw_only=True):
    changes: list[ChangeInfo]  # newest first


class ShowChangeParams(Params, frozen=True, kw_only=True):
    change: str = ""


class FileDiff(Struct, kw_only=True):
    path: str
    status: str
    diff: str  # unified diff, as recorded (secrets redacted)
    binary: bool = False


class ShowChangeResult(Result, kw_only=True):
    change: ChangeInfo
    diffs: list[FileDiff]


class UndoParams(Params, frozen=True, kw_only=True):
    """`undo`: one change, several, or every change of a job run (exactly one of them)."""

    change: str = ""
    changes: list[str] = []
    run: str = ""
    dry_run: bool = False


class UndoFile(Struct, kw_only=True):
    path: str
    rel: str
    delete: bool
    create: bool


class UndoResult(Result, kw_only=True):
    changes: list[ChangeInfo]  # what is (or would be) undone, newest first
    files: list[UndoFile]
    warnings: list[str]
    dry_run: bool
    written: list[str]  # files written (none on a dry run)
