"""The parsers of Codex CLI, Gemini CLI and OpenCode files: what was said becomes turns, the rest
(injected context, reasoning, tool calls and output, sub-agents, slash commands) never does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memd.conversations.formats import codex, gemini, opencode
from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.document import turns_of
from memd.conversations.sources import FORMATS, LogSource
from memd.core.errors import ParseError, UnknownRecord
from memd.core.models import Turn
from tests.assistants import (
    FIXTURES,
    SESSION_CONTEXT,
    T0,
    Said,
    codex_bare,
    codex_mid_2025,
    codex_rollout,
    gemini_document,
    gemini_header,
    gemini_message,
    gemini_project,
    jsonl,
    opencode_storage,
)

SID = "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"


def lines_of(fmt: str, path: Path) -> list[Turn]:
    reader = FORMATS[fmt]
    assert reader.parse_line is not None
    ctx = FileContext(str(path), fmt, reader.describe(str(path)))
    out: list[Turn] = []
    for n, raw in enumerate(path.read_bytes().splitlines(), 1):
        out += reader.parse_line(raw, FileContext(ctx.path, ctx.source, ctx.facts, n))
    return out


def said(turns: list[Turn]) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in turns]


# -- Codex CLI ----------------------------------------------------------------------------------
def test_codex_0171_rollout_as_the_cli_wrote_it(tmp_path: Path) -> None:
    """A rollout `codex exec` 0.171 wrote (trimmed): the user's words once, though they are
    also an event; AGENTS.md, the environment and the developer message never."""
    path = tmp_path / "rollout-2026-11-27T00-07-09-01a21a53-ccf7-78c0-8052-ecdc2740dc1f.jsonl"
    path.write_bytes((FIXTURES / "codex-0.171.jsonl").read_bytes())
    turns = lines_of("codex", path)
    assert said(turns) == [
        ("user", "Remember that my cat is named Tofu"),
        ("assistant", "Noted: the answer is forty-two."),
    ]
    first = turns[0]
    assert (first.source, first.agent_id, first.project) == ("codex", "codex", "/home/user/proj")
    assert first.session_id == "01a21a53-ccf7-78c0-8052-ecdc2740dc1f"
    assert first.turn_id == "msg_01a21a53-ce0c-7c53-be71-2ea19000bd56"  # Codex's own message id
    assert turns[1].turn_id == "msg_1"
    assert first.ts == pytest.approx(1795738029.580)


def test_codex_rollout_tools_reasoning_and_injected_parts_are_not_said(tmp_path: Path) -> None:
    path, session = codex_rollout(tmp_path / ".codex", [
        Said("user", "why does the build fail?"), Said("assistant", "The lockfile is stale.")])  # fmt: skip
    turns = lines_of("codex", path)
    assert said(turns) == [
        ("user", "why does the build fail?"), ("assistant", "The lockfile is stale.")]  # fmt: skip
    assert {t.session_id for t in turns} == {session}
    text = " ".join(t.text for t in turns)
    for hidden in ("AGENTS.md", "environment_context", "Listing files", "README.md", "sandbox"):
        assert hidden not in text


def test_codex_mid_2025_rollout_without_ids_stores_the_user_once(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2025-09-13T01-00-00-{SID}.jsonl"
    path.write_text(codex_mid_2025(SID, "/home/u/app", [
        Said("user", "add a retry to the upload", T0), Said("assistant", "Added with backoff.", T0 + 5)]))  # fmt: skip
    turns = lines_of("codex", path)
    assert said(turns) == [
        ("user", "add a retry to the upload"),
        ("assistant", "Added with backoff."),
    ]
    assert {t.project for t in turns} == {"/home/u/app"}
    # Without an id, the id comes from what the line says: the same on every read.
    assert [t.turn_id for t in turns] == [t.turn_id for t in lines_of("codex", path)]
    assert len({t.turn_id for t in turns}) == 2


def test_codex_bare_layout_of_mid_2025(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2025-08-20T13-20-47-{SID}.jsonl"
    path.write_text(
        codex_bare(SID, [Said("user", "index the old rollouts"), Said("assistant", "Done.")])
    )
    turns = lines_of("codex", path)
    assert said(turns) == [("user", "index the old rollouts"), ("assistant", "Done.")]
    assert {t.session_id for t in turns} == {SID}
    assert {t.ts for t in turns} == {T0}  # the header's time: its items have none


def test_codex_unknown_record_type_is_reported_not_lost() -> None:
    ctx = FileContext("/x/rollout-a.jsonl", "codex", Facts(session_id=SID), 7)
    with pytest.raises(UnknownRecord, match="unknown record type 'hologram'"):
        codex.parse_line(
            b'{"timestamp":"2026-01-01T00:00:00Z","type":"hologram","payload":{}}', ctx
        )
    with pytest.raises(ParseError, match="not valid JSON"):
        codex.parse_line(b'{"timestamp":"2026-01-01T00:00:00Z","type":"respo', ctx)


# -- Gemini CLI ---------------------------------------------------------------------------------
def test_gemini_061_jsonl_chat_as_the_cli_wrote_it(tmp_path: Path) -> None:
    """A chat `gemini -p` 0.61 wrote (trimmed): the injected session context is not said."""
    folder = gemini_project(tmp_path / ".gemini", "/home/user/proj", "proj")
    path = folder / "chats" / "session-2026-11-27T00-07-0e4665e9.jsonl"
    path.write_bytes((FIXTURES / "gemini-0.61.jsonl").read_bytes())
    turns = lines_of("gemini", path)
    assert said(turns) == [
        ("user", "Remember that my dog is called Miso"),
        ("assistant", "Noted: the answer is forty-two."),
    ]
    assert {t.session_id for t in turns} == {"0e4665e9-338b-4d1a-88ab-26b46be23c22"}
    assert {(t.source, t.project) for t in turns} == {("gemini", "/home/user/proj")}
    assert turns[0].turn_id == "0785696e-de57-42cb-9ca4-d38eea4f27f5"


def test_gemini_typed_text_commands_notices_thoughts_and_subagents(tmp_path: Path) -> None:
    folder = gemini_project(tmp_path / ".gemini", "/home/u/site")
    path = folder / "chats" / "session-2026-09-21T10-00-0199aaaa.jsonl"
    records = [
        gemini_header(SID),
        {"$set": {"messages": [gemini_message(Said("user", SESSION_CONTEXT))]}},
        # A custom command: the expanded prompt is `content`, what was typed `displayContent`.
        gemini_message(Said("user", "Review the diff below carefully… (400 lines)"),
                       displayContent=[{"text": "/review check the css grid"}]),
        gemini_message(Said("user", "@styles.css why is the grid broken?"),
                       displayContent=[{"text": "@styles.css why is the grid broken?"}]),
        gemini_message(Said("user", "/stats")),
        {"id": "n1", "timestamp": "2026-09-21T10:00:01Z", "type": "info", "content": "Saved."},
        gemini_message(Said("assistant", "The grid needs `minmax(0, 1fr)`."),
                       thoughts=[{"subject": "CSS", "description": "secret reasoning"}]),
        {"$rewindTo": "n1"},
    ]  # fmt: skip
    path.write_text(jsonl(records))
    turns = lines_of("gemini", path)
    assert said(turns) == [
        ("user", "@styles.css why is the grid broken?"),
        ("assistant", "The grid needs `minmax(0, 1fr)`."),
    ]
    # The expanded prompt of a slash command is not what the user said; nor is the command.
    assert not any("Review the diff" in t.text or "/review" in t.text for t in turns)
    sub = folder / "chats" / SID / "5e5e5e5e-0000-4000-8000-000000000000.jsonl"
    sub.parent.mkdir()
    sub.write_text(jsonl([gemini_header("sub", kind="subagent"),
                          gemini_message(Said("user", "Investigate the grid"))]))  # fmt: skip
    tmp = LogSource(tmp_path / ".gemini" / "tmp", "gemini")
    assert tmp.accepts(str(path)) and not tmp.accepts(str(sub))  # not even read
    assert lines_of("gemini", sub) == []  # and were it read: kind "subagent"


def test_gemini_json_document_and_an_old_hashed_project_folder(tmp_path: Path) -> None:
    gem = tmp_path / ".gemini"
    gemini_project(gem, "/home/u/api", "api")  # projects.json knows the path
    import hashlib

    hashed = gem / "tmp" / hashlib.sha256(b"/home/u/api").hexdigest()
    (hashed / "chats").mkdir(parents=True)
    path = hashed / "chats" / "session-2025-08-01T10-00-0199aaaa.json"
    path.write_text(gemini_document(SID, [
        gemini_message(Said("user", "rename the endpoint"), "m1"),
        gemini_message(Said("assistant", "Renamed to /v2/items."), "m2")]))  # fmt: skip
    reader = FORMATS["gemini-chat"]
    assert reader.parse_document is not None
    turns = turns_of(
        reader.parse_document(
            path.read_bytes(), FileContext(str(path), "gemini", reader.describe(str(path)))
        )
    )
    assert said(turns) == [("user", "rename the endpoint"), ("assistant", "Renamed to /v2/items.")]
    assert {(t.session_id, t.project) for t in turns} == {(SID, "/home/u/api")}
    assert [t.turn_id for t in turns] == ["m1", "m2"]
    with pytest.raises(ParseError, match="not valid JSON"):
        reader.parse_document(path.read_bytes()[:40], FileContext(str(path), "gemini"))


def test_gemini_logs_json_gives_prompts_of_sessions_without_a_chat(tmp_path: Path) -> None:
    folder = gemini_project(tmp_path / ".gemini", "/home/u/api")
    chatted = "0199bbbb-0000-7000-8000-000000000000"
    (folder / "chats" / f"session-2025-08-01T10-00-{chatted[:8]}.json").write_text("{}")
    logs = folder / "logs.json"
    logs.write_text(json.dumps([
        {"sessionId": SID, "messageId": 0, "type": "user", "message": "what does /v2 return?",
         "timestamp": "2025-08-01T10:00:00.000Z"},
        {"sessionId": SID, "messageId": 1, "type": "user", "message": "/quit",
         "timestamp": "2025-08-01T10:01:00.000Z"},
        {"sessionId": chatted, "messageId": 0, "type": "user", "message": "in a chat already",
         "timestamp": "2025-08-01T11:00:00.000Z"},
    ]))  # fmt: skip
    reader = FORMATS["gemini-logs"]
    assert reader.parse_document is not None
    turns = turns_of(
        reader.parse_document(
            logs.read_bytes(), FileContext(str(logs), "gemini", reader.describe(str(logs)))
        )
    )
    assert said(turns) == [("user", "what does /v2 return?")]
    assert (turns[0].session_id, turns[0].turn_id, turns[0].project) == (
        SID,
        "prompt:0",
        "/home/u/api",
    )


# -- OpenCode -----------------------------------------------------------------------------------
def test_opencode_storage_parts(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    parts = opencode_storage(data, "ses_1", "/home/u/birds", [
        Said("user", "what do kiwis eat?", T0), Said("assistant", "Worms and grubs.", T0 + 3)])  # fmt: skip
    reader = FORMATS["opencode"]
    assert reader.parse_document is not None
    turns: list[Turn] = []
    for p in parts:
        turns += turns_of(
            reader.parse_document(
                p.read_bytes(), FileContext(str(p), "opencode", reader.describe(str(p)))
            )
        )
    assert said(turns) == [("user", "what do kiwis eat?"), ("assistant", "Worms and grubs.")]
    t = turns[1]
    assert (t.source, t.session_id, t.project, t.session_title) == (
        "opencode",
        "ses_1",
        "/home/u/birds",
        "Kiwi questions",
    )
    assert t.turn_id.startswith("msg_") and t.part_id.startswith("prt_")
    assert t.ts == pytest.approx(T0 + 3)


def test_opencode_parts_not_said(tmp_path: Path) -> None:
    ctx = FileContext("/d/storage/part/msg_1/prt_1.json", "opencode",
                      Facts(session_id="ses_1", extra={"role": "user", "created": "1790000000000.0"}))  # fmt: skip
    pdf = {"id": "prt_2", "type": "file", "mime": "application/pdf",
           "url": "data:application/pdf;base64," + "JVBERi0xLjQK" * 1000}  # fmt: skip
    synthetic = {
        "id": "prt_3",
        "type": "text",
        "text": "Called the Read tool with …",
        "synthetic": True,
    }
    tool = {"id": "prt_4", "type": "tool", "tool": "bash", "state": {"output": "x" * 10_000}}
    for part in (pdf, synthetic, tool):
        assert opencode.parse_part_file(json.dumps(part).encode(), ctx) == []
    sub = FileContext(
        ctx.path,
        "opencode",
        Facts(session_id="ses_2", extra={**ctx.facts.extra, "parent": "ses_1"}),
    )
    assert (
        opencode.parse_part_file(b'{"id":"prt_5","type":"text","text":"look in src/"}', sub) == []
    )
    # A text part whose message file is not there yet: not lost, read again later.
    early = FileContext(ctx.path, "opencode", Facts(session_id="ses_1"))
    with pytest.raises(ParseError, match="message file is not there"):
        opencode.parse_part_file(b'{"id":"prt_6","type":"text","text":"hello"}', early)


def test_gemini_describe_reads_the_header_of_a_jsonl_chat(tmp_path: Path) -> None:
    folder = gemini_project(tmp_path / ".gemini", "/home/u/x")
    path = folder / "chats" / "session-2026-09-21T10-00-0199aaaa.jsonl"
    path.write_text(jsonl([gemini_header(SID, kind="subagent")]))
    facts = gemini.describe(str(path))
    assert (facts.session_id, facts.project, facts.extra.get("kind")) == (
        SID,
        "/home/u/x",
        "subagent",
    )


def test_gemini_hook_context_is_not_what_the_user_said(tmp_path: Path) -> None:
    """A chat `gemini -p` 0.61 wrote with SessionStart and BeforeAgent hooks (trimmed): the
    hooks' context is put before and after the prompt in the user's message itself."""
    folder = gemini_project(tmp_path / ".gemini", "/home/user/proj", "proj")
    path = folder / "chats" / "session-2026-11-27T00-41-2e48d013.jsonl"
    path.write_bytes((FIXTURES / "gemini-0.61-hooks.jsonl").read_bytes())
    turns = lines_of("gemini", path)
    assert said(turns) == [("user", "What is my pet called?"),
                           ("assistant", "Noted: the answer is forty-two.")]  # fmt: skip
    assert "MEMD-CONTEXT" in path.read_text()
