"""OpenAI `{"messages": [...], "id"?, "title"?}` JSONL: one conversation per line."""

from __future__ import annotations

import hashlib
from typing import Any

from memd.conversations.formats.fields import ROLES, id_field, parse_ts, parts_text, str_field
from memd.core.errors import ParseError
from memd.core.models import Turn


def parse_openai_conversation(
    obj: dict[str, Any], raw: bytes, *, path: str, lineno: int
) -> list[Turn]:
    """The turns of one OpenAI `{"messages": [...]}` line (`raw`, decoded as `obj`)."""
    messages = obj["messages"]
    if not isinstance(messages, list):
        raise ParseError('"messages" must be an array', path=path, line=lineno, field="messages")
    session_id = id_field(obj, "id", path=path, lineno=lineno, required=False)
    if not session_id:
        session_id = hashlib.sha1(raw.strip()).hexdigest()
    title = str_field(obj, "title", path=path, lineno=lineno)
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
        if role not in ROLES:
            continue
        # An assistant message that only calls tools has "content": null.
        text = parts_text(
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
                ts=parse_ts(
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
