"""Messages of the history methods: `history`, `show_change`, `undo`."""

from __future__ import annotations

import time

from msgspec import Struct

from memd.api.messages.base import Limit, Params, Result, check_path
from memd.core.errors import InvalidParams
from memd.core.models import MAX_TS
from memd.core.moments import ACCEPTED, BadMoment, parse_moment


class HistoryParams(Params, frozen=True, kw_only=True):
    path: str = ""  # a file or folder of the memory tree (absolute, or relative to it)
    # Epoch seconds, or text in one of the forms of `memd.core.moments` ("2026-11-01",
    # "2 days ago", "yesterday"); anything else is refused, naming the forms.
    since: str | float = ""
    limit: Limit = 50

    def __post_init__(self) -> None:
        check_path(self.path, "path")
        if not isinstance(self.since, str) and not 0 <= self.since <= MAX_TS:
            raise InvalidParams("param 'since': epoch seconds between 1970 and the year 9999")
        if isinstance(self.since, str) and self.since:
            self.since_ts()

    def since_ts(self, now: float | None = None) -> float | None:
        """`since` as epoch seconds (None: no limit); `InvalidParams` naming the forms."""
        if isinstance(self.since, float | int):
            return float(self.since)
        if not self.since:
            return None
        try:
            return parse_moment(self.since, time.time() if now is None else now)
        except BadMoment:
            shown = self.since if len(self.since) <= 40 else self.since[:40] + "…"
            raise InvalidParams(
                f"param 'since': {shown!r} is not a time memd reads; give {ACCEPTED}"
            ) from None


class ChangeFile(Struct, frozen=True, kw_only=True):
    """One file of a change."""

    path: str  # relative to the memory tree
    status: str  # A (added), M (modified), D (deleted)


class ChangeInfo(Struct, frozen=True, kw_only=True):
    """One recorded change of the memory tree: what the history reads from git and what
    `history`, `show_change` and `undo` answer (the history's `Change`)."""

    id: str  # what `show_change` and `undo` take
    commit: str
    at: float  # seconds since the epoch
    cause: str  # remember, forget, extract, supersede, archive, import, sync, journal, edit, …
    detail: str
    summary: str
    author: str
    files: list[ChangeFile]
    undoes: str = ""  # for an undo: the ids it reversed
    run: str = ""  # the job run that made it (`undo` takes `run`)
    undone_by: str = ""  # the undo that reversed it, while that undo is in effect


class HistoryResult(Result, kw_only=True):
    changes: list[ChangeInfo]  # newest first


class ShowChangeParams(Params, frozen=True, kw_only=True):
    change: str = ""


class FileDiff(Struct, frozen=True, kw_only=True):
    """The unified diff of one file of a change (texts as committed, secrets redacted)."""

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
