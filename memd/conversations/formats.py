"""Conversation log formats normalised into `memd.core.models.Turn`. Pure: bytes in, values out.

Formats (see docs/ecosystem-notes.md §1):

- Claude Code session transcripts, one JSON record per line (`parse_claude_code_line`).
- Generic JSONL, one message per line, and OpenAI `{"messages": [...]}` JSONL, one
  conversation per line (`parse_jsonl_line`).
- The ChatGPT data export `conversations.json` (`parse_chatgpt_export`).

Every turn id is derived from the log itself, never from the time of reading, so
re-reading a file yields the same ids and the store can upsert without duplicates.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeAlias

import orjson

from memd.core.errors import ParseError
from memd.core.models import Turn
from memd.core.redact import join_redacted

__all__ = [
    "CLAUDE_CODE_AGENT",
    "ChatGPTImport",
    "Record",
    "SessionTitle",
    "SubagentTurn",
    "parse_chatgpt_export",
    "parse_claude_code_line",
    "parse_jsonl_line",
]


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


@dataclass(frozen=True, slots=True)
class ChatGPTImport:
    """The result of reading a ChatGPT export.

    `conversations` counts the conversations that were read; `skipped` counts the
    messages (and malformed conversations) left out, by reason.
    """

    turns: list[Turn]
    conversations: int
    skipped: dict[str, int] = field(default_factory=dict)


_ROLES = ("user", "assistant")

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

# Epoch numbers are read by magnitude: below 1e11 seconds (the year 5138), below 1e14
# milliseconds, below 1e17 microseconds, below 1e20 nanoseconds. Times must fall between the
# epoch and the end of the year 9999, the range every date function can show.
_EPOCH_UNITS = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6), (1e20, 1e9))
MAX_TS = 253402300799.0
_TS_HELP = "epoch seconds, milliseconds, microseconds or nanoseconds, or an ISO-8601 string"


# --------------------------------------------------------------------------- Claude Code


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
    obj = _load_object(raw, path=path, lineno=lineno)
    if obj is None:
        return []
    kind = obj.get("type")
    if kind == "summary":
        title = _summary(obj, path=path, lineno=lineno, session_hint=session_hint)
        return [title] if title is not None else []
    if kind not in _ROLES:
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

    ts = _parse_ts(obj.get("timestamp"), path=path, lineno=lineno, required=True, field="timestamp")
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


# --------------------------------------------------------------------------- generic / OpenAI JSONL


def parse_jsonl_line(raw: bytes, *, path: str, lineno: int) -> list[Turn]:
    """Parse one line of a generic chat JSONL file or an OpenAI `messages` JSONL file.

    Generic lines are one message each:
    `{"session_id", "role", "content", "ts"?, "id"?, "agent_id"?, "project"?, "title"?, "name"?}`
    (`name`: who spoke, for logs of conversations between named people).
    `content` is a string or a list of `{"type": "text", "text": ...}` parts; `ts` is
    epoch seconds, epoch milliseconds or an ISO-8601 string (0.0 when absent, so the
    caller may substitute the file time). Without `id` the turn id is a sha1 of
    (session_id, role, ts or line number, text), stable across re-reads.

    OpenAI lines `{"messages": [...], "id"?, "title"?}` are one conversation each;
    the session id is the top-level `id` or a sha1 of the line, and turn ids are
    `f"{session_id}:{index}"` with `index` the position in `messages`.

    Roles other than user/assistant, and messages without text, yield no turn.
    Raises `ParseError` for invalid JSON and missing or ill-typed required fields.
    """
    obj = _load_object(raw, path=path, lineno=lineno)
    if obj is None:
        return []
    if "messages" in obj:
        return _openai_conversation(obj, raw, path=path, lineno=lineno)
    return _generic_message(obj, path=path, lineno=lineno)


def _generic_message(obj: dict[str, Any], *, path: str, lineno: int) -> list[Turn]:
    session_id = _id_field(obj, "session_id", path=path, lineno=lineno, required=True)
    role = obj.get("role")
    if not isinstance(role, str) or not role:
        raise ParseError('missing or non-string "role"', path=path, line=lineno, field="role")
    if role not in _ROLES:
        return []
    if obj.get("content") is None:
        raise ParseError('missing "content"', path=path, line=lineno, field="content")
    text = _parts_text(obj["content"], what='"content"', path=path, lineno=lineno)
    agent_id = _str_field(obj, "agent_id", path=path, lineno=lineno)
    project = _str_field(obj, "project", path=path, lineno=lineno)
    title = _str_field(obj, "title", path=path, lineno=lineno)
    speaker = _str_field(obj, "name", path=path, lineno=lineno)
    ts = _parse_ts(obj.get("ts"), path=path, lineno=lineno, required=False, field="ts")
    turn_id = _id_field(obj, "id", path=path, lineno=lineno, required=False)
    if not text:
        return []
    if not turn_id:
        position = repr(ts) if obj.get("ts") is not None else f"line:{lineno}"
        turn_id = _sha1_json([session_id, role, position, text])
    return [
        Turn(
            source="jsonl",
            session_id=session_id,
            turn_id=turn_id,
            role=role,
            text=text,
            ts=ts,
            source_path=path,
            agent_id=agent_id,
            project=project,
            session_title=title,
            line=lineno,
            speaker=speaker,
        )
    ]


def _openai_conversation(obj: dict[str, Any], raw: bytes, *, path: str, lineno: int) -> list[Turn]:
    messages = obj["messages"]
    if not isinstance(messages, list):
        raise ParseError('"messages" must be an array', path=path, line=lineno, field="messages")
    session_id = _id_field(obj, "id", path=path, lineno=lineno, required=False)
    if not session_id:
        session_id = hashlib.sha1(raw.strip()).hexdigest()
    title = _str_field(obj, "title", path=path, lineno=lineno)
    turns: list[Turn] = []
    parent = ""
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ParseError(
                f"messages[{index}] is not an object", path=path, line=lineno, field="messages"
            )
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise ParseError(
                f'messages[{index}] has no "role"',
                path=path,
                line=lineno,
                field=f"messages[{index}].role",
            )
        if role not in _ROLES:
            continue
        # An assistant message that only calls tools has "content": null.
        text = _parts_text(
            message.get("content"), what=f"messages[{index}].content", path=path, lineno=lineno
        )
        if not text:
            continue
        key = "timestamp" if "timestamp" in message else "ts"
        name = message.get("name")
        turn_id = f"{session_id}:{index}"
        turns.append(
            Turn(
                source="openai",
                session_id=session_id,
                turn_id=turn_id,
                role=role,
                text=text,
                ts=_parse_ts(
                    message.get(key),
                    path=path,
                    lineno=lineno,
                    required=False,
                    field=f"messages[{index}].{key}",
                ),  # fmt: skip
                source_path=path,
                session_title=title,
                parent_id=parent,
                line=lineno,
                speaker=name if isinstance(name, str) else "",
            )
        )
        parent = turn_id
    return turns


def _parts_text(content: Any, *, what: str, path: str, lineno: int) -> str:
    """Text of a string or a list of content parts; non-text parts are ignored."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part.strip())
            elif (
                isinstance(part, dict)
                and part.get("type") in ("text", "input_text", "output_text")
                and isinstance(part.get("text"), str)
            ):
                pieces.append(part["text"].strip())
        return join_redacted([p for p in pieces if p], "\n\n")
    raise ParseError(
        f"{what} must be a string or an array of parts, got {_json_type(content)}",
        path=path,
        line=lineno,
        field=what.strip('"'),
    )


