"""Gemini CLI chats: ``~/.gemini/tmp/<project>/chats/session-<time>-<8 hex>.jsonl`` (appended;
today's Gemini CLI) or ``.json`` (one document rewritten in place; older versions), and
``<project>/logs.json`` (the prompts typed, per session). Format as observed:
docs/conversations.md, "Gemini CLI".

A message is ``{"id", "timestamp", "type", "content", "displayContent"?, …}``: ``type`` "user" or
"gemini" is said ("info", "error" and "warning" are the CLI's own notices); user ``content`` is a
list of parts (or a string) and may be the expanded prompt of a slash command or of ``@file``
references, while ``displayContent`` is what the user typed — that is kept when present. A gemini
message's ``thoughts`` and ``toolCalls`` are not said. The ``<session_context>`` user message is
injected, and so is what hooks add to a user's message (memd's own context among it), wrapped in
``<hook_context>…</hook_context>`` before the typed text; slash commands (``/…``, ``?``) are
instructions to the CLI, not conversation.

In the JSONL form the first line is the session's header (``sessionId``, ``projectHash``,
``startTime``, ``kind``); ``{"$set": {...}}`` lines patch it (a ``$set`` of ``messages`` replaces
the list); a message changed later is appended again with the same id (the last copy wins);
``{"$rewindTo": id}`` drops the messages from ``id`` on from what the CLI resumes — memd keeps what
was said before a rewind (`memd forget` removes it). Chats of ``kind`` "subagent" (written to
``chats/<parent session>/<id>.jsonl``) are a sub-agent's traffic and never read.

The project folder was a SHA-256 of the project's path in older versions and is its name now
(``~/.gemini/projects.json`` maps path → name); both folders may hold a ``.project_root`` file
with the path.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.fields import load_object, parse_ts, sha1_json
from memd.core.errors import ParseError, UnknownRecord
from memd.core.models import Turn
from memd.core.redact import join_redacted

SOURCE = "gemini"
_ROLES = {"user": "user", "gemini": "assistant"}
_NOT_SAID_PREFIXES = ("<session_context>", "/", "?")
# What hooks add (memd's own context among them) is put into the user's message in these tags.
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_HEADER_BYTES = 1 << 16
# A prompt in logs.json and the chat's copy of it are written a moment apart.
PROMPT_MATCH_S = 120.0


# -- where a chat was held --------------------------------------------------------------------
def describe(path: str) -> Facts:
    """The project folder of a chat (from its project folder's `.project_root`, else
    ``projects.json``, else the path whose hash names the folder), for a JSONL chat the
    session id of its header line, and the prompts ``logs.json`` holds for its session (a
    prompt memd read from there before the chat appeared keeps its id: stored once)."""
    session, kind = _header(path)
    extra = {"kind": kind} if kind else {}
    logs = _project_dir(path) / "logs.json"
    prompts = _logged_prompts(logs, session or _name_prefix(path))
    if prompts:
        extra["prompts"] = prompts
    return Facts(session_id=session, project=project_of(_project_dir(path)), extra=extra)


def _logged_prompts(logs: Path, session: str) -> str:
    """The prompts of `session` (a whole id, or the 8 characters a chat's name has) in a
    ``logs.json``, as JSON ``[[session, messageId, text, ts], …]`` ("" when none)."""
    try:
        st = logs.stat()
    except OSError:
        return ""
    return _prompts_in(str(logs), st.st_size, st.st_mtime_ns, session) if session else ""


@functools.lru_cache(maxsize=32)
def _prompts_in(path: str, size: int, mtime_ns: int, session: str) -> str:
    # Keyed by size and time: a chat appended to line by line reads its logs.json once.
    del size, mtime_ns
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return ""
    found = []
    for e in doc if isinstance(doc, list) else []:
        if not isinstance(e, dict) or e.get("type") != "user":
            continue
        sid, mid, text = e.get("sessionId"), e.get("messageId"), e.get("message")
        if isinstance(sid, str) and sid.startswith(session) and isinstance(text, str):
            found.append([sid, mid, text.strip(), _ts(e.get("timestamp"), path)])
    return json.dumps(found) if found else ""


@functools.lru_cache(maxsize=32)
def _prompt_list(prompts: str) -> list[tuple[str, Any, str, float]]:
    return [(p[0], p[1], p[2], p[3]) for p in json.loads(prompts)] if prompts else []


def _logged_id(ctx: FileContext, session: str, text: str, ts: float) -> str:
    """``prompt:<messageId>`` of the ``logs.json`` entry that logged this user message (the same
    session and text, the nearest in time within PROMPT_MATCH_S), "" when none did."""
    near = [
        (abs(when - ts), mid)
        for sid, mid, said, when in _prompt_list(ctx.facts.extra.get("prompts", ""))
        if sid == session and said == text and ts and when and abs(when - ts) <= PROMPT_MATCH_S
    ]
    return f"prompt:{min(near, key=lambda n: n[0])[1]}" if near else ""


def _name_prefix(path: str) -> str:
    # session-<time>-<first 8 of the id>.json(l)
    stem = os.path.basename(path).split(".", 1)[0]
    return stem.rsplit("-", 1)[-1] if stem.startswith("session-") else ""


def describe_logs(path: str) -> Facts:
    """The project of a ``logs.json`` and the sessions its folder's chats already hold (their
    prompts are read from the chats; a session that has no chat is read from here)."""
    folder = Path(path).parent
    prefixes = set()
    for chat in (folder / "chats").glob("session-*.json*"):
        stem = chat.name.split(".", 1)[0]
        prefixes.add(stem.rsplit("-", 1)[-1])
    return Facts(project=project_of(folder), extra={"chats": ",".join(sorted(prefixes))})


def _project_dir(path: str) -> Path:
    # <tmp>/<project>/chats/<file>
    return Path(path).parent.parent


def project_of(folder: Path) -> str:
    """The project path a Gemini CLI project folder stands for ("" when nothing says)."""
    try:
        root = (folder / ".project_root").read_text(encoding="utf-8").strip()
        if root:
            return root
    except (OSError, UnicodeDecodeError):
        pass
    gemini = folder.parent.parent  # <gemini>/tmp/<project>
    known = _known_projects(gemini / "projects.json")
    name = folder.name
    for project_path, short in known.items():
        if short == name or hashlib.sha256(project_path.encode()).hexdigest() == name:
            return project_path
    return ""


def _known_projects(path: Path) -> dict[str, str]:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    projects = doc.get("projects") if isinstance(doc, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


def _header(path: str) -> tuple[str, str]:
    if not path.endswith(".jsonl"):
        return "", ""
    try:
        with open(path, "rb") as f:
            first = f.readline(_HEADER_BYTES)
        head = json.loads(first) if first.endswith(b"\n") else None
    except (OSError, ValueError):
        return "", ""
    if not isinstance(head, dict):
        return "", ""
    sid, kind = head.get("sessionId"), head.get("kind")
    return (sid if isinstance(sid, str) else "", kind if isinstance(kind, str) else "")


# -- parsing ----------------------------------------------------------------------------------
def parse_line(raw: bytes, ctx: FileContext) -> list[Turn]:
    """One line of a JSONL chat → its turns (a message, or the messages of a ``$set``);
    `UnknownRecord` for a record of none of the shapes Gemini CLI writes today."""
    if ctx.facts.extra.get("kind") == "subagent":
        return []
    obj = load_object(raw, path=ctx.path, lineno=ctx.lineno)
    if obj is None:
        return []
    patch = obj.get("$set")
    if isinstance(patch, dict):
        messages = patch.get("messages")
        return _turns(messages if isinstance(messages, list) else [], ctx)
    if isinstance(obj.get("id"), str):
        return _turns([obj], ctx)
    if "$rewindTo" in obj or ("sessionId" in obj and "projectHash" in obj):
        return []  # a rewind (what was said before it stays), the header
    keys = ", ".join(sorted(obj)[:4])
    raise UnknownRecord(f"unknown record ({keys}; a newer Gemini CLI?): skipped",
                        path=ctx.path, line=ctx.lineno)  # fmt: skip


def parse_document(data: bytes, ctx: FileContext) -> list[Turn]:
    """A whole ``session-*.json`` chat → its turns. `ParseError` when it is not (yet) a JSON
    object with a list of messages."""
    doc = _document(data, ctx.path)
    if not isinstance(doc, dict):
        raise ParseError("not a chat: expected a JSON object", path=ctx.path)
    if doc.get("kind") == "subagent":
        return []
    messages = doc.get("messages")
    if not isinstance(messages, list):
        raise ParseError('not a chat: no "messages" list', path=ctx.path, field="messages")
    sid = doc.get("sessionId")
    facts = ctx.facts
    if isinstance(sid, str) and sid:
        facts = Facts(session_id=sid, project=facts.project, extra=facts.extra)
    return _turns(messages, FileContext(ctx.path, ctx.source, facts))


def parse_logs(data: bytes, ctx: FileContext) -> list[Turn]:
    """``logs.json`` → the prompts of the sessions no chat of the folder holds."""
    doc = _document(data, ctx.path)
    if not isinstance(doc, list):
        raise ParseError("not a prompt log: expected a JSON array", path=ctx.path)
    chats = set(filter(None, ctx.facts.extra.get("chats", "").split(",")))
    out = []
    for entry in doc:
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        sid, mid, text = entry.get("sessionId"), entry.get("messageId"), entry.get("message")
        if not isinstance(sid, str) or not sid or not isinstance(text, str) or sid[:8] in chats:
            continue
        text = text.strip()
        if not text or text.startswith(_NOT_SAID_PREFIXES):
            continue
        ts = _ts(entry.get("timestamp"), ctx.path)
        out.append(Turn(
            source=SOURCE, session_id=sid, turn_id=f"prompt:{mid}", role="user", text=text, ts=ts,
            source_path=ctx.path, agent_id=SOURCE, project=ctx.facts.project,
        ))  # fmt: skip
    return out


def _document(data: bytes, path: str) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not valid JSON: {exc}", path=path) from exc


def _turns(messages: Iterable[Any], ctx: FileContext) -> list[Turn]:
    out = []
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        role = _ROLES.get(msg.get("type"))  # type: ignore[arg-type]
        if role is None:
            continue
        text = _said(msg, role)
        if not text:
            continue
        mid = msg.get("id")
        ts = _ts(msg.get("timestamp"), ctx.path, ctx.lineno)
        session = ctx.facts.session_id or _session_of_name(ctx.path)
        if not session:
            raise ParseError("no session id (no header line)", path=ctx.path, line=ctx.lineno)
        logged = _logged_id(ctx, session, text, ts) if role == "user" else ""
        out.append(Turn(
            source=SOURCE, session_id=session,
            turn_id=logged or (mid if isinstance(mid, str) and mid else sha1_json([role, msg.get("timestamp"), text])),
            role=role, text=text, ts=ts, source_path=ctx.path, agent_id=SOURCE,
            project=ctx.facts.project, line=ctx.lineno,
        ))  # fmt: skip
    return out


def _said(msg: dict[str, Any], role: str) -> str:
    if role == "assistant":
        return _text(msg.get("content"))
    shown = _text(msg.get("displayContent"))
    text = _HOOK_CONTEXT.sub("", shown or _text(msg.get("content"))).strip()
    return "" if text.startswith(_NOT_SAID_PREFIXES) else text


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part.strip())
        elif (
            isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")
        ):
            pieces.append(part["text"].strip())
    return join_redacted([p for p in pieces if p], "\n")


def _ts(value: Any, path: str, lineno: int = 0) -> float:
    try:
        return parse_ts(value, path=path, lineno=lineno, required=False)
    except ParseError:
        return 0.0


def _session_of_name(path: str) -> str:
    # session-<time>-<first 8 of the id>.json(l): only a prefix, but stable per file.
    stem = os.path.basename(path).split(".", 1)[0]
    return "gemini-" + stem.removeprefix("session-") if stem.startswith("session-") else ""
