"""Plain values of the history: causes, changes, diffs, undo plans, status; commit messages.

A change is one commit. Its message has a subject line for people (`remember: always use
vitest`) and git trailers for memd and for anyone using git tools::

    Memd-Change: 3f9a0c1d2e4b
    Memd-Cause: remember
    Memd-Detail: id=m_1a2b always use vitest

`Memd-Change` is a stable id: pruning rewrites the commits it keeps (new parents, new commit
ids) but never their messages, so an id shown yesterday still names the same change today.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from memd.api.messages import history as wire
from memd.api.messages import status
from memd.core.redact import redact

# The history's changes are the socket's: one declaration each (`memd.api.messages.history`).
Change = wire.ChangeInfo
FileChange = wire.ChangeFile
FileDiff = wire.FileDiff
HistoryStatus = status.HistoryStatus


class Cause(enum.StrEnum):
    """Why the memory tree changed."""

    REMEMBER = "remember"
    FORGET = "forget"
    EXTRACT = "extract"  # an extraction run; detail names the run
    SUPERSEDE = "supersede"
    ARCHIVE = "archive"
    IMPORT = "import"
    SYNC = "sync"  # files pulled from the cloud copy (another device's edits)
    JOURNAL = "journal"  # conversation entries in journal/ (coalesced like hand edits)
    EDIT = "edit"  # an edit made on the memory page or through the socket
    UNDO = "undo"
    PRUNE = "prune"
    HAND = "hand"  # a person (or another program) edited the files
    BASELINE = "baseline"  # the tree when history started, or the squashed older part


CAUSE_TRAILER = "Memd-Cause"
DETAIL_TRAILER = "Memd-Detail"
CHANGE_TRAILER = "Memd-Change"
UNDOES_TRAILER = "Memd-Undoes"
RUN_TRAILER = "Memd-Run"
_TRAILER_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,40}$")
_TRAILER_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*): ?(.*)$")
MAX_DETAIL = 300
_SUBJECT_WORDS = MappingProxyType(
    {
        Cause.HAND: "hand edit",
        Cause.EXTRACT: "extraction",
    }
)


def one_line(text: str, limit: int = MAX_DETAIL) -> str:
    """`text` redacted, on one line, at most `limit` characters."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_message(cause: Cause, detail: str, trailers: dict[str, str]) -> str:
    """The commit message of a change: a subject line, a blank line, the trailers."""
    detail = one_line(detail)
    word = _SUBJECT_WORDS.get(cause, cause.value)
    subject = one_line(f"{word}: {detail}" if detail else word, 72)
    lines = [f"{CHANGE_TRAILER}: {trailers.pop(CHANGE_TRAILER)}", f"{CAUSE_TRAILER}: {cause}"]
    if detail:
        lines.append(f"{DETAIL_TRAILER}: {detail}")
    for key, value in trailers.items():
        if not _TRAILER_KEY.match(key):
            raise ValueError(f"not a trailer key: {key!r}")
        lines.append(f"{key}: {one_line(value)}")
    return subject + "\n\n" + "\n".join(lines) + "\n"


def parse_trailers(message: str) -> dict[str, str]:
    """The trailers of the last paragraph of a commit message (first value per key)."""
    paragraphs = message.strip().split("\n\n")
    found: dict[str, str] = {}
    if len(paragraphs) < 2:
        return found
    for line in paragraphs[-1].split("\n"):
        m = _TRAILER_LINE.match(line)
        if m:
            found.setdefault(m.group(1), m.group(2).strip())
    return found


@dataclass(frozen=True, slots=True)
class ChangeDetail:
    """A change with the diff of every file it touched."""

    change: Change
    diffs: tuple[FileDiff, ...]


@dataclass(frozen=True, slots=True)
class FileUndo:
    """What undoing a change does to one file.

    `expected` is the file's text the plan was computed from (None: the file did not exist);
    the caller must write `new` (None: delete the file) only while the file still holds exactly
    `expected`, so an edit made after planning is never overwritten.
    """

    path: Path
    rel: str
    expected: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class UndoPlan:
    """The files an undo rewrites, computed against their current content."""

    changes: tuple[Change, ...]  # newest first
    files: tuple[FileUndo, ...]
    warnings: tuple[str, ...] = ()

    @property
    def change(self) -> Change:
        return self.changes[0]

    @property
    def detail(self) -> str:
        """The undo change's detail: the change it reverses, or the ids of several."""
        cs = self.changes
        if len(cs) == 1:
            return f"{cs[0].id}: {cs[0].summary}"
        return f"{len(cs)} changes: " + ", ".join(c.id for c in cs)

    @property
    def trailers(self) -> dict[str, str]:
        """The undo change's trailers: the ids it reverses."""
        return {UNDOES_TRAILER: ",".join(c.id for c in self.changes)}


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What one prune did."""

    squashed: int  # changes folded into the new root
    kept: int  # changes kept as they were
    before: float  # the cutoff, seconds since the epoch
    change: Change | None = None  # the change recording the prune (None: nothing to prune)