# --------------------------------------------------------------------------- ChatGPT export


def parse_chatgpt_export(data: bytes | str | list[Any], *, path: str = "") -> ChatGPTImport:
    """Read a ChatGPT `conversations.json` (raw bytes/text or the decoded array).

    For each conversation only the visible branch is kept: the path from
    `current_node` up through `parent`, reversed (regenerated and edited branches
    are ignored). System and tool messages, assistant messages addressed to a tool,
    and messages without text are skipped and counted in `skipped`; a conversation
    without an id or a usable `mapping` is counted as `malformed_conversation`.
    `path` is recorded as each turn's `source_path`. Raises `ParseError` if the
    data is not a JSON array.
    """
    if isinstance(data, bytes | str):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ParseError(f"not valid JSON: {exc}", path=path) from exc
    if not isinstance(data, list):
        raise ParseError(
            f"a ChatGPT export is a JSON array of conversations, got {_json_type(data)}",
            path=path,
        )
    turns: list[Turn] = []
    skipped: dict[str, int] = {}
    conversations = 0
    for conv in data:
        path_nodes = _chatgpt_active_path(conv) if isinstance(conv, dict) else None
        if path_nodes is None:
            _count(skipped, "malformed_conversation")
            continue
        conversations += 1
        turns.extend(_chatgpt_turns(conv, path_nodes, skipped, path=path))
    return ChatGPTImport(turns=turns, conversations=conversations, skipped=skipped)


