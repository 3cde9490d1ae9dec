"""Log format parsers: Claude Code, generic/OpenAI JSONL, ChatGPT export."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memd.conversations.formats import (
    ChatGPTImport,
    Record,
    SessionTitle,
    SubagentTurn,
    parse_chatgpt_export,
    parse_claude_code_line,
    parse_jsonl_line,
)
from memd.conversations.tailer import read_new
from memd.core.errors import ParseError
from memd.core.models import Turn

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CLAUDE = FIXTURES / "claude_code_session.jsonl"
SID = "5f1c2d3e-0000-4000-8000-000000000001"


def iso(value: str) -> float:
    return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp()


def claude(record: dict[str, Any], **kw: Any) -> list[Record]:
    return parse_claude_code_line(json.dumps(record).encode(), path="/x.jsonl", lineno=1, **kw)


def user_record(content: Any, **extra: Any) -> dict[str, Any]:
    record = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s",
        "cwd": "/p",
        "timestamp": "2026-07-06T12:00:00.000Z",
        "message": {"role": "user", "content": content},
    }
    record.update(extra)
    return record


# --------------------------------------------------------------------------- Claude Code fixture


@pytest.fixture(scope="module")
def claude_records() -> dict[int, list[Record] | ParseError]:
    """Every line of the fixture, parsed: line number -> records, or the ParseError raised."""
    out: dict[int, list[Record] | ParseError] = {}
    for lineno, raw in enumerate(CLAUDE.read_bytes().split(b"\n"), start=1):
        try:
            out[lineno] = parse_claude_code_line(
                raw, path=str(CLAUDE), lineno=lineno, session_hint=CLAUDE.stem
            )
        except ParseError as exc:
            out[lineno] = exc
    return out


def test_fixture_yields_only_human_and_assistant_words(
    claude_records: dict[int, list[Record] | ParseError],
) -> None:
    turns = [r for recs in claude_records.values() if isinstance(recs, list) for r in recs]
    said = [(t.line, t.role, t.turn_id, t.part_id, t.text) for t in turns if isinstance(t, Turn)]
    assert said == [
        (4, "user", "u1", "u1", "why does the login test fail on CI?"),
        (6, "assistant", "msg_01", "a2", "Let me look at the CI config first."),
        (
            10,
            "assistant",
            "msg_02",
            "a4",
            "The test binds a fixed port; CI runs jobs in parallel, so two runs collide.",
        ),
        (18, "user", "u7", "u7", "here is the screenshot of the failing job"),
        (23, "assistant", "msg_03", "a5", "The screenshot shows `EADDRINUSE`."),
        (24, "assistant", "msg_03", "a6", "Use port 0 and read the bound port back."),
        (26, "assistant", "msg_04", "a7", "Done: the test now uses an ephemeral port."),
    ]


@pytest.mark.parametrize(
    ("lineno", "what"),
    [
        (3, "file-history-snapshot"),
        (5, "assistant thinking part"),
        (7, "assistant tool_use part"),
        (8, "user tool_result"),
        (9, "progress"),
        (11, "isMeta user"),
        (12, "slash command wrapper"),
        (13, "local-command-stdout wrapper"),
        (14, "system compact_boundary"),
        (15, "compact summary injected as a user record"),
        (19, "unknown future type"),
        (21, "custom-title"),
        (22, "queue-operation"),
        (25, "synthetic API error message"),
    ],
)
def test_fixture_non_conversation_lines_yield_nothing(
    claude_records: dict[int, list[Record] | ParseError], lineno: int, what: str
) -> None:
    assert claude_records[lineno] == [], what


def test_fixture_sidechain_records_count_for_their_run_without_text(
    claude_records: dict[int, list[Record] | ParseError],
) -> None:
    assert claude_records[16] == [
        SubagentTurn(SID, "7c1e2a", "sc1", "user", iso("2026-07-06T12:03:00"))
    ]
    records = claude_records[17]
    assert isinstance(records, list)
    [answer] = records
    assert isinstance(answer, SubagentTurn)
    assert (answer.run_id, answer.turn_id, answer.role) == ("7c1e2a", "msg_sc", "assistant")


def test_fixture_turn_envelope(claude_records: dict[int, list[Record] | ParseError]) -> None:
    first = claude_records[4]
    assert isinstance(first, list)
    turn = first[0]
    assert turn == Turn(
        source="claude-code",
        session_id=SID,
        turn_id="u1",
        role="user",
        text="why does the login test fail on CI?",
        ts=iso("2026-07-06T12:00:00"),
        source_path=str(CLAUDE),
        agent_id="claude-code",
        project="/home/user/proj",
        parent_id="",
        line=4,
        part_id="u1",
    )
    text_part = claude_records[6]
    assert isinstance(text_part, list) and isinstance(text_part[0], Turn)
    assert text_part[0].parent_id == "a1"
    assert text_part[0].ts == pytest.approx(iso("2026-07-06T12:00:01.500"))


def test_fixture_base64_image_never_reaches_the_text(
    claude_records: dict[int, list[Record] | ParseError],
) -> None:
    for recs in claude_records.values():
        if isinstance(recs, list):
            for rec in recs:
                if isinstance(rec, Turn):
                    assert "iVBORw0KGgo" not in rec.text
                    assert "signature" not in rec.text and "ZW5jcnlwdGVk" not in rec.text


def test_fixture_summaries_and_leaf_check(
    claude_records: dict[int, list[Record] | ParseError],
) -> None:
    # Summary records carry no sessionId: the session is the hint (the file stem).
    titles = [claude_records[1], claude_records[2]]
    other = "9d9d9d9d-not-in-this-file"
    assert titles == [
        [SessionTitle(CLAUDE.stem, "Fix flaky login test", "a7", str(CLAUDE), 1)],
        [SessionTitle(CLAUDE.stem, "Some other session's title", other, str(CLAUDE), 2)],
    ]
    # The store trusts a summary only if its leaf is a record of the same file.
    uuids = {
        json.loads(line)["uuid"]
        for line in CLAUDE.read_bytes().splitlines()
        if line.startswith(b"{") and line.endswith(b"}") and b'"uuid"' in line
    }
    assert "a7" in uuids
    assert "9d9d9d9d-not-in-this-file" not in uuids


def test_fixture_bad_lines_raise_parse_error_with_position(
    claude_records: dict[int, list[Record] | ParseError],
) -> None:
    errors = {n: e for n, e in claude_records.items() if isinstance(e, ParseError)}
    assert sorted(errors) == [20, 27]  # the non-JSON line and the truncated last line
    assert errors[20].path == str(CLAUDE) and errors[20].line == 20
    assert "not valid JSON" in str(errors[20])


def test_tailing_the_fixture_leaves_the_truncated_line_until_it_is_finished(
    tmp_path: Path,
) -> None:
    log = tmp_path / f"{SID}.jsonl"
    content = CLAUDE.read_bytes()
    log.write_bytes(content)
    chunk = read_new(str(log), None)
    assert [n for n, _ in chunk.lines] == list(range(1, 27))
    assert chunk.checkpoint.offset == content.rindex(b"\n") + 1

    rest = json.dumps(
        user_record("thanks, one more thing", uuid="u8", parentUuid="a7", sessionId=SID),
        separators=(",", ":"),
    ).encode()
    # The writer finishes its half-written record in place.
    with log.open("r+b") as f:
        f.seek(chunk.checkpoint.offset)
        f.write(rest + b"\n")
    nxt = read_new(str(log), chunk.checkpoint)
    assert not nxt.restarted
    [(lineno, raw)] = nxt.lines
    recs = parse_claude_code_line(raw, path=str(log), lineno=lineno, session_hint=log.stem)
    assert [(r.turn_id, r.line) for r in recs if isinstance(r, Turn)] == [("u8", 27)]


# --------------------------------------------------------------------------- Claude Code rules


def test_user_string_prompt_keeps_text_and_strips_whitespace() -> None:
    [turn] = claude(user_record("  hello there \n"))
    assert isinstance(turn, Turn)
    assert turn.text == "hello there"
    assert (turn.turn_id, turn.part_id, turn.session_id, turn.project) == ("u1", "u1", "s", "/p")


def test_user_text_blocks_next_to_tool_results_are_kept() -> None:
    content = [
        {"type": "tool_result", "tool_use_id": "t", "content": "file body", "is_error": True},
        {"type": "text", "text": "no, use the other file"},
    ]
    [turn] = claude(user_record(content))
    assert isinstance(turn, Turn) and turn.text == "no, use the other file"


@pytest.mark.parametrize(
    "content",
    [
        "<command-name>/clear</command-name>",
        "<command-message>init is analyzing</command-message>\n<command-name>/init</command-name>",
        "<local-command-stdout></local-command-stdout>",
        "<local-command-stderr>boom</local-command-stderr>",
        "<task-notification><task-id>1</task-id><status>completed</status></task-notification>",
        "<bash-input>ls</bash-input>",
        "<command-name>/remember</command-name>\n<command-args>I like tea</command-args>",
        "<task-notification> unclosed because the writer was cut off",
        [{"type": "text", "text": "<system-reminder>internal</system-reminder>"}],
        [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
            }
        ],
        [],
        "",
        None,
    ],
)
def test_user_records_without_human_words_yield_nothing(content: Any) -> None:
    assert claude(user_record(content)) == []


def test_harness_reminder_around_a_real_prompt_is_removed() -> None:
    content = [
        {"type": "text", "text": "<system-reminder>file was opened</system-reminder>"},
        {"type": "text", "text": "rename the function"},
    ]
    [turn] = claude(user_record(content))
    assert isinstance(turn, Turn) and turn.text == "rename the function"
    [turn] = claude(user_record("<system-reminder>x</system-reminder>\nfix the bug"))
    assert isinstance(turn, Turn) and turn.text == "fix the bug"


def test_assistant_without_message_id_falls_back_to_uuid() -> None:
    record = user_record([{"type": "text", "text": "ok"}], type="assistant", uuid="a9")
    record["message"] = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    [turn] = claude(record)
    assert isinstance(turn, Turn)
    assert (turn.role, turn.turn_id, turn.part_id) == ("assistant", "a9", "a9")


def test_session_hint_is_used_when_the_record_has_no_session_id() -> None:
    record = user_record("hi")
    del record["sessionId"]
    [turn] = claude(record, session_hint="file-stem")
    assert isinstance(turn, Turn) and turn.session_id == "file-stem"
    with pytest.raises(ParseError, match="sessionId"):
        claude(record)


def test_summary_without_leaf_or_title_is_ignored() -> None:
    assert claude({"type": "summary", "summary": "x"}) == []
    assert claude({"type": "summary", "summary": " ", "leafUuid": "a"}) == []
    [title] = claude({"type": "summary", "summary": "T", "leafUuid": "a"}, session_hint="h")
    assert title == SessionTitle("h", "T", "a", "/x.jsonl", 1)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "got array"),
        (b'"just a string"', "got string"),
        (b"\xff\xfe{}", "not valid JSON"),
        (json.dumps({"type": "user", "message": {"content": "x"}}).encode(), "without a uuid"),
        (json.dumps({"type": "user", "uuid": "u", "message": "x"}).encode(), "no message"),
        (
            json.dumps(
                {"type": "user", "uuid": "u", "sessionId": "s", "message": {"content": "x"}}
            ).encode(),
            'missing "timestamp"',
        ),
        (
            json.dumps(
                {
                    "type": "user",
                    "uuid": "u",
                    "sessionId": "s",
                    "timestamp": "noon",
                    "message": {"content": "x"},
                }
            ).encode(),
            "unreadable time",
        ),
    ],
)
def test_claude_malformed_lines_raise(raw: bytes, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as info:
        parse_claude_code_line(raw, path="/x.jsonl", lineno=12)
    assert (info.value.path, info.value.line) == ("/x.jsonl", 12)


@pytest.mark.parametrize("raw", [b"", b"   ", b"\r", b"\t \r"])
def test_claude_blank_lines_yield_nothing(raw: bytes) -> None:
    assert parse_claude_code_line(raw, path="/x", lineno=1) == []


def test_claude_unknown_type_even_without_envelope_is_silent() -> None:
    assert claude({"type": "brand-new-thing"}) == []
    assert claude({"no_type_at_all": True}) == []


# --------------------------------------------------------------------------- generic JSONL


def parse_file(path: Path) -> dict[int, list[Turn] | ParseError]:
    out: dict[int, list[Turn] | ParseError] = {}
    for lineno, raw in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            out[lineno] = parse_jsonl_line(raw, path=str(path), lineno=lineno)
        except ParseError as exc:
            out[lineno] = exc
    return out


def comparable(parsed: dict[int, list[Turn] | ParseError]) -> dict[int, list[Turn] | str]:
    return {n: r if isinstance(r, list) else f"{r.line}: {r}" for n, r in parsed.items()}


def test_generic_fixture() -> None:
    path = FIXTURES / "generic.jsonl"
    parsed = parse_file(path)
    turns = {n: r for n, r in parsed.items() if isinstance(r, list)}
    errors = {n: e for n, e in parsed.items() if isinstance(e, ParseError)}

    assert sorted(errors) == [9, 10]
    assert 'missing or non-string "role"' in str(errors[9]) and errors[9].line == 9
    assert "unreadable time 'yesterday'" in str(errors[10])

    assert turns[3] == [] and turns[5] == [] and turns[7] == [] and turns[8] == []
    [first] = turns[1]
    assert first == Turn(
        source="jsonl",
        session_id="s1",
        turn_id="m1",
        role="user",
        text="Plan three days in Kyoto",
        ts=1700000000.0,
        source_path=str(path),
        agent_id="muse",
        project="trip",
        session_title="Kyoto",
        line=1,
    )
    [second] = turns[2]
    assert second.ts == 1700000005.0  # epoch milliseconds
    assert second.text == "Day 1: Fushimi Inari.\n\nDay 2: Arashiyama."
    assert len(second.turn_id) == 40
    [third] = turns[4]
    assert third.ts == 1700000060.0  # ISO string with Z
    [fourth] = turns[6]
    assert (fourth.session_id, fourth.ts) == ("42", 0.0)
    [fifth] = turns[11]
    assert (fifth.turn_id, fifth.ts) == ("7", 1700000100.5)


def test_generic_ids_are_stable_across_rereads_and_distinct_per_message() -> None:
    path = FIXTURES / "generic.jsonl"
    assert comparable(parse_file(path)) == comparable(parse_file(path))
    line = {"session_id": "s", "role": "user", "content": "ok", "ts": 100}
    a = parse_jsonl_line(json.dumps(line).encode(), path="/a", lineno=1)
    b = parse_jsonl_line(json.dumps(line).encode(), path="/a", lineno=99)
    assert a[0].turn_id == b[0].turn_id  # ts decides, not the line, when ts is present
    other = parse_jsonl_line(json.dumps({**line, "ts": 101}).encode(), path="/a", lineno=1)
    assert other[0].turn_id != a[0].turn_id
    del line["ts"]
    c = parse_jsonl_line(json.dumps(line).encode(), path="/a", lineno=1)
    d = parse_jsonl_line(json.dumps(line).encode(), path="/a", lineno=2)
    assert c[0].turn_id != d[0].turn_id  # without ts, the same words on two lines are two turns


@pytest.mark.parametrize(
    ("ts", "expected"),
    [
        (1700000000, 1700000000.0),
        (1700000000.25, 1700000000.25),
        (1700000000123, 1700000000.123),
        ("1700000000", 1700000000.0),
        ("2023-11-14T22:13:20Z", 1700000000.0),
        ("2023-11-14T22:13:20.500+00:00", 1700000000.5),
        ("2023-11-14T23:13:20+01:00", 1700000000.0),
        ("2023-11-14T22:13:20", 1700000000.0),  # naive means UTC
    ],
)
def test_generic_timestamp_variants(ts: Any, expected: float) -> None:
    raw = json.dumps({"session_id": "s", "role": "user", "content": "x", "ts": ts}).encode()
    [turn] = parse_jsonl_line(raw, path="/a", lineno=1)
    assert turn.ts == pytest.approx(expected)


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"role": "user", "content": "x"}, 'missing "session_id"'),
        ({"session_id": ["s"], "role": "user", "content": "x"}, '"session_id" must be a string'),
        ({"session_id": "s", "role": "user"}, 'missing "content"'),
        ({"session_id": "s", "role": "user", "content": 3}, "must be a string or an array"),
        ({"session_id": "s", "role": 1, "content": "x"}, '"role"'),
        (
            {"session_id": "s", "role": "user", "content": "x", "ts": True},
            '"ts" must be a time .*got boolean',
        ),
        (
            {"session_id": "s", "role": "user", "content": "x", "ts": [1]},
            '"ts" must be a time .*got array',
        ),
        ({"session_id": "s", "role": "user", "content": "x", "project": 5}, '"project" must be'),
        ({"session_id": "s", "role": "user", "content": "x", "id": {"a": 1}}, '"id" must be'),
    ],
)
def test_generic_missing_or_bad_fields_raise(record: dict[str, Any], reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_jsonl_line(json.dumps(record).encode(), path="/a", lineno=3)


def test_generic_nan_timestamp_is_rejected() -> None:
    raw = b'{"session_id": "s", "role": "user", "content": "x", "ts": NaN}'
    with pytest.raises(ParseError, match='"ts": nan is not a time'):
        parse_jsonl_line(raw, path="/a", lineno=1)


# --------------------------------------------------------------------------- OpenAI messages


def test_openai_fixture() -> None:
    path = FIXTURES / "openai_messages.jsonl"
    parsed = parse_file(path)
    first, second = parsed[1], parsed[2]
    assert isinstance(first, list) and isinstance(second, list)

    assert [(t.turn_id, t.role, t.text, t.parent_id) for t in first] == [
        ("conv-1:1", "user", "Hi, I'm Ana and I live in Lisbon.", ""),
        ("conv-1:2", "assistant", "Hello Ana!", "conv-1:1"),
    ]
    assert {(t.source, t.session_id, t.session_title, t.line) for t in first} == {
        ("openai", "conv-1", "Greeting", 1)
    }
    assert first[0].ts == iso("2026-01-02T03:04:05")
    assert first[1].ts == 1767323046.0

    session = second[0].session_id
    assert len(session) == 40
    # The tool-calling assistant message (content null) and the tool message are skipped.
    assert [(t.turn_id, t.role, t.text, t.ts) for t in second] == [
        (f"{session}:0", "user", "What's the weather?", 0.0),
        (f"{session}:3", "assistant", "It is sunny.", 0.0),
    ]
    assert comparable(parse_file(path)) == comparable(parsed)


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"messages": "hi"}, '"messages" must be an array'),
        ({"messages": ["hi"]}, r"messages\[0\] is not an object"),
        ({"messages": [{"content": "hi"}]}, r'messages\[0\] has no "role"'),
        ({"messages": [{"role": "user", "content": 5}]}, r"messages\[0\].content must be"),
        ({"id": 1.5, "messages": []}, '"id" must be a string or an integer'),
    ],
)
def test_openai_bad_lines_raise(record: dict[str, Any], reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_jsonl_line(json.dumps(record).encode(), path="/a", lineno=1)


# --------------------------------------------------------------------------- ChatGPT export


@pytest.fixture(scope="module")
def chatgpt() -> ChatGPTImport:
    path = FIXTURES / "chatgpt_conversations.json"
    return parse_chatgpt_export(path.read_bytes(), path=str(path))


def test_chatgpt_follows_only_the_current_branch(chatgpt: ChatGPTImport) -> None:
    trip = [t for t in chatgpt.turns if t.session_title == "Trip plan"]
    assert [(t.turn_id, t.role, t.text) for t in trip] == [
        ("u1", "user", "Plan 3 days in Kyoto"),
        ("a1", "assistant", "Day 1: Fushimi Inari.\nDay 2: Arashiyama."),
        ("u2", "user", "[image]\nIs this temple on the list?"),
        ("a3", "assistant", "Yes, that is Kinkaku-ji; it is on day 2."),
    ]
    assert all("abandoned" not in t.text and "OLD ANSWER" not in t.text for t in chatgpt.turns)
    assert [t.parent_id for t in trip] == ["", "u1", "a1", "u2"]
    assert {(t.source, t.session_id, t.source_path) for t in trip} == {
        (
            "chatgpt",
            "6650aaaa-0000-4000-8000-00000000c0c1",
            str(FIXTURES / "chatgpt_conversations.json"),
        )
    }
    assert [t.ts for t in trip] == [1700000010.0, 1700000030.0, 1700000040.0, 1700000043.0]


def test_chatgpt_conversation_id_and_time_fallbacks(chatgpt: ChatGPTImport) -> None:
    diet = [t for t in chatgpt.turns if t.session_title == "Diet"]
    assert [(t.session_id, t.turn_id, t.text, t.ts) for t in diet] == [
        (
            "6650bbbb-0000-4000-8000-00000000c0c2",
            "v1",
            "remember that I am vegetarian",
            1700100000.0,
        ),
        ("6650bbbb-0000-4000-8000-00000000c0c2", "ok", "Noted: you are vegetarian.", 1700100004.0),
    ]


def test_chatgpt_stats(chatgpt: ChatGPTImport) -> None:
    assert chatgpt.conversations == 2
    assert chatgpt.skipped == {
        "system": 1,
        "tool_call": 1,
        "tool": 1,
        "unsupported_content": 3,  # user_editable_context, thoughts, reasoning_recap
        "empty": 1,
        "malformed_conversation": 1,
    }


def test_chatgpt_accepts_text_and_decoded_list() -> None:
    text = (FIXTURES / "chatgpt_conversations.json").read_text()
    from_text = parse_chatgpt_export(text)
    from_list = parse_chatgpt_export(json.loads(text))
    assert from_text == from_list
    assert {t.source_path for t in from_text.turns} == {""}


def test_chatgpt_missing_current_node_takes_the_newest_leaf() -> None:
    def msg(i: str, role: str, text: str, t: float) -> dict[str, Any]:
        return {
            "id": i,
            "author": {"role": role},
            "create_time": t,
            "content": {"content_type": "text", "parts": [text]},
        }

    conv = {
        "id": "c",
        "mapping": {
            "r": {"id": "r", "message": None, "parent": None, "children": ["u"]},
            "u": {
                "id": "u",
                "message": msg("u", "user", "q", 1.0),
                "parent": "r",
                "children": ["x", "y"],
            },
            "x": {
                "id": "x",
                "message": msg("x", "assistant", "old", 2.0),
                "parent": "u",
                "children": [],
            },
            "y": {
                "id": "y",
                "message": msg("y", "assistant", "new", 3.0),
                "parent": "u",
                "children": [],
            },
        },
    }
    result = parse_chatgpt_export([conv])
    assert [t.text for t in result.turns] == ["q", "new"]


def test_chatgpt_cyclic_or_dangling_parents_terminate() -> None:
    def node(i: str, parent: str | None) -> dict[str, Any]:
        message = {
            "id": i,
            "author": {"role": "user"},
            "content": {"content_type": "text", "parts": [i]},
        }
        return {"id": i, "message": message, "parent": parent, "children": []}

    cyclic = {"id": "c", "current_node": "a", "mapping": {"a": node("a", "b"), "b": node("b", "a")}}
    dangling = {"id": "d", "current_node": "a", "mapping": {"a": node("a", "gone")}}
    result = parse_chatgpt_export([cyclic, dangling])
    assert [(t.session_id, t.text) for t in result.turns] == [("c", "b"), ("c", "a"), ("d", "a")]


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"{not json", "not valid JSON"), ('{"id": "x"}', "JSON array of conversations, got object")],
)
def test_chatgpt_rejects_non_arrays(data: bytes | str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as info:
        parse_chatgpt_export(data, path="/export/conversations.json")
    assert info.value.path == "/export/conversations.json"


def test_chatgpt_non_object_conversations_are_counted() -> None:
    result = parse_chatgpt_export([1, "x", {"id": "y", "mapping": {}, "current_node": "nope"}])
    assert result == ChatGPTImport(turns=[], conversations=0, skipped={"malformed_conversation": 3})
