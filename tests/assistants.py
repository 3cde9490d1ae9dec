"""Files shaped like those Codex CLI, Gemini CLI and OpenCode write, for tests and the ingest bench.

Every record mirrors one seen in a real file (the CLIs run here against loopback stubs, and public
fixtures of older versions; tests/fixtures/assistants/ keeps trimmed real ones): the same keys,
nesting and injected parts, with made-up values. docs/conversations.md describes each format.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "assistants"
T0 = 1_790_000_000.0  # 2026-09-21


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def jsonl(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)


@dataclass(frozen=True)
class Said:
    """One turn of a conversation: who said what, when (epoch seconds)."""

    role: str  # "user" | "assistant"
    text: str
    ts: float = T0


# -- Codex CLI ----------------------------------------------------------------------------------
def codex_path(codex_home: Path, session: str, ts: float = T0) -> Path:
    day = datetime.fromtimestamp(ts, UTC)
    name = f"rollout-{day:%Y-%m-%dT%H-%M-%S}-{session}.jsonl"
    return codex_home / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}" / name


def codex_meta(session: str, cwd: str, ts: float = T0, version: str = "0.171.0") -> dict[str, Any]:
    return {"timestamp": iso(ts), "ordinal": 0, "type": "session_meta", "payload": {
        "session_id": session, "id": session, "timestamp": iso(ts), "cwd": cwd,
        "originator": "codex_exec", "cli_version": version, "source": "exec",
        "model_provider": "openai",
        "base_instructions": {"text": "You are a coding agent running in the Codex CLI…"},
    }}  # fmt: skip


def codex_injected(cwd: str, ts: float = T0) -> list[dict[str, Any]]:
    """What Codex puts in front of a session: developer instructions, then AGENTS.md and the
    environment as a *user* message."""
    return [
        {"timestamp": iso(ts), "type": "response_item", "payload": {
            "type": "message", "id": f"msg_{uuid.uuid4()}", "role": "developer",
            "content": [{"type": "input_text", "text": "<permissions instructions>\nsandbox…"}]}},
        {"timestamp": iso(ts), "type": "response_item", "payload": {
            "type": "message", "id": f"msg_{uuid.uuid4()}", "role": "user", "content": [
                {"type": "input_text",
                 "text": "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nUse tabs.\n</INSTRUCTIONS>"},
                {"type": "input_text",
                 "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n"
                         "</environment_context>"}]}},
        {"timestamp": iso(ts), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5"}},
    ]  # fmt: skip


def codex_turn(
    said: Said, *, msg_id: str | None = None, events: bool = True
) -> list[dict[str, Any]]:
    """One turn as today's Codex writes it: the message item, plus its event (the user's text is
    also an `item_completed` event, the assistant's an `AgentMessage` one)."""
    mid = msg_id or f"msg_{uuid.uuid4()}"
    kind = "input_text" if said.role == "user" else "output_text"
    item = {"timestamp": iso(said.ts), "type": "response_item", "payload": {
        "type": "message", "id": mid, "role": said.role,
        "content": [{"type": kind, "text": said.text}]}}  # fmt: skip
    event = {"timestamp": iso(said.ts), "type": "event_msg", "payload": {
        "type": "item_completed", "item": {
            "type": "UserMessage" if said.role == "user" else "AgentMessage", "id": mid,
            "content": [{"type": "text" if said.role == "user" else "Text", "text": said.text}]}}}  # fmt: skip
    if not events:
        return [item]
    return [item, event] if said.role == "user" else [event, item]


def codex_tools(ts: float = T0, output: str = "README.md\nsrc\n") -> list[dict[str, Any]]:
    """Reasoning (encrypted), a tool call and its output: none of it said."""
    call = f"call_{uuid.uuid4().hex[:12]}"
    return [
        {"timestamp": iso(ts), "type": "response_item", "payload": {
            "type": "reasoning", "summary": [{"type": "summary_text", "text": "**Listing files**"}],
            "content": None, "encrypted_content": "gAAAAB" + "x" * 200}},
        {"timestamp": iso(ts), "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}',
            "call_id": call}},
        {"timestamp": iso(ts), "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": call, "output": output}},
    ]  # fmt: skip


def codex_rollout(
    codex_home: Path,
    turns: Sequence[Said],
    *,
    session: str | None = None,
    cwd: str = "/home/u/proj",
) -> tuple[Path, str]:
    """A rollout file with `turns` (and the injected parts, tools and events Codex writes)."""
    session = session or str(uuid.uuid4())
    path = codex_path(codex_home, session, turns[0].ts if turns else T0)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [codex_meta(session, cwd), *codex_injected(cwd)]
    for t in turns:
        records += codex_turn(t)
        if t.role == "user":
            records += codex_tools(t.ts)
    path.write_text(jsonl(records), encoding="utf-8")
    return path, session


