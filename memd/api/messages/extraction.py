"""Messages of the extraction feature: `relationship` (what memd knows of the user's
relationship with an agent) and `extraction_progress` (how far extraction read a session)."""

from __future__ import annotations

from msgspec import Struct

from memd.api.messages.base import Params, Result


class RelationshipParams(Params, frozen=True, kw_only=True):
    agent_id: str = ""


class MemoryPoint(Struct, kw_only=True):
    """A memory point: how the user wants this agent to work with them (a live list item)."""

    text: str
    id: str
    line: int
    meta: dict[str, str]


class RelationshipResult(Result, kw_only=True):
    """An agent's relationship: counts and familiarity computed from the conversations now;
    trust, mood and memory points as its `relationship.md` says them (`trust` null when the
    file has no trust value memd can read, `trust_text` then says what it has)."""

    agent_id: str
    path: str
    exists: bool
    subagent: bool
    sessions: int
    turns: int
    first_at: float | None
    last_at: float | None
    familiarity: int
    trust: int | None
    trust_text: str
    mood: str
    mood_note: str
    points: list[MemoryPoint]


class ExtractionProgressParams(Params, frozen=True, kw_only=True):
    session_id: str = ""


class ExtractionProgressResult(Result, kw_only=True):
    """How far the `extract` job read one session: `read` of its `turns` (the turns after
    them wait for the next run). `found` is false when no session has this id."""

    session_id: str
    found: bool
    turns: int
    read: int
