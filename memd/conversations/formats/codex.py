"""Codex CLI rollouts: ``<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``, appended
live, one record per line (format as observed: docs/conversations.md, "Codex CLI").

Two layouts:

- wrapped (Codex CLI since late 2025): ``{"timestamp", "type", "payload"}`` (``ordinal`` in newer
  ones) with types ``session_meta`` (the session id and ``cwd``), ``response_item`` (messages,
  reasoning, tool calls and their output), ``event_msg`` (``user_message``/``agent_message``, later
  ``item_completed``, ``token_count``, …), ``turn_context``, ``world_state``, ``compacted``,
  ``token_usage_record``;
- bare (mid 2025): a header line ``{"id", "timestamp", "instructions", "cwd"?, "git"?}``, then
  ``{"record_type": "state"}`` markers and the response items themselves, without a time.

What was said is read from the ``message`` response items only: the user's text is also written as
an event (``user_message``, later ``item_completed`` with a ``UserMessage``), which is skipped so it
is stored once. Developer messages, reasoning (encrypted or summarised), tool calls and their
output are never said; so are the parts Codex injects into user messages — the instructions of
AGENTS.md files (``# AGENTS.md instructions``, ``<user_instructions>``), ``<environment_context>``
and other harness wrappers.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.fields import load_object, parse_ts, sha1_json
from memd.core.errors import ParseError, UnknownRecord
from memd.core.models import Turn
from memd.core.redact import join_redacted

SOURCE = "codex"
HEAD_BYTES = 1 << 20  # the header line holds the base instructions: tens of KB

# Text Codex puts into user messages that the user did not type.
_INJECTED_PREFIXES = (
    "# AGENTS.md instructions",
    "<user_instructions>",
    "<environment_context>",
    "<INSTRUCTIONS>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skills_instructions>",
    "<collaboration_mode>",
    "<permissions instructions>",
    "<subagent_notification>",
)
_ROLLOUT_ID = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl\Z", re.IGNORECASE
)
# Wrapped record types known not to hold what was said; any other is reported (a newer Codex
# may have moved the conversation into it).
_OTHER_TYPES = frozenset(
    {"event_msg", "turn_context", "world_state", "compacted", "token_usage_record", "session_meta"}
)


def describe(path: str) -> Facts:
    """The session id, working folder and start time of a rollout, from its first line (and its
    name when the line does not say)."""
    found = _ROLLOUT_ID.search(os.path.basename(path))
    session = found.group(1) if found else ""
    try:
        with open(path, "rb") as f:
            first = f.readline(HEAD_BYTES)
        head = json.loads(first) if first.endswith(b"\n") else {}
    except (OSError, ValueError):
        head = {}
    if not isinstance(head, dict):
        head = {}
    meta = head.get("payload") if head.get("type") == "session_meta" else head
    if not isinstance(meta, dict):
        return Facts(session_id=session)
    sid, cwd, ts = meta.get("id"), meta.get("cwd"), meta.get("timestamp") or head.get("timestamp")
    try:
        started = parse_ts(ts, path=path, lineno=1, required=False)
    except ParseError:
        started = 0.0
    return Facts(
        session_id=sid if isinstance(sid, str) and sid else session,
        project=cwd if isinstance(cwd, str) else "",
        started=started,
    )


def parse_line(raw: bytes, ctx: FileContext) -> list[Turn]:
    """One rollout line → the user's or the assistant's words in it (zero or one `Turn`).

    Raises `ParseError` for a line that is not a JSON object or a message without its parts, and
    `UnknownRecord` for a wrapped record of a type Codex did not write when this was written.
    """
    obj = load_object(raw, path=ctx.path, lineno=ctx.lineno)
    if obj is None:
        return []
    kind = obj.get("type")
    if kind == "response_item":
        item, ts_value = obj.get("payload"), obj.get("timestamp")
    elif "payload" not in obj:  # the bare layout: the header, state markers, bare items
        item, ts_value = obj, obj.get("timestamp")
    elif kind in _OTHER_TYPES:
        return []
    else:
        raise UnknownRecord(f"unknown record type {kind!r} (a newer Codex CLI?): skipped",
                            path=ctx.path, line=ctx.lineno)  # fmt: skip
    if not isinstance(item, dict) or item.get("type") != "message":
        return []
    role = item.get("role")
    if role not in ("user", "assistant"):
        return []  # developer and system messages: the harness speaking
    content = item.get("content")
    if not isinstance(content, list):
        raise ParseError(
            "a message without a list of content parts", path=ctx.path, line=ctx.lineno
        )
    text = _said(content, role)
    if not text:
        return []
    ts = parse_ts(ts_value, path=ctx.path, lineno=ctx.lineno, required=False) or ctx.facts.started
    session = ctx.facts.session_id or _session_of(ctx.path)
    if not session:
        raise ParseError("no session id (no session_meta line, no id in the file name)",
                         path=ctx.path, line=ctx.lineno)  # fmt: skip
    mid = item.get("id")
    turn_id = mid if isinstance(mid, str) and mid else sha1_json([role, ts_value, text])
    return [
        Turn(
            source=SOURCE, session_id=session, turn_id=turn_id, role=role, text=text, ts=ts,
            source_path=ctx.path, agent_id=SOURCE, project=ctx.facts.project, line=ctx.lineno,
        )
    ]  # fmt: skip


def _said(content: list[Any], role: str) -> str:
    wanted = "input_text" if role == "user" else "output_text"
    pieces = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in (wanted, "text"):
            continue  # images, files, refusals
        text = part.get("text")
        if not isinstance(text, str):
            continue
        text = text.strip()
        if role == "user" and text.startswith(_INJECTED_PREFIXES):
            continue
        if text:
            pieces.append(text)
    return join_redacted(pieces, "\n\n")


def _session_of(path: str) -> str:
    found = _ROLLOUT_ID.search(os.path.basename(path))
    return found.group(1) if found else ""