def codex_mid_2025(session: str, cwd: str, turns: Sequence[Said]) -> str:
    """A rollout of Codex CLI 0.3x–0.10x: no ids on messages, `user_message`/`agent_message`
    events, `<user_instructions>` and `<environment_context>` as user messages."""
    records: list[dict[str, Any]] = [
        {"timestamp": iso(T0), "type": "session_meta", "payload": {
            "id": session, "timestamp": iso(T0), "cwd": cwd, "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "instructions": None, "source": "cli", "git": {}}},
        {"timestamp": iso(T0), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<user_instructions>\n\nUse tabs.\n\n</user_instructions>"}]}},
        {"timestamp": iso(T0), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]}},
    ]  # fmt: skip
    for t in turns:
        kind = "input_text" if t.role == "user" else "output_text"
        records.append({"timestamp": iso(t.ts), "type": "response_item", "payload": {
            "type": "message", "role": t.role, "content": [{"type": kind, "text": t.text}],
            **({"phase": "final_answer"} if t.role == "assistant" else {})}})  # fmt: skip
        event = "user_message" if t.role == "user" else "agent_message"
        records.append({"timestamp": iso(t.ts), "type": "event_msg",
                        "payload": {"type": event, "message": t.text, "kind": "plain"}})  # fmt: skip
    return jsonl(records)


def codex_bare(session: str, turns: Sequence[Said]) -> str:
    """The oldest layout (mid 2025): a header, state markers and bare items without a time."""
    records: list[dict[str, Any]] = [
        {"id": session, "timestamp": iso(T0), "instructions": None, "git": {"branch": "main"}},
        {"record_type": "state"},
    ]
    for t in turns:
        kind = "input_text" if t.role == "user" else "output_text"
        records.append({"type": "message", "id": None, "role": t.role,
                        "content": [{"type": kind, "text": t.text}]})  # fmt: skip
        records.append({"record_type": "state"})
    records.append(
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}
    )
    return jsonl(records)


# -- Gemini CLI ---------------------------------------------------------------------------------
SESSION_CONTEXT = (
    "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n"
    "Today's date is Monday, September 21, 2026.\nMy operating system is: linux\n</session_context>"
)


def gemini_project(gemini_dir: Path, project: str, name: str = "") -> Path:
    """A project's temp folder as Gemini CLI 0.61 makes it (named after the folder, with
    `.project_root` and an entry in `projects.json`)."""
    name = name or Path(project).name
    folder = gemini_dir / "tmp" / name
    (folder / "chats").mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text(project)
    index = gemini_dir / "projects.json"
    doc = json.loads(index.read_text()) if index.exists() else {"projects": {}}
    doc["projects"][project] = name
    index.write_text(json.dumps(doc, indent=2))
    return folder


def gemini_message(said: Said, msg_id: str | None = None, **extra: Any) -> dict[str, Any]:
    if said.role == "user":
        return {"id": msg_id or str(uuid.uuid4()), "timestamp": iso(said.ts), "type": "user",
                "content": [{"text": said.text}], **extra}  # fmt: skip
    return {"id": msg_id or str(uuid.uuid4()), "timestamp": iso(said.ts), "type": "gemini",
            "content": said.text, "thoughts": [], "model": "gemini-3.1-pro-preview",
            "tokens": {"input": 5, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 10},
            **extra}  # fmt: skip


def gemini_header(session: str, kind: str = "main", ts: float = T0) -> dict[str, Any]:
    return {"sessionId": session, "projectHash": "6a19" * 16, "startTime": iso(ts),
            "lastUpdated": iso(ts), "kind": kind}  # fmt: skip


def gemini_chat_path(folder: Path, session: str, ext: str = "jsonl", ts: float = T0) -> Path:
    day = datetime.fromtimestamp(ts, UTC)
    return folder / "chats" / f"session-{day:%Y-%m-%dT%H-%M}-{session[:8]}.{ext}"


def gemini_jsonl(session: str, turns: Sequence[Said]) -> str:
    """A chat as Gemini CLI 0.61 appends it: header, the injected session context as a `$set`,
    then each message and a `$set` of `lastUpdated` after it."""
    records: list[dict[str, Any]] = [gemini_header(session)]
    records.append({"$set": {"messages": [gemini_message(Said("user", SESSION_CONTEXT))],
                             "lastUpdated": iso(T0)}})  # fmt: skip
    for t in turns:
        records.append(gemini_message(t))
        records.append({"$set": {"lastUpdated": iso(t.ts)}})
    return jsonl(records)


def gemini_document(session: str, messages: list[dict[str, Any]]) -> str:
    """A chat as older Gemini CLI versions rewrote it: one JSON document."""
    doc = {**gemini_header(session), "messages": messages}
    doc.pop("kind")
    return json.dumps(doc, indent=2)


# -- OpenCode -----------------------------------------------------------------------------------
SCHEMA = (FIXTURES / "opencode-1.18-schema.sql").read_text()


