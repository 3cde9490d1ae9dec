"""A git history of every change to the memory tree, with undo (see `recorder`)."""

from memd.history.gitdir import history_dir
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

__all__ = [
    "Cause",
    "Change",
    "ChangeDetail",
    "FileChange",
    "FileDiff",
    "FileUndo",
    "History",
    "HistoryStatus",
    "PruneResult",
    "UndoPlan",
    "history_dir",
]
