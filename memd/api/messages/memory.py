"""Messages of the memory methods: `context`, `search`, `remember`, `forget`, `memories`,
`edit_item`, `set_enabled`."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from memd.api.messages.base import (
    Budget,
    Limit,
    NonNegative,
    Params,
    Result,
    Scope,
    check_path,
)
from memd.core.models import Hit


class ContextParams(Params, frozen=True, kw_only=True):
    query: str = ""
    budget_tokens: Budget | UnsetType = UNSET  # default: `context.budget_tokens` of the daemon
    agent_id: str = ""
    project: str = ""  # a workspace path or a project slug
    session_id: str = ""
    relevant_only: bool = False
    # `project` is a folder a person named (their shell's folder or `--project-path`, their
    # assistant session's folder): accepted outside the home too (memd's own folders never).
    # memd's MCP server never sets it for a project the model names: that one is held to the
    # home and `memory.workspaces`.
    trust_folder: bool = False
    source: str = ""  # past turns only from this assistant's logs ("codex", "gemini", …)

    def __post_init__(self) -> None:
        check_path(self.project, "project")


class Provenance(Struct, kw_only=True):
    """Where a context section comes from: a Markdown section, or a conversation."""

    path: str | UnsetType = UNSET
    rel: str | UnsetType = UNSET
    heading: str | UnsetType = UNSET
    start_line: int | UnsetType = UNSET
    end_line: int | UnsetType = UNSET
    truncated: bool | UnsetType = UNSET
    lines_kept: int | UnsetType = UNSET
    lines_total: int | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    source_path: str | UnsetType = UNSET
    turn_ids: list[str] | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    # With recall by meaning on: the rankings that found it ("fts", "fts:bridged", "vector").
    found_by: list[str] | UnsetType = UNSET


class ContextSection(Provenance, kw_only=True):
    tier: str
    source: str
    title: str
    tokens: int
    score: float
    reason: str


class DroppedSection(Provenance, kw_only=True):
    tier: str
    source: str
    title: str
    tokens: int
    reason: str


class TierQuotas(Struct, kw_only=True):
    """Tokens each tier may use in one `context` call by its own share of the budget."""

    user: int
    project: int
    conversation: int


class ContextResult(Result, kw_only=True):
    enabled: bool
    text: str
    tokens: int
    budget: int
    sections: list[ContextSection]
    dropped: list[DroppedSection]
    project: str | UnsetType = UNSET  # the resolved project slug; unset when memory is off
    # Always set by this daemon (all 0 when memory is off); unset in answers of older daemons.
    quotas: TierQuotas | UnsetType = UNSET


class SearchParams(Params, frozen=True, kw_only=True):
    query: str = ""
    limit: Limit = 10
    scope: Literal["all", "memory", "conversations"] = "all"
    # Filters of conversation turns.
    session_id: str = ""
    project: str = ""
    agent_id: str = ""
    source: str = ""  # the assistant whose logs held the turn ("claude-code", "codex", …)


class SearchResult(Result, kw_only=True):
    query: str
    hits: list[Hit]  # the library's hits as they are (`memd.core.models.Hit`)


class RememberParams(Params, frozen=True, kw_only=True):
    text: str = ""
    scope: Scope = "user"
    project: str = ""
    agent_id: str = ""
    type: str = ""
    # A client's id for this request: a retry with the same id gets the first answer back
    # (within one daemon run) instead of remembering again.
    request_id: Annotated[str, Meta(max_length=200)] = ""
    # `project` is a folder a person named (their shell's folder or `--project-path`, their
    # assistant session's folder): accepted outside the home too (memd's own folders never).
    # memd's MCP server never sets it for a project the model names: that one is held to the
    # home and `memory.workspaces`.
    trust_folder: bool = False

    def __post_init__(self) -> None:
        check_path(self.project, "project")


class RememberResult(Result, kw_only=True):
    id: str
    path: str
    line: int
    scope: str
    text: str
    existed: bool = False  # the same item was there already: its hits were bumped instead


class ForgetParams(Params, frozen=True, kw_only=True):
    id: str = ""
    query: str = ""
    confirm: bool = False


class MemoryItem(Struct, kw_only=True):
    id: str
    text: str
    path: str
    rel: str
    line: int
    type: str
    scope: str
    owner: str
    meta: dict[str, str]


class RemovedItem(Struct, kw_only=True):
    id: str
    text: str
    path: str


class ForgetResult(Result, kw_only=True):
    removed: list[RemovedItem]
    candidates: list[MemoryItem]


class MemoriesParams(Params, frozen=True, kw_only=True):
    scope: Literal["", "user", "project", "agent"] = ""
    all: bool = False  # include superseded items
    limit: NonNegative = 0  # at most this many items (0: all of them)
    offset: NonNegative = 0  # skip this many first (paging: offset += limit)


class AgentSeen(Struct, kw_only=True):
    """An agent seen in the conversations: its interactions, and the familiarity and trust last
    written to its relationship file (null before the first)."""

    agent_id: str
    subagent: bool  # only Claude Code sub-agent runs: the user never spoke to it
    sessions: int
    turns: int
    first_at: float
    last_at: float
    familiarity: int | None
    trust: int | None


class MemoriesResult(Result, kw_only=True):
    enabled: bool
    items: list[MemoryItem]
    agents: list[AgentSeen] | UnsetType = UNSET  # with scope "agent": every agent seen
    total: int = 0  # items in effect before `offset` and `limit`
    offset: int = 0


class MoveTo(Struct, frozen=True, kw_only=True):
    path: str  # a Markdown file relative to the memory root, e.g. "topics/vue.md"
    section: str = "Notes"

    def __post_init__(self) -> None:
        check_path(self.path, "move_to.path")


class EditItemParams(Params, frozen=True, kw_only=True):
    """`edit_item`: change one item in place; fields left out stay as they are."""

    id: str = ""
    expect_text: str | UnsetType = UNSET  # the text the caller showed: refuse if it changed
    text: str | UnsetType = UNSET
    importance: Annotated[int, Meta(ge=1, le=10)] | UnsetType = UNSET
    pinned: bool | UnsetType = UNSET
    expires: str | UnsetType = UNSET  # YYYY-MM-DD, or "" to clear
    move_to: MoveTo | UnsetType = UNSET


class EditItemResult(Result, kw_only=True):
    id: str
    path: str
    line: int
    text: str
    meta: dict[str, str]
    moved_from: str  # the file it left, or "" when it stayed


class SetEnabledParams(Params, frozen=True, kw_only=True):
    enabled: bool


class SetEnabledResult(Result, kw_only=True):
    enabled: bool
