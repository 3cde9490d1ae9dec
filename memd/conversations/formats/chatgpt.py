"""The ChatGPT data export, `conversations.json` (`parse_chatgpt_export`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memd.conversations.formats.fields import ROLES, as_number, epoch_or_none, json_type
from memd.core.errors import ParseError
from memd.core.models import Turn
from memd.core.redact import join_redacted


@dataclass(frozen=True, slots=True)
class ChatGPTImport:
    """The result of reading a ChatGPT export.

    `conversations` counts the conversations that were read; `skipped` counts the
    messages (and malformed conversations) left out, by reason.
    """

    turns: list[Turn]
    conversations: int
    skipped: dict[str, int] = field(default_factory=dict)


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
            f"a ChatGPT export is a JSON array of conversations, got {json_type(data)}",
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
        key = (as_number(created) or 0.0, node_id)
        if best is None or key > best:
            best = key
    return best[1] if best is not None else None


def _chatgpt_turns(
    conv: dict[str, Any], nodes: list[dict[str, Any]], skipped: dict[str, int], *, path: str
) -> list[Turn]:
    session_id = str(conv.get("id") or conv.get("conversation_id"))
    title = conv.get("title") if isinstance(conv.get("title"), str) else ""
    fallback_ts = epoch_or_none(conv.get("create_time")) or 0.0
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
        if role not in ROLES:
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
        created = epoch_or_none(message.get("create_time"))
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
