"""The whole-document formats of Cline, Roo Code, Continue and Aider: what was said becomes
turns, what was not (reasoning, tools and their output, injected context, relays, sub-agents,
partial messages) never does, ids are stable across re-reads, and bad input names a problem
while the rest is read."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memd.conversations.formats.aider import drop_edits, parse_aider_history
from memd.conversations.formats.cline import parse_cline_task, task_history_item
from memd.conversations.formats.continue_dev import (
    continue_session_dates,
    parse_continue_session,
    workspace_path,
)
from memd.conversations.formats.document import ParsedDocument, load_json, strip_reasoning

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CLINE_TASK = FIXTURES / "cline" / "1767644899093"
ROO_TASK = FIXTURES / "roo" / "0198f1c2-7a3e-7b41-9c55-2f1e8d0c4a10"
ROO_SUBTASK = FIXTURES / "roo" / "0198f1c9-1b2d-74e0-8a61-5b3c9e7f2d21"
CONTINUE = FIXTURES / "continue"
CONTINUE_ID = "c9b1f7a2-3d44-4e0b-9a1c-6f2e8b7d5a13"
AIDER = FIXTURES / "aider"


def cline(folder: Path = CLINE_TASK, data: bytes | None = None, **kw: Any) -> ParsedDocument:
    raw = (folder / "ui_messages.json").read_bytes() if data is None else data
    return parse_cline_task(raw, path=str(folder), task_id=folder.name, **kw)


def roo(folder: Path = ROO_TASK) -> ParsedDocument:
    return cline(folder, source="roo-code", meta=(folder / "history_item.json").read_bytes())


def cont(name: str = CONTINUE_ID, data: bytes | None = None) -> ParsedDocument:
    path = CONTINUE / f"{name}.json"
    dates = continue_session_dates((CONTINUE / "sessions.json").read_bytes())
    raw = path.read_bytes() if data is None else data
    return parse_continue_session(
        raw, path=str(path), session_hint=name, created=dates.get(name, 0.0)
    )


def aider(data: bytes | None = None, inputs: bytes | None = b"") -> ParsedDocument:
    raw = (AIDER / ".aider.chat.history.md").read_bytes() if data is None else data
    history = (AIDER / ".aider.input.history").read_bytes() if inputs == b"" else inputs
    return parse_aider_history(
        raw, path="/p/.aider.chat.history.md", project="/p", input_history=history, tz=UTC
    )


def roo_subtask() -> ParsedDocument:
    return roo(ROO_SUBTASK)


def said(doc: ParsedDocument) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in doc.turns]


def local(value: str) -> float:
    return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp()


# ----------------------------------------------------------------------------- what was said

SAID: list[tuple[str, Callable[[], ParsedDocument], list[tuple[str, str]]]] = [
    (
        "cline",
        cline,
        [
            ("user", "the invoice totals are off by one cent, we round with banker's rounding"),
            ("assistant", "The totals are summed as doubles; I will switch the invoice lines to integer cents."),
            ("assistant", "Should the rounding happen per line or on the invoice total?"),
            ("user", "on the total, the accountant insists on that"),
            ("assistant", "Plan: keep amounts as integer cents and round once on the invoice total."),
            ("assistant", "Invoice totals now round once, on the total, using integer cents."),
        ],
    ),
    (
        "roo-code",
        roo,
        [
            ("user", "Plan the migration of the billing service from Postgres 14 to 16; we must keep logical replication to the reporting replica."),
            ("assistant", "Logical replication slots survive pg_upgrade only from 17 on, so we recreate the subscription after the upgrade."),
            ("assistant", "Can the reporting replica lag for an hour during the cutover?"),
            ("user", "No, at most five minutes"),
            ("assistant", "The cutover plan keeps replica lag under five minutes by pre-creating the publication on 16."),
        ],
    ),
    # A sub-task: the parent agent's instructions and the sub-agent's replies are not said to
    # the user; what the user wrote into it is.
    ("roo-code subtask", roo_subtask, [("user", "mention that the maintenance window is Sunday 02:00 UTC")]),
    (
        "continue",
        cont,
        [
            ("user", "why does the login test fail only on CI? we use the Europe/Paris timezone locally"),
            ("assistant", "The session expiry is computed at local midnight, and CI runs in UTC."),
            ("user", "pin the test clock to UTC then"),
            ("assistant", "Done: the test now sets TZ=UTC before importing the session module."),
        ],
    ),
    (
        "aider",
        aider,
        [
            ("user", "the release script must sign tags with the yubikey, never with the file key"),
            ("assistant", "I'll make `scripts/release.sh` sign tags with the YubiKey-backed GPG key.\n\nThe file key is no longer used anywhere."),
            ("user", "also print which key was used"),
            ("assistant", "Sure:"),
            ("user", "what does `git tag -s` need\nwhen gpg-agent runs under systemd?"),
            ("user", "move the changelog generation into its own script"),
            ("assistant", "The changelog generation should live in `scripts/changelog.sh`, called from `release.sh` before tagging."),
        ],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "parse", "expected"), SAID, ids=[s[0] for s in SAID])
def test_only_what_was_said_becomes_turns(
    name: str, parse: Callable[[], ParsedDocument], expected: list[tuple[str, str]]
) -> None:
    doc = parse()
    assert said(doc) == expected
    assert all(t.source == t.agent_id for t in doc.turns)


NOT_SAID = [
    # reasoning, tool and command output, injected context, relays, partial and pasted files
    "Probably double arithmetic",
    "PASSED",
    "environment_details",
    "Current Working Directory",
    "Still streaming",
    "newer version writes",
    "replace_in_file",
    "Read the README first",
    "Subtask finished",
    "Summary of the conversation",
    "Write docs/cutover.md",
    "Writing the cutover plan",
    "CI is UTC",
    "file contents",
    "400 lines of test code",
    "helpful assistant",
    "lots of prompt",
    "Check scripts/release.sh",
    "GPG_TTY",
    "<<<<<<<",
    "git tag -a",
    "+echo",
    "#!/bin/sh",
    "Applied edit",
    "Tokens:",
    "/run",
    "/code",
    "(Y)es",
    "<blank>",
]


@pytest.mark.parametrize("fragment", NOT_SAID)
def test_what_was_not_said_is_in_no_turn(fragment: str) -> None:
    parsers: list[Callable[[], ParsedDocument]] = [cline, roo, roo_subtask, cont, aider]
    texts = [t.text for parse in parsers for t in parse().turns]
    assert not [t for t in texts if fragment in t]


# ------------------------------------------------------------------------- ids, times, project


def test_cline_turns_keep_task_times_ids_and_project() -> None:
    doc = cline()
    first = doc.turns[0]
    assert (first.session_id, first.turn_id, first.ts) == (
        "1767644899093",
        "1767644899093",
        1767644899.093,
    )
    assert {t.project for t in doc.turns} == {"/home/user/code/invoice-app"}
    assert [t.parent_id for t in doc.turns[1:]] == [t.turn_id for t in doc.turns[:-1]]
    assert doc.problems == [
        (
            0,
            "1 message(s) skipped, of a kind memd does not know (say:a_kind_from_a_newer_cline): index 13",
        )
    ]


def test_roo_project_and_title_come_from_its_history_item() -> None:
    doc = roo()
    assert {(t.project, t.source, t.session_title) for t in doc.turns} == {
        ("/home/user/billing", "roo-code", "")
    }
    assert doc.problems == []


def test_cline_project_from_its_task_history() -> None:
    index = json.dumps(
        [
            {
                "id": "1700000000001",
                "ts": 1,
                "task": "other",
                "cwdOnTaskInitialization": "/elsewhere",
            },
            {
                "id": "1767644899093",
                "ts": 2,
                "task": "invoice",
                "cwdOnTaskInitialization": "/home/user/inv",
            },
        ]
    ).encode()
    meta = task_history_item(index, "1767644899093")
    assert {t.project for t in cline(meta=meta).turns} == {"/home/user/inv"}
    assert task_history_item(index, "nope") is None
    assert task_history_item(b"[{", "1767644899093") is None


def test_a_rewritten_task_gives_the_same_ids_and_its_completed_message() -> None:
    records = json.loads((CLINE_TASK / "ui_messages.json").read_bytes())
    streaming = records[:7]
    streaming[6] = {**streaming[6], "text": "The totals are", "partial": True}
    before = cline(data=json.dumps(streaming).encode())
    after = cline()
    assert "The totals are" not in [t.text for t in before.turns]
    assert {t.turn_id: t.text for t in before.turns}.items() <= {
        t.turn_id: t.text for t in after.turns
    }.items()


def test_equal_ts_in_one_task_get_distinct_ids() -> None:
    records = [
        {"ts": 1700000000000, "type": "say", "say": "text", "text": "one"},
        {"ts": 1700000000000, "type": "say", "say": "text", "text": "two"},
    ]
    assert [t.turn_id for t in cline(data=json.dumps(records).encode()).turns] == [
        "1700000000000",
        "1700000000000.2",
    ]


def test_continue_times_titles_and_folders() -> None:
    doc = cont()
    assert [t.ts for t in doc.turns] == [1790848800.0, 1790848805.0, 1790848805.0, 1790848805.0]
    assert {(t.project, t.session_title) for t in doc.turns} == {
        ("/home/user/code/my app", "Flaky login test")
    }
    old = cont("b2")
    assert [t.turn_id for t in old.turns] == ["0", "1"]
    assert {(t.session_id, t.session_title, t.project) for t in old.turns} == {
        ("b2", "", "/home/user/code/cli")
    }


@pytest.mark.parametrize(
    ("value", "folder"),
    [
        ("/home/u/app", "/home/u/app"),
        ("file:///home/u/my%20app", "/home/u/my app"),
        ("file:///c%3A/Users/u/app", "c:/Users/u/app"),
        ("", ""),
        (None, ""),
    ],
)
def test_continue_workspace_folders(value: Any, folder: str) -> None:
    assert workspace_path(value) == folder


def test_aider_sessions_times_and_ids() -> None:
    doc = aider()
    sessions = list(dict.fromkeys(t.session_id for t in doc.turns))
    assert len(sessions) == 2
    assert [t.ts for t in doc.turns] == [
        local("2026-03-02 09:15:10.123456"),
        local("2026-03-02 09:15:10.123456"),
        local("2026-03-02 09:22:01.500000"),
        local("2026-03-02 09:22:01.500000"),
        local("2026-03-02 09:30:00"),
        local("2026-03-03 18:41:30.250000"),
        local("2026-03-03 18:41:30.250000"),
    ]
    assert {t.project for t in doc.turns} == {"/p"}
    # Without the input history every turn has its run's start.
    assert {t.ts for t in aider(inputs=None).turns} == {
        local("2026-03-02 09:14:05"),
        local("2026-03-03 18:40:00"),
    }


def test_aider_appended_file_keeps_its_ids() -> None:
    data = (AIDER / ".aider.chat.history.md").read_bytes()
    cut = data[: data.index(b"#### /code")]
    before = {(t.session_id, t.turn_id, t.text) for t in aider(cut).turns}
    after = {(t.session_id, t.turn_id, t.text) for t in aider(data).turns}
    assert before and before <= after


def test_aider_edits_are_dropped_and_prose_kept() -> None:
    reply = (
        "Here is the change.\n\nsrc/app.py\n```python\nprint('whole file')\n```\n\n"
        "```python\nexample = 'kept: an example, not an edit'\n```\n\n"
        "src/b.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n\nDone."
    )
    assert drop_edits(reply) == (
        "Here is the change.\n\n```python\nexample = 'kept: an example, not an edit'\n```\n\nDone."
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("<think>a</think>answer", "answer"),
        ("<thinking>a</thinking>\n\nanswer", "answer"),
        ("answer <think>interrupted, never closed", "answer"),
        ("cut off start of reasoning</think>answer", "answer"),
        (
            "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>x</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>a",
            "a",
        ),
        ("no tags <b>bold</b>", "no tags <b>bold</b>"),
    ],
)
def test_reasoning_spans(text: str, kept: str) -> None:
    assert strip_reasoning(text) == kept


# ------------------------------------------------------------------------------- bad input

BAD: list[tuple[str, Callable[[bytes], ParsedDocument], bytes, int, str]] = [
    # name, parser, data, turns still read, words of the problem
    ("cline mid-write", lambda d: cline(data=d), (CLINE_TASK / "ui_messages.json").read_bytes()[:2000], 1, "ends early"),
    ("cline not an array", lambda d: cline(data=d), b'{"ts": 1}', 0, "expected a JSON array"),
    ("cline binary", lambda d: cline(data=d), b"\x00\x01\x02PNG", 0, "binary"),
    ("cline not utf-8", lambda d: cline(data=d), b'[{"text": "\xff\xfe"}]', 0, "not UTF-8"),
    ("cline empty", lambda d: cline(data=d), b"", 0, "not valid JSON"),
    ("cline record not an object", lambda d: cline(data=d), b'[1, {"ts": 1700000000000, "type": "say", "say": "text", "text": "hi"}]', 1, "not an ask/say record"),
    ("cline bad ts", lambda d: cline(data=d), b'[{"ts": "soon", "type": "say", "say": "text", "text": "hi"}]', 0, "no usable ts"),
    ("continue mid-write", lambda d: cont(data=d), (CONTINUE / f"{CONTINUE_ID}.json").read_bytes()[:900], 0, "not valid JSON"),
    ("continue no history", lambda d: cont(data=d), b'{"sessionId": "x"}', 0, "no history array"),
    ("continue bad item", lambda d: cont(data=d), b'{"sessionId": "x", "history": [3, {"message": {"role": "user", "content": "hi"}}]}', 1, "without a message"),
    ("aider binary", aider, b"\x00\x00\x00\x00 ELF", 0, "binary"),
    ("aider not utf-8", aider, b"# aider chat started at 2026-01-01 10:00:00\n\n#### caf\xe9 latte  \n", 1, "not UTF-8"),
    ("aider bad header", aider, b"# aider chat started at 2026-13-45 99:00:00\n\n#### hello  \n", 1, "unreadable session start"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "parse", "data", "turns", "why"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_a_problem_and_keeps_the_rest(
    name: str, parse: Callable[[bytes], ParsedDocument], data: bytes, turns: int, why: str
) -> None:
    doc = parse(data)
    assert len(doc.turns) == turns
    assert any(why in problem for _, problem in doc.problems), doc.problems


def test_a_cut_array_is_read_up_to_its_last_complete_item() -> None:
    loaded = load_json(b'[{"a": 1},\n {"b": 2},\n {"c": ')
    assert loaded.value == [{"a": 1}, {"b": 2}]
    assert loaded.problem is not None and loaded.problem[0] == 3


def test_huge_tool_output_is_skipped_quickly() -> None:
    records = [
        {"ts": 1700000000000, "type": "say", "say": "text", "text": "run the suite"},
        {"ts": 1700000000001, "type": "say", "say": "command_output", "text": "x" * 20_000_000},
        {"ts": 1700000000002, "type": "say", "say": "completion_result", "text": "all green"},
    ]
    doc = cline(data=json.dumps(records).encode())
    assert said(doc) == [("user", "run the suite"), ("assistant", "all green")]


def test_aider_text_without_a_session_header_is_not_a_turn() -> None:
    assert aider(b"#### stray input  \n\nstray reply\n").turns == []
