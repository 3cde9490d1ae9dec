"""Continue sessions: `~/.continue/sessions/<session id>.json` (`parse_continue_session`) and
the `sessions.json` index beside them (`continue_session_dates`).

A session file is one JSON object rewritten whole on every change:
`{sessionId, title, workspaceDirectory, history: [ChatHistoryItem], mode?, chatModelTitle?,
usage?}`. Each history item is `{message: {role, content, id?, toolCalls?}, contextItems,
editorState?, toolCallStates?, reasoning?, promptLogs?, conversationSummary?, ...}`:

- said: `user` and `assistant` messages, their `content` a string or parts (`text` parts read,
  `imageUrl` parts not);
- never said: `thinking`, `tool` and `system` messages, reasoning (`reasoning`, and reasoning
  tags left inline in an answer), tool calls and their output (`toolCallStates`), the files
  and other context attached to a message (`contextItems`), prompt logs and compaction
  summaries.

Messages carry no time: a turn's time is the session's creation (`dateCreated` in the index,
epoch milliseconds as a string), raised to a reasoning block's start when the item has one.
`workspaceDirectory` is a folder path or a `file://` URI.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any
from urllib.parse import unquote, urlparse

from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.document import ParsedDocument, load_json, strip_reasoning
from memd.conversations.formats.fields import epoch_or_none, json_type
from memd.core.models import Turn
from memd.core.redact import join_redacted

CONTINUE_SOURCE = "continue"
_UNTITLED = frozenset({"", "New Session"})


def parse_continue_session(
    data: bytes, *, path: str, session_hint: str = "", created: float = 0.0
) -> ParsedDocument:
    """The turns of one Continue session file (`data`).

    `session_hint` (the file's stem) names a session whose file lacks `sessionId`; `created`
    (epoch seconds, from `continue_session_dates`) is the time of its turns. Turn ids are the
    messages' `id` when they have one, else their place in `history`.
    """
    loaded = load_json(data)
    problems: list[tuple[int, str]] = [loaded.problem] if loaded.problem else []
    session = loaded.value
    if session is None:
        return ParsedDocument([], problems, complete=False)
    if not isinstance(session, dict) or not isinstance(session.get("history"), list):
        got = json_type(session) if not isinstance(session, dict) else "no history array"
        problems.append((0, f"expected a Continue session object with a history, got {got}"))
        return ParsedDocument([], problems)
    session_id = session.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        session_id = session_hint
    if not session_id:
        problems.append((0, "the session has no sessionId"))
        return ParsedDocument([], problems)
    base = Turn(
        source=CONTINUE_SOURCE,
        session_id=session_id,
        turn_id="",
        role="",
        text="",
        ts=created,
        source_path=path,
        agent_id=CONTINUE_SOURCE,
        project=workspace_path(session.get("workspaceDirectory")),
        session_title=_title(session.get("title")),
    )
    return ParsedDocument(_turns(session["history"], base, problems), problems)


def _turns(history: list[Any], base: Turn, problems: list[tuple[int, str]]) -> list[Turn]:
    turns: list[Turn] = []
    ts = base.ts
    bad: list[int] = []
    for index, item in enumerate(history):
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict):
            bad.append(index)
            continue
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        text = _content_text(message.get("content"))
        if role == "assistant":
            text = strip_reasoning(text)
        ts = max(ts, _reasoning_start(item))
        if not text:
            continue
        msg_id = message.get("id")
        turns.append(
            dataclasses.replace(
                base,
                turn_id=msg_id if isinstance(msg_id, str) and msg_id else str(index),
                role=role,
                text=text,
                ts=ts,
                parent_id=turns[-1].turn_id if turns else "",
                line=index + 1,
            )
        )
    if bad:
        problems.append((0, f"{len(bad)} history item(s) without a message: index {bad[:5]}"))
    return turns


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    pieces = [
        part["text"].strip()
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    ]
    return join_redacted([p for p in pieces if p], "\n\n")


def _reasoning_start(item: dict[str, Any]) -> float:
    reasoning = item.get("reasoning")
    start = reasoning.get("startAt") if isinstance(reasoning, dict) else None
    return epoch_or_none(start) or 0.0


def _title(title: Any) -> str:
    return title.strip() if isinstance(title, str) and title.strip() not in _UNTITLED else ""


def workspace_path(value: Any) -> str:
    """A Continue `workspaceDirectory` (a path or a `file://` URI) as a folder path."""
    if not isinstance(value, str) or not value:
        return ""
    if not value.startswith("file://"):
        return value
    parsed = urlparse(value)
    folder = unquote(parsed.path)
    # file:///c%3A/Users/x (VS Code on Windows): drop the slash before the drive letter.
    if len(folder) > 2 and folder[0] == "/" and folder[2] == ":":
        folder = folder[1:]
    return folder


def continue_session_dates(data: bytes) -> dict[str, float]:
    """Each session's creation time (epoch seconds) from a `sessions.json` index; an index that
    cannot be read gives none (the sessions are still read, dated by their files)."""
    index = load_json(data).value
    if not isinstance(index, list):
        return {}
    dates: dict[str, float] = {}
    for entry in index:
        if not isinstance(entry, dict) or not isinstance(entry.get("sessionId"), str):
            continue
        created = entry.get("dateCreated")
        try:
            number = float(created) if isinstance(created, str | int | float) else None
        except ValueError:
            number = None
        seconds = epoch_or_none(number)
        if seconds is not None:
            dates[entry["sessionId"]] = seconds
    return dates


INDEX_NAME = "sessions.json"


def parse_document(data: bytes, ctx: FileContext) -> ParsedDocument:
    """The reader's entry: a session file (the index itself holds no turns)."""
    if os.path.basename(ctx.path) == INDEX_NAME:
        return ParsedDocument()
    return parse_continue_session(
        data, path=ctx.path, session_hint=ctx.facts.session_id, created=ctx.facts.started
    )


def describe(path: str) -> Facts:
    """The session (the file's stem) and its creation from the index beside it; a session the
    index does not list yet (it is written just after the session) is dated by its file."""
    session = os.path.splitext(os.path.basename(path))[0]
    index = os.path.join(os.path.dirname(path), INDEX_NAME)
    try:
        st = os.stat(index)
        created = _dates_of(index, st.st_mtime_ns, st.st_size).get(session)
    except OSError:
        created = None
    if created is None:
        try:
            created = os.stat(path).st_mtime
        except OSError:
            created = 0.0
    return Facts(session_id=session, started=created)


@functools.lru_cache(maxsize=4)
def _dates_of(path: str, mtime_ns: int, size: int) -> dict[str, float]:
    del mtime_ns, size  # the cache key: a new version of the index is read again
    try:
        with open(path, "rb") as f:
            return continue_session_dates(f.read(64 << 20))
    except OSError:
        return {}
