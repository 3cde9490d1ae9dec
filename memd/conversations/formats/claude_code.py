"""Claude Code session transcripts: one JSON record per line (`parse_claude_code_line`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeAlias

from memd.conversations.formats.fields import ROLES, load_object, parse_ts
from memd.core.errors import ParseError
from memd.core.models import Turn
from memd.core.redact import join_redacted


@dataclass(frozen=True, slots=True)
class SessionTitle:
    """A Claude Code `summary` record: a title for the session that ends at `leaf_id`.

    Claude Code can write summaries of *other* sessions into a file, so the store
    applies the title only if a record with uuid `leaf_id` exists in the same file.
    """

    session_id: str
    title: str
    leaf_id: str
    source_path: str
    line: int


@dataclass(frozen=True, slots=True)
class SubagentTurn:
    """A turn of a Claude Code sub-agent run (a sidechain record), counted without its text.

    Its "user" turns are the main agent's instructions, not the user's words, so they are not
    stored as conversation: only that the run happened (`run_id` is the record's `agentId`),
    within which session, when, and by which kind of agent (`agent_type`, from the run's
    `.meta.json`, filled in by the reader of the file).
    """

    session_id: str
    run_id: str
    turn_id: str
    role: str
    ts: float
    agent_type: str = ""


Record: TypeAlias = Turn | SessionTitle | SubagentTurn


# The agent of a Claude Code session's own turns (its sub-agents are `claude-code-<type>`).
CLAUDE_CODE_AGENT = "claude-code"


# Claude Code writes slash-command invocations, their output, bash-mode input/output and
# harness notices into user records. They are not what the human said.
_WRAPPER_TAGS = (
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "task-notification",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "system-reminder",
    "user-prompt-submit-hook",
)


_TAG_ALTERNATION = "|".join(re.escape(t) for t in _WRAPPER_TAGS)


_WRAPPER_SPAN = re.compile(rf"<({_TAG_ALTERNATION})>.*?</\1>", re.DOTALL)


_WRAPPER_OPEN = re.compile(rf"\s*<(?:{_TAG_ALTERNATION})>")


def parse_claude_code_line(
    raw: bytes, *, path: str, lineno: int, session_hint: str = ""
) -> list[Record]:
    """Parse one line of a Claude Code transcript into zero or one records.

    Returns `[Turn]` (agent `claude-code`) for a human prompt or a line of assistant text,
    `[SessionTitle]` for a `summary` record, `[SubagentTurn]` for the same in a sidechain
    record with an `agentId` (a sub-agent run), and `[]` for everything that is not
    conversation (tool results, thinking, tool calls, meta records, command wrappers, unknown
    record types, blank lines). An assistant message streamed over several lines yields one
    `Turn` per line that has text; they share `turn_id` (the API `message.id`) and differ in
    `part_id` (the record `uuid`).

    `session_hint` (usually the file stem) is the session id for records without
    `sessionId`. Raises `ParseError` if the line is not a JSON object, or a
    user/assistant record lacks its `uuid`, `message`, `timestamp` or session id.
    """
    obj = load_object(raw, path=path, lineno=lineno)
    if obj is None:
        return []
    kind = obj.get("type")
    if kind == "summary":
        title = _summary(obj, path=path, lineno=lineno, session_hint=session_hint)
        return [title] if title is not None else []
    if kind not in ROLES:
        return []
    if obj.get("isMeta") is True:
        return []
    run_id = obj.get("agentId", "") if obj.get("isSidechain") is True else None
    if run_id is not None and (not isinstance(run_id, str) or not run_id):
        return []  # a sidechain record that names no run cannot be counted for anyone
    # Not written by the human or the model: the context summary Claude Code injects
    # after /compact, and the synthetic assistant records that report API errors.
    if obj.get("isCompactSummary") is True or obj.get("isApiErrorMessage") is True:
        return []

    uuid = obj.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        raise ParseError(f"{kind} record without a uuid", path=path, line=lineno)
    message = obj.get("message")
    if not isinstance(message, dict):
        raise ParseError(f"{kind} record {uuid} has no message object", path=path, line=lineno)
    session_id = obj.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        session_id = session_hint
    if not session_id:
        raise ParseError(
            f"{kind} record {uuid} has no sessionId and no session hint was given",
            path=path,
            line=lineno,
        )

    if kind == "user":
        text = _claude_user_text(message.get("content"))
        turn_id = uuid
    else:
        text = _claude_assistant_text(message.get("content"))
        message_id = message.get("id")
        turn_id = message_id if isinstance(message_id, str) and message_id else uuid
    if not text:
        return []

    ts = parse_ts(obj.get("timestamp"), path=path, lineno=lineno, required=True, field="timestamp")
    if run_id is not None:
        return [SubagentTurn(session_id, run_id, turn_id, kind, ts)]
    parent = obj.get("parentUuid")
    cwd = obj.get("cwd")
    return [
        Turn(
            source="claude-code",
            session_id=session_id,
            turn_id=turn_id,
            role=kind,
            text=text,
            ts=ts,
            source_path=path,
            agent_id=CLAUDE_CODE_AGENT,
            project=cwd if isinstance(cwd, str) else "",
            parent_id=parent if isinstance(parent, str) else "",
            line=lineno,
            part_id=uuid,
        )
    ]


def _summary(
    obj: dict[str, Any], *, path: str, lineno: int, session_hint: str
) -> SessionTitle | None:
    title = obj.get("summary")
    leaf = obj.get("leafUuid")
    if not isinstance(title, str) or not title.strip() or not isinstance(leaf, str) or not leaf:
        return None
    session_id = obj.get("sessionId")
    return SessionTitle(
        session_id=session_id if isinstance(session_id, str) and session_id else session_hint,
        title=title.strip(),
        leaf_id=leaf,
        source_path=path,
        line=lineno,
    )


def _claude_user_text(content: Any) -> str:
    if isinstance(content, str):
        return _strip_wrappers(content)
    if not isinstance(content, list):
        return ""
    # Only `text` blocks are the human's words; tool_result and image blocks are dropped.
    pieces = [_strip_wrappers(text) for text in _text_blocks(content)]
    return join_redacted([p for p in pieces if p], "\n\n")


def _claude_assistant_text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    pieces = [text.strip() for text in _text_blocks(content)]
    return join_redacted([p for p in pieces if p], "\n\n")


def _text_blocks(content: list[Any]) -> list[str]:
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def _strip_wrappers(text: str) -> str:
    """Remove Claude Code harness wrappers; an unclosed leading wrapper drops the whole text."""
    rest = _WRAPPER_SPAN.sub("", text).strip()
    return "" if _WRAPPER_OPEN.match(rest) else rest
