"""What a log format gives the reader and what the reader gives it: the contract every assistant's
parser keeps (docs/conversations.md, "Adding an assistant").

A format is read in one of three kinds:

- **lines**: an append-only file of one record per line (Codex rollouts, Gemini CLI's JSONL
  chats, Claude Code transcripts). `LineParser(raw, ctx)` turns one line into turns; the reader
  tails the file from byte-offset checkpoints.
- **document**: one JSON (or Markdown) file rewritten in place (Gemini CLI's older chats,
  Cline's task histories, Continue's sessions). `DocumentParser(data, ctx)` turns the whole file
  into turns; the reader reads it again whenever its size, time or content changes.
- **sqlite**: a database another program owns (OpenCode 1.2+), read by a module of
  `memd.conversations.repo` read-only; its rows become turns through the same pure functions.

Parsers are pure: bytes and a `FileContext` in, turns out, no file access. What a parser needs to
know beyond its bytes (the session id a rollout's first line names, the project folder a chat's
folder stands for) is found once per read by the format's `Describe` function, which may read
other files, and handed to every call in `FileContext.facts`.

Turn ids come from the log (a message id) or are derived from what the log says (never the time of
reading), so reading a file again gives the same ids and the store upserts: the same turn is stored
once, a turn whose text changed is updated (the last copy wins), and a turn no longer in a document
stays stored (a rewrite can lose what memd already kept, memd does not lose it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from memd.core.models import Turn

if TYPE_CHECKING:
    from memd.conversations.formats.document import ParsedDocument

Kind = Literal["lines", "document", "sqlite"]


@dataclass(frozen=True, slots=True)
class Facts:
    """What a file's surroundings say about its turns, found by the format's `Describe`.

    `session_id` is the session the file holds when the file (its name, its first line) says so;
    `project` the working folder its assistant ran in; `title` a session title the log gives;
    `extra` anything else a format needs (e.g. the sessions a sibling file already holds).
    """

    session_id: str = ""
    project: str = ""
    title: str = ""
    started: float = 0.0  # the session's start (epoch seconds) for records without a time
    extra: Mapping[str, str] = field(default_factory=dict)


NO_FACTS = Facts()


@dataclass(frozen=True, slots=True)
class FileContext:
    """One call's view of the file: its path, the assistant (`source`, also the turns' agent),
    the `Facts` found for it, and for a line its 1-based number."""

    path: str
    source: str
    facts: Facts = NO_FACTS
    lineno: int = 0

    def at(self, lineno: int) -> FileContext:
        """The same view for line `lineno` (built directly: `dataclasses.replace` cost ~3 µs
        a line, a tenth of a generic log line's reading)."""
        return FileContext(self.path, self.source, self.facts, lineno)


# One line (without its newline) → turns. Raises `ParseError` for a line that is not what the
# format writes (it is reported with its file and line; the lines around it are read).
LineParser = Callable[[bytes, FileContext], list[Turn]]

# A whole document → turns. Raises `ParseError` when it cannot be read (a JSON document still being
# written is not valid JSON: the reader says so in `status` and reads it again when it changes).
# It may return a `ParsedDocument` instead: its turns, the problems met in the rest (each in
# `status`) and whether the document was complete (one cut short is read again when it changes,
# and what its complete part held is kept meanwhile).
DocumentParser = Callable[[bytes, FileContext], "list[Turn] | ParsedDocument"]

# What a file's surroundings say (`Facts`); may read other files, never raises (unknown → empty).
Describe = Callable[[str], Facts]

# Where each section of some bytes starts: (byte offset of its header line, lines before it,
# the header's key), in order.
SectionStarts = Callable[[bytes], list[tuple[int, int, str]]]


@dataclass(frozen=True, slots=True)
class Sections:
    """A document that is only ever appended to, in sections that each open with a header line
    (Aider's history: one section per run). It is read from its last section's header on, so an
    append costs what was appended (`memd.conversations.sections`).

    `starts` finds the headers; `parse(data, ctx, lines_before, earlier)` reads the part of the
    document from a header on (`lines_before` it in the file; `earlier(key)`: how many headers
    with that key came before the part, for ids that count them).
    """

    starts: SectionStarts
    parse: Callable[[bytes, FileContext, int, Callable[[str], int]], ParsedDocument]


def no_facts(path: str) -> Facts:
    """The `Describe` of a format whose files say everything themselves."""
    del path
    return NO_FACTS
