"""A git history of every change to the memory tree, with undo (see `recorder`)."""

from memd.history.models import (
    Cause,
    Change,
    ChangeDetail,
    FileChange,
    FileDiff,
    FileUndo,
    HistoryStatus,
    PruneResult,
    UndoPlan,
)
from memd.history.recorder import History
from memd.history.repo import history_dir
from memd.history.scope import ChangeScope, change_scope, note_write

__all__ = [
    "Cause",
    "Change",
    "ChangeDetail",
    "ChangeScope",
    "FileChange",
    "FileDiff",
    "FileUndo",
    "History",
    "HistoryStatus",
    "PruneResult",
    "UndoPlan",
    "change_scope",
    "history_dir",
    "note_write",
]
