"""Messages of `export`."""

from __future__ import annotations

from memd.api.messages.base import Params, Result, check_path


class ExportParams(Params, frozen=True, kw_only=True):
    path: str = ""
    tree: bool = True
    overwrite: bool = False  # replace an existing file (never one in memd's own folders)

    def __post_init__(self) -> None:
        check_path(self.path, "path")


class ExportResult(Result, kw_only=True):
    path: str
    sessions: int
    chats: int
    memories: int
    files: int
    bytes: int
    seconds: float
