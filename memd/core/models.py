"""Plain values that cross layers: frozen dataclasses and enums, no behaviour beyond helpers."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import msgspec

# The last second every date function can show (9999-12-31T23:59:59Z): a time past it, or before
# the epoch, is refused where it comes in and read as undated where it is stored.
MAX_TS = 253402300799

MEMORY_TYPES = ("personal", "preference", "skill", "project", "task", "decision", "knowledge")


class FileKind(enum.StrEnum):
    """Where a Markdown file sits in the memory tree; decides its context tier."""

    CORE = "core"
    TOPIC = "topic"
    AGENT = "agent"
    PROJECT = "project"
    JOURNAL = "journal"
    ARCHIVE = "archive"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Item:
    """One list item of a Markdown section, with the metadata of its inline comment."""

    line: int
    text: str
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.meta.get("id", "")


@dataclass(frozen=True, slots=True)
class Section:
    """A `## Heading` chunk of a Markdown file (the preamble is section 0)."""

    ordinal: int
    heading: str
    level: int
    start_line: int
    end_line: int
    text: str
    items: tuple[Item, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """A Markdown file after parsing: front matter, title, sections."""

    title: str
    front_matter: dict[str, Any]
    sections: tuple[Section, ...]
    warnings: tuple[str, ...] = ()


class HitSource(msgspec.Struct, frozen=True):
    """A journal line or a turn that said what a search hit says: folded into that hit."""

    kind: str  # "journal" | "turn"
    path: str
    heading: str
    start_line: int
    session_id: str = ""
    turn_id: str = ""
    ts: float = 0.0
    role: str = ""
    snippet: str = ""
    source: str = ""  # a turn's assistant or app (`Turn.source`)


class Hit(msgspec.Struct, frozen=True):
    """A search result with its provenance: what a feature finds and what `search` answers
    (the socket's hit is this type)."""

    kind: str  # "section" | "turn"
    path: str
    heading: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    text: str = ""
    file_kind: str = ""
    session_id: str = ""
    turn_id: str = ""
    ts: float = 0.0
    session_title: str = ""
    role: str = ""
    archived: bool = False
    # With recall by meaning on: the rankings that found it ("fts", "fts:bridged", "vector");
    # unset otherwise (none given is unset: the answer leaves the field out). Lists, not
    # tuples: a hit is the message itself, and a message's plain form holds lists.
    found_by: list[str] | msgspec.UnsetType = msgspec.UNSET
    source: str = ""  # a turn's assistant or app (`Turn.source`)
    items: list[str] = []  # a section's list items that matched the query, as text
    sources: list[HitSource] = []  # journal lines and turns that said it too

    def __post_init__(self) -> None:
        if not self.found_by:
            msgspec.structs.force_setattr(self, "found_by", msgspec.UNSET)


@dataclass(frozen=True, slots=True)
class Turn:
    """One normalised conversation turn, whatever log format it came from.

    `ts` is epoch seconds (UTC); `turn_id` is the idempotency key within a session.
    """

    source: str  # "claude-code" | "jsonl" | "openai" | "chatgpt" | "ingest" | "locomo"
    session_id: str
    turn_id: str
    role: str  # "user" | "assistant"
    text: str
    ts: float
    source_path: str = ""
    agent_id: str = ""
    project: str = ""
    session_title: str = ""
    parent_id: str = ""
    line: int = 0
    part_id: str = ""  # one log record of a turn split over several records (Claude Code)
    speaker: str = ""  # the participant's name when the log gives one (OpenAI `name`)


@dataclass(frozen=True, slots=True)
class ExtractedMemory:
    """A standalone fact proposed by an extractor (LLM or rules)."""

    content: str
    type: str  # one of MEMORY_TYPES
    importance: int  # 1..10
    source_turn_ids: tuple[str, ...] = ()
    subject: str = ""  # supersession key, e.g. "employer", "city", "tool:testing"
    topic: str = ""  # for knowledge/decision/project: the topic file slug
    due: str = ""  # for tasks: ISO date


class JobOutcome(enum.StrEnum):
    """How one run of a scheduled job ended."""

    SUCCESS = "success"
    NOTHING_TO_DO = "nothing_to_do"
    RETRY_LATER = "retry_later"
    CONFIG_ERROR = "config_error"
    BUDGET_EXHAUSTED = "budget_exhausted"
    DEFERRED = "deferred"  # battery/load
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Recovery:
    """A damaged index that was moved aside (`status` → `recovered`)."""

    at: float
    moved_to: str
    reason: str


class JobResult(msgspec.Struct, frozen=True):
    """What one job run did: `run_job`'s answer as the job made it, and what `status` and the
    job history keep of it."""

    job: str
    outcome: JobOutcome
    message: str = ""
    counts: dict[str, int] = {}