def _chatgpt_active_path(conv: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The mapping nodes from the root to the active leaf, or None if the shape is unusable."""
    session_id = conv.get("id") or conv.get("conversation_id")
    mapping = conv.get("mapping")
    if not isinstance(session_id, str) or not session_id or not isinstance(mapping, dict):
        return None
    leaf = conv.get("current_node")
    if leaf is None:
        leaf = _latest_leaf(mapping)
    if not isinstance(leaf, str) or leaf not in mapping:
        return None
    nodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = leaf
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        nodes.append(node)
        node_id = node.get("parent")
    nodes.reverse()
    return nodes


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    """Old exports may lack `current_node`: take the childless node with the newest message."""
    best: tuple[float, str] | None = None
    for node_id, node in mapping.items():
        if not isinstance(node, dict) or node.get("children"):
            continue
        message = node.get("message")
        created = message.get("create_time") if isinstance(message, dict) else None
        key = (_as_number(created) or 0.0, node_id)
        if best is None or key > best:
            best = key
    return best[1] if best is not None else None


def _chatgpt_turns(
    conv: dict[str, Any], nodes: list[dict[str, Any]], skipped: dict[str, int], *, path: str
) -> list[Turn]:
    session_id = str(conv.get("id") or conv.get("conversation_id"))
    title = conv.get("title") if isinstance(conv.get("title"), str) else ""
    fallback_ts = _epoch_or_none(conv.get("create_time")) or 0.0
    turns: list[Turn] = []
    parent = ""
    for node in nodes:
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        if role in ("system", "tool"):
            _count(skipped, str(role))
            continue
        if role not in _ROLES:
            _count(skipped, "unknown_role")
            continue
        recipient = message.get("recipient")
        if role == "assistant" and recipient not in (None, "all"):
            # A call to a tool (browser, python, dalle, ...), not words to the user.
            _count(skipped, "tool_call")
            continue
        text = _chatgpt_text(message.get("content"))
        if text is None:
            _count(skipped, "unsupported_content")
            continue
        if not text:
            _count(skipped, "empty")
            continue
        turn_id = message.get("id") or node.get("id")
        if not isinstance(turn_id, str) or not turn_id:
            _count(skipped, "malformed")
            continue
        created = _epoch_or_none(message.get("create_time"))
        turns.append(
            Turn(
                source="chatgpt",
                session_id=session_id,
                turn_id=turn_id,
                role=str(role),
                text=text,
                ts=created if created is not None else fallback_ts,
                source_path=path,
                session_title=str(title),
                parent_id=parent,
            )
        )
        parent = turn_id
    return turns


def _chatgpt_text(content: Any) -> str | None:
    """The message text; None when the content type carries no text we can use."""
    if not isinstance(content, dict):
        return None
    kind = content.get("content_type")
    parts = content.get("parts")
    if kind == "multimodal_text" and isinstance(parts, list):
        pieces = []
        for part in parts:
            if isinstance(part, str):
                pieces.append(part.strip())
            elif isinstance(part, dict):
                pieces.append(_attachment_placeholder(part))
        return join_redacted([p for p in pieces if p], "\n")
    if isinstance(parts, list) and any(isinstance(p, str) for p in parts):
        return join_redacted([p.strip() for p in parts if isinstance(p, str) and p.strip()], "\n")
    if kind == "text":
        return "" if isinstance(parts, list) else None
    text = content.get("text")
    if isinstance(text, str):
        return text.strip()
    return None


def _attachment_placeholder(part: dict[str, Any]) -> str:
    text = part.get("text")
    if isinstance(text, str) and text.strip():
        return text.strip()
    kind = part.get("content_type")
    if not isinstance(kind, str) or "image" in kind:
        return "[image]"
    if "audio" in kind:
        return "[audio]"
    if "video" in kind:
        return "[video]"
    return "[attachment]"


def _count(skipped: dict[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1


# --------------------------------------------------------------------------- shared helpers


def _load_object(raw: bytes, *, path: str, lineno: int) -> dict[str, Any] | None:
    """The JSON object on a line; None for a blank line."""
    if not raw.strip():
        return None
    try:
        # orjson parses a log line ~5x faster than json. It refuses a BOM and reads integers
        # beyond 64 bits as floats (an integer id would change): such lines, and any it
        # rejects, go through json, which then decides (and words the error). Ids and
        # timestamps are top-level fields, so only those are checked.
        if raw.startswith(b"\xef\xbb\xbf"):
            raise orjson.JSONDecodeError("", "", 0)
        obj = orjson.loads(raw)
        if isinstance(obj, dict) and any(
            type(v) is float and abs(v) >= 2.0**63 for v in obj.values()
        ):
            raise orjson.JSONDecodeError("", "", 0)
    except orjson.JSONDecodeError:
        try:
            # Decoding first skips json.loads' encoding detection (a fifth of its time).
            obj = json.loads(raw.decode("utf-8-sig"))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
            raise ParseError(f"not valid JSON: {exc}", path=path, line=lineno) from exc
    if not isinstance(obj, dict):
        raise ParseError(f"expected a JSON object, got {_json_type(obj)}", path=path, line=lineno)
    return obj


def _parse_ts(
    value: Any, *, path: str, lineno: int, required: bool, field: str = "timestamp"
) -> float:
    """Epoch seconds (UTC) from an epoch number in any unit (`epoch_seconds`) or an ISO-8601
    string; 0.0 when absent and not `required`. The error names `field`."""
    if value is None or value == "":
        if required:
            raise ParseError(f'missing "{field}"', path=path, line=lineno, field=field)
        return 0.0
    number = _as_number(value)
    if number is None and isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is not None:
        seconds = epoch_seconds(number)
        if seconds is None:
            raise ParseError(f'"{field}": {value!r} is not a time from 1970 to 9999 ({_TS_HELP})',
                             path=path, line=lineno, field=field)  # fmt: skip
        return seconds
    if not isinstance(value, str):
        raise ParseError(f'"{field}" must be a time ({_TS_HELP}), got {_json_type(value)}',
                         path=path, line=lineno, field=field)  # fmt: skip
    seconds = _parse_iso(value.strip())
    if seconds is None or not 0 <= seconds <= MAX_TS:
        raise ParseError(f'"{field}": unreadable time {value!r} (expected {_TS_HELP}, from 1970 to 9999)',
                         path=path, line=lineno, field=field)  # fmt: skip
    return seconds


def epoch_seconds(number: float) -> float | None:
    """An epoch number in seconds, ms, µs or ns (told apart by magnitude) as seconds; None
    when it is not finite or falls outside 1970 to 9999."""
    if not math.isfinite(number) or number < 0:
        return None
    for limit, per_second in _EPOCH_UNITS:
        if number < limit:
            seconds = number / per_second
            return seconds if seconds <= MAX_TS else None
    return None


def _parse_iso(value: str) -> float | None:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, ValueError):
        return None


def _epoch_or_none(value: Any) -> float | None:
    """An epoch number as seconds (`epoch_seconds`); None when it is not one."""
    number = _as_number(value)
    return None if number is None else epoch_seconds(number)


def _as_number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer of hundreds of digits
            return math.inf if value > 0 else -math.inf
    return None


def _id_field(obj: dict[str, Any], key: str, *, path: str, lineno: int, required: bool) -> str:
    value = obj.get(key)
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None or value == "":
        if required:
            raise ParseError(f'missing "{key}"', path=path, line=lineno, field=key)
        return ""
    raise ParseError(
        f'"{key}" must be a string or an integer, got {_json_type(value)}',
        path=path, line=lineno, field=key,
    )  # fmt: skip


def _str_field(obj: dict[str, Any], key: str, *, path: str, lineno: int) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise ParseError(
        f'"{key}" must be a string, got {_json_type(value)}', path=path, line=lineno, field=key
    )


def _sha1_json(values: list[Any]) -> str:
    encoded = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(encoded.encode("utf-8")).hexdigest()


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
