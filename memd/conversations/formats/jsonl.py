"""Generic chat JSONL, one message per line, and the line-shape check that sends an OpenAI
`{"messages": [...]}` line to `memd.conversations.formats.openai` (`parse_jsonl_line`)."""

from __future__ import annotations

from typing import Any

from memd.conversations.formats.fields import (
    ROLES,
    id_field,
    load_object,
    parse_ts,
    parts_text,
    sha1_json,
    str_field,
)
from memd.conversations.formats.openai import parse_openai_conversation
from memd.core.errors import ParseError
from memd.core.models import Turn


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
    obj = load_object(raw, path=path, lineno=lineno)
    if obj is None:
        return []
    if "messages" in obj:
        return parse_openai_conversation(obj, raw, path=path, lineno=lineno)
    return _generic_message(obj, path=path, lineno=lineno)


def _generic_message(obj: dict[str, Any], *, path: str, lineno: int) -> list[Turn]:
    session_id = id_field(obj, "session_id", path=path, lineno=lineno, required=True)
    role = obj.get("role")
    if not isinstance(role, str) or not role:
        raise ParseError('missing or non-string "role"', path=path, line=lineno, field="role")
    if role not in ROLES:
        return []
    if obj.get("content") is None:
        raise ParseError('missing "content"', path=path, line=lineno, field="content")
    text = parts_text(obj["content"], what='"content"', path=path, lineno=lineno)
    agent_id = str_field(obj, "agent_id", path=path, lineno=lineno)
    project = str_field(obj, "project", path=path, lineno=lineno)
    title = str_field(obj, "title", path=path, lineno=lineno)
    speaker = str_field(obj, "name", path=path, lineno=lineno)
    ts = parse_ts(obj.get("ts"), path=path, lineno=lineno, required=False, field="ts")
    turn_id = id_field(obj, "id", path=path, lineno=lineno, required=False)
    if not text:
        return []
    if not turn_id:
        position = repr(ts) if obj.get("ts") is not None else f"line:{lineno}"
        turn_id = sha1_json([session_id, role, position, text])
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
