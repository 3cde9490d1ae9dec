"""OpenCode sessions: the JSON files of its storage folder (before 1.2) and the rows of its SQLite
database ``opencode.db`` (1.2 and later) — one shape: sessions, messages and their parts (format
as observed: docs/conversations.md, "OpenCode").

- storage: ``storage/session/<project>/<session>.json`` (``id``, ``directory``, ``title``,
  ``parentID`` for a sub-agent's session), ``storage/message/<session>/<message>.json`` (``id``,
  ``sessionID``, ``role``, ``time.created`` in ms) and ``storage/part/<message>/<part>.json``
  (``id``, ``sessionID``, ``messageID``, ``type``, ``text`` …);
- database: tables ``session`` (``directory``, ``parent_id``, ``title``), ``message`` and ``part``
  (``data``: the same JSON without the ids).

A message's text is its ``text`` parts in the order of their ids (which follow time), each stored as
a part of the turn so a part written again (streamed) replaces its earlier copy. Not said: parts of
other types (``reasoning``, ``tool``, ``file`` — a base64 PDF is a file part —, ``step-start``,
``patch``, …), ``synthetic`` or ``ignored`` text parts (what OpenCode adds itself), and every part
of a sub-agent's session (one with a parent).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.fields import epoch_or_none
from memd.core.errors import ParseError
from memd.core.models import Turn

SOURCE = "opencode"
_ROLES = ("user", "assistant")
_MAX_META_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class PartRow:
    """One part with what its message and session say (a database row, or three storage files).

    `data` is the part's JSON (type, text, …); `role`, `created` (epoch ms) and `cwd` come from
    its message; `directory`, `parent` and `title` from its session.
    """

    part_id: str
    message_id: str
    session_id: str
    data: dict[str, Any]
    role: str
    created: float | None
    cwd: str = ""
    directory: str = ""
    parent: str = ""
    title: str = ""


def part_turn(row: PartRow, *, path: str) -> Turn | None:
    """The turn part a row is, or None when it is not said."""
    data = row.data
    if row.parent or row.role not in _ROLES or data.get("type") != "text":
        return None
    if data.get("synthetic") is True or data.get("ignored") is True:
        return None
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    title = row.title if row.title and not row.title.startswith("New session - ") else ""
    return Turn(
        source=SOURCE, session_id=row.session_id, turn_id=row.message_id, role=row.role,
        text=text.strip(), ts=epoch_or_none(row.created) or 0.0, source_path=path,
        agent_id=SOURCE, project=row.directory or row.cwd, session_title=title,
        part_id=row.part_id,
    )  # fmt: skip


def message_facts(message: dict[str, Any]) -> tuple[str, float | None, str]:
    """(role, created ms, cwd) of a message's JSON."""
    role = message.get("role")
    time_ = message.get("time")
    created = time_.get("created") if isinstance(time_, dict) else None
    where = message.get("path")
    cwd = where.get("cwd") if isinstance(where, dict) else None
    return (
        role if isinstance(role, str) else "",
        created if isinstance(created, int | float) and not isinstance(created, bool) else None,
        cwd if isinstance(cwd, str) else "",
    )


def session_facts(session: dict[str, Any]) -> tuple[str, str, str]:
    """(directory, parent session id, title) of a session's JSON."""
    out = [session.get(k) for k in ("directory", "parentID", "title")]
    return tuple(v if isinstance(v, str) else "" for v in out)  # type: ignore[return-value]


# -- the storage folder -------------------------------------------------------------------------
def describe_part(path: str) -> Facts:
    """What a part file's message and session files say: role, time, folder, parent, title.

    ``storage/part/<message>/<part>.json`` → ``storage/message/<session>/<message>.json`` and
    ``storage/session/*/<session>.json``. Missing files leave their facts empty (the part is then
    reported and read again later).
    """
    part_file = Path(path)
    storage = part_file.parent.parent.parent
    message_id = part_file.parent.name
    part = _json_file(part_file)
    sid = part.get("sessionID")
    session_id = sid if isinstance(sid, str) else ""
    extra: dict[str, str] = {}
    if session_id:
        message = _json_file(storage / "message" / session_id / f"{message_id}.json")
        role, created, cwd = message_facts(message)
        extra.update(role=role, created=repr(created) if created is not None else "", cwd=cwd)
        found = _session_file(storage, session_id)
        if found is not None:
            directory, parent, title = session_facts(_json_file(found))
            extra.update(session="1", directory=directory, parent=parent, title=title)
    return Facts(session_id=session_id, extra=extra)


def parse_part_file(data: bytes, ctx: FileContext) -> list[Turn]:
    """One ``storage/part/<message>/<part>.json`` → the turn part it is (or nothing).

    `ParseError` when it is not a part's JSON, or its message file is not there (yet).
    """
    try:
        part = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not valid JSON: {exc}", path=ctx.path) from exc
    if not isinstance(part, dict) or not isinstance(part.get("id"), str):
        raise ParseError("not an OpenCode part: no id", path=ctx.path)
    if part.get("type") != "text":
        return []  # not said: no need to know its message
    facts = ctx.facts.extra
    if not facts.get("role"):
        raise ParseError("its message file is not there (yet): read again when it is",
                         path=ctx.path)  # fmt: skip
    created = facts.get("created", "")
    row = PartRow(
        part_id=part["id"], message_id=str(part.get("messageID") or Path(ctx.path).parent.name),
        session_id=ctx.facts.session_id, data=part, role=facts["role"],
        created=float(created) if created else None, cwd=facts.get("cwd", ""),
        directory=facts.get("directory", ""), parent=facts.get("parent", ""),
        title=facts.get("title", ""),
    )  # fmt: skip
    turn = part_turn(row, path=ctx.path)
    return [turn] if turn is not None else []


_SESSION_FILES: dict[tuple[Path, str], Path] = {}


def _session_file(storage: Path, session_id: str) -> Path | None:
    # A session's file is looked up once (by a glob over every project), not for each part.
    key = (storage, session_id)
    known = _SESSION_FILES.get(key)
    if known is not None and known.exists():
        return known
    found = next(iter((storage / "session").glob(f"*/{session_id}.json")), None)
    if found is not None:
        if len(_SESSION_FILES) > 10_000:
            _SESSION_FILES.clear()
        _SESSION_FILES[key] = found
    return found


def _json_file(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read(_MAX_META_BYTES))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}
