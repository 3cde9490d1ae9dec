"""Messages of `export`, and the answer of `import` of a memd export (`MergeResult`)."""

from __future__ import annotations

from msgspec import Struct

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


class MergedFiles(Struct, kw_only=True):
    """The memory tree of an export merged: files in it, written here, already the same, and
    the cloud copies written beside local files that differ (`kept_local`)."""

    in_export: int
    written: int
    identical: int
    kept_local: list[str]


class MergedMemories(Struct, kw_only=True):
    """The memories of an export merged: in it, added (`with_files`: came inside imported
    files), already present, and workspace memories not written (`workspace_skipped`)."""

    in_export: int
    added: int
    with_files: int = 0
    present: int = 0
    workspace_skipped: int = 0  # the defaults read an older daemon's answer


class MergeResult(Result, kw_only=True):
    """`import` of a memd export: what it is, then what of its sessions, chats, files,
    memories and extraction records was new here (`new`: the sum of the parts)."""

    format: str
    version: int
    exported_at: str
    device_id: str
    sessions_in_export: int
    new_sessions: int
    added: int
    updated: int
    sessions: int
    files: MergedFiles
    memories: MergedMemories
    memory_hashes: int = 0
    new: int
