"""One operation of memd on the memory files: everything it writes is one change of the history.

An operation (a remember, an extraction batch, an archival run, an undo ...) is opened with
`MemoryFiles.operation(cause)` and handed to every write it makes; the door tells it each file
written and what the file held before. When it ends, the door records it. Journal entries are
an operation that asks to be coalesced: the history records them per file and minute instead.
Part of `memd.memory.files`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from memd.history import Cause


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

    def wrote(self, path: Path | str, before: str | None, after: str | None) -> bool:
        """Note a write of `path` (True when it is the operation's first write of it)."""
        key = os.path.abspath(path)
        seen = self.files.get(key)
        if seen is None:
            self.files[key] = Written(before, after)
            return True
        seen.after = after  # the first write's `before` is the state before this operation
        return False

    @property
    def paths(self) -> list[str]:
        return list(self.files)
