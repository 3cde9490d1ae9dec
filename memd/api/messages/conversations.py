"""Messages of the conversation methods: `ingest`, `recall`, `forget_conversation`, `import`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from memd.api.messages.base import Limit, Params, Result, check_path


class IngestParams(Params, frozen=True, kw_only=True):
    """Turns in the generic JSONL shape: a list in `turns`, or one turn as the params itself.

    The turns' fields are checked by the generic JSONL parser, which names the turn and field.
    """

    turns: list[Any] | UnsetType = UNSET
    # The same request sent again (a retry after a timeout) stores nothing twice: turns without
    # an id get one from the request id and their place in the request.
    request_id: str | UnsetType = UNSET
    session_id: Any = UNSET
    role: Any = UNSET
    content: Any = UNSET
    ts: Any = UNSET
    id: Any = UNSET
    agent_id: Any = UNSET
    project: Any = UNSET
    title: Any = UNSET
    name: Any = UNSET


class IngestResult(Result, kw_only=True):
    enabled: bool
    accepted: int
    added: int
    updated: int | UnsetType = UNSET  # not counted when memory is off
    sessions: list[str]


class RecallParams(Params, frozen=True, kw_only=True):
    mode: Literal["", "sessions", "topic", "session", "within"] = ""
    query: str = ""
    session_id: str = ""
    limit: Limit = 20
    per_session: Annotated[int, Meta(ge=1, le=100)] = 5
    project: str = ""
    agent_id: str = ""
    source: str = ""  # only turns from this assistant's logs ("codex", "gemini", …)


class RecalledTurn(Struct, kw_only=True):
    """A past turn as `recall` shows it: its session, who said it, when (`date` as text), its
    score and where it was read from."""

    session_id: str
    turn_id: str
    role: str
    speaker: str
    text: str
    ts: float
    date: str
    score: float
    source: str
    source_path: str
    line: int
    session_title: str
    # With recall by meaning on: the rankings that found it ("fts", "vector").
    found_by: list[str] | UnsetType = UNSET


class RecalledSession(Struct, kw_only=True):
    """A past session as `recall` shows it; `score` (topic) and `turns` (topic, session and
    within) are set by the modes that rank or list turns."""

    session_id: str
    title: str
    summary: str
    summary_kind: str
    source: str
    source_path: str
    agent_id: str
    project: str
    started_at: float
    updated_at: float
    date: str
    turn_count: int
    score: float | UnsetType = UNSET
    turns: list[RecalledTurn] | UnsetType = UNSET


class RecallResult(Result, kw_only=True):
    mode: str
    query: str
    session_id: str
    terms: list[str]
    sessions: list[RecalledSession]
    text: str


class ForgetConversationParams(Params, frozen=True, kw_only=True):
    """A session (its id, or the short id the journal prints) or some of its turns."""

    session_id: str = ""
    turn_ids: list[str] = []
    confirm: bool = False  # without it, only say what would be removed


class ForgetConversationResult(Result, kw_only=True):
    session_id: str
    title: str
    turn_ids: list[str]
    whole_session: bool
    removed: bool
    journal_entries: int = 0


class LogsImported(Struct, kw_only=True):
    """What `import` of conversation logs (transcripts, a log file) added."""

    format: str
    files: int
    lines: int
    added: int
    bad_lines: int
    sessions: int


class ChatGPTImported(Struct, kw_only=True):
    """What `import` of a ChatGPT export added (only the visible branch of each conversation)."""

    format: str
    files: int
    conversations: int
    turns: int
    added: int
    updated: int
    sessions: int
    skipped: dict[str, int]  # what was not imported, by why


class ImportParams(Params, frozen=True, kw_only=True):
    path: str = ""
    format: Literal["", "memd", "chatgpt", "claude-code", "jsonl", "openai"] = ""

    def __post_init__(self) -> None:
        check_path(self.path, "path")