@dataclass
class OpenCodeDb:
    """An `opencode.db` with OpenCode 1.18's tables, written as OpenCode writes it (WAL)."""

    path: Path

    def create(self) -> OpenCodeDb:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as c:
            c.executescript(SCHEMA)
            c.execute("INSERT INTO project(id, worktree, time_created, time_updated, sandboxes)"
                      " VALUES ('global', '/', 0, 0, '[]')")  # fmt: skip
            c.execute("INSERT INTO account(id, email, url, access_token, refresh_token,"
                      " time_created, time_updated) VALUES ('acc', 'me@example.com',"
                      " 'https://example.com', 'SECRET-ACCESS-TOKEN', 'SECRET-REFRESH', 0, 0)")  # fmt: skip
        return self

    @contextlib.contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection as OpenCode's (WAL, autocommit), closed at the end of the block."""
        c = sqlite3.connect(self.path, isolation_level=None)
        try:
            c.execute("PRAGMA journal_mode = WAL")
            yield c
        finally:
            c.close()

    def session(self, sid: str, directory: str, *, parent: str = "", title: str = "") -> None:
        with self.connect() as c:
            c.execute(
                "INSERT INTO session(id, project_id, parent_id, slug, directory, title, version,"
                " time_created, time_updated) VALUES (?, 'global', ?, 'slug', ?, ?, '1.18.33', ?, ?)",
                (sid, parent or None, directory, title or f"New session - {iso(T0)}",
                 int(T0 * 1000), int(T0 * 1000)),
            )  # fmt: skip

    def message(self, sid: str, said: Said, parts: Sequence[dict[str, Any]], mid: str = "") -> str:
        mid = mid or "msg_" + uuid.uuid4().hex[:26]
        ms = int(said.ts * 1000)
        data: dict[str, Any] = {"role": said.role, "time": {"created": ms}}
        if said.role == "assistant":
            data |= {"parentID": "", "mode": "build", "path": {"cwd": "/", "root": "/"}}
        with self.connect() as c:
            c.execute("INSERT INTO message(id, session_id, time_created, time_updated, data)"
                      " VALUES (?, ?, ?, ?, ?)", (mid, sid, ms, ms, json.dumps(data)))  # fmt: skip
            for i, part in enumerate(parts):
                self.part(c, sid, mid, part, ms + i, f"prt_{ms:012x}{i:03d}")
        return mid

    def part(
        self, c: sqlite3.Connection, sid: str, mid: str, data: dict[str, Any], ms: int, pid: str
    ) -> None:
        c.execute(
            "INSERT INTO part(id, message_id, session_id, time_created, time_updated, data)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data,"
            " time_updated = excluded.time_updated",
            (pid, mid, sid, ms, ms, json.dumps(data)),
        )

    def say(self, sid: str, said: Said, **extra: Any) -> str:
        """A message with one text part (`extra` in the part) and, for the assistant, the
        step parts OpenCode writes around it."""
        text = {"type": "text", "text": said.text, **extra}
        if said.role == "user":
            return self.message(sid, said, [text])
        return self.message(sid, said, [{"type": "step-start"},
                                        {"type": "reasoning", "text": "Thinking about it."},
                                        text, {"type": "step-finish", "reason": "stop"}])  # fmt: skip


def opencode_storage(
    data_dir: Path, sid: str, directory: str, turns: Sequence[Said], *, parent: str = ""
) -> list[Path]:
    """A session in OpenCode's storage folder (before 1.2): session, message and part files.
    Returns the part files."""
    storage = data_dir / "storage"
    session = {"id": sid, "slug": "s", "version": "1.1.36", "projectID": "global",
               "directory": directory, "title": "Kiwi questions",
               "time": {"created": int(T0 * 1000), "updated": int(T0 * 1000)}}  # fmt: skip
    if parent:
        session["parentID"] = parent
    (storage / "session" / "global").mkdir(parents=True, exist_ok=True)
    (storage / "session" / "global" / f"{sid}.json").write_text(json.dumps(session))
    parts = []
    for n, t in enumerate(turns):
        ms = int(t.ts * 1000)
        mid = f"msg_{ms:012x}{n:03d}"
        message = {"id": mid, "sessionID": sid, "role": t.role, "time": {"created": ms}}
        (storage / "message" / sid).mkdir(parents=True, exist_ok=True)
        (storage / "message" / sid / f"{mid}.json").write_text(json.dumps(message))
        folder = storage / "part" / mid
        folder.mkdir(parents=True, exist_ok=True)
        kinds: list[dict[str, Any]] = [{"type": "text", "text": t.text}]
        if t.role == "assistant":
            kinds = [{"type": "step-start"}, {"type": "reasoning", "text": "Hmm."}, *kinds]
        for i, body in enumerate(kinds):
            pid = f"prt_{ms:012x}{i:03d}"
            path = folder / f"{pid}.json"
            path.write_text(json.dumps({"id": pid, "sessionID": sid, "messageID": mid, **body}))
            parts.append(path)
    return parts
