"""Gaps of the assistants' readers, each through the one ingestor with files shaped like the real
ones: a Gemini CLI prompt read from ``logs.json`` before its chat appeared is stored once;
Gemini CLI's ``/chat save`` checkpoints are not read; Aider's history is read from where the
last read ended, not whole, on each append."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.conversations import sources
from memd.conversations.logs import LogIngestor
from memd.conversations.sources import Where
from memd.core.settings import load
from memd.db import Store
from tests.assistants import (
    T0,
    Said,
    gemini_chat_path,
    gemini_header,
    gemini_message,
    gemini_project,
    iso,
    jsonl,
)
from tests.conversations.helpers import rows


@pytest.fixture
def user(tmp_path: Path) -> Path:
    (tmp_path / "u").mkdir()
    return tmp_path / "u"


def ingestor_of(store: Store, user: Path) -> LogIngestor:
    s = load(env={"MEMD_HOME": str(user / "memd")}, use_file=False)
    found = sources.configured(s.value, Where(user, {})).sources
    return LogIngestor(store, list(found), poll_s=60, debounce_s=0.02)


@pytest.fixture
def ingestor(store: Store, user: Path) -> Iterator[LogIngestor]:
    ing = ingestor_of(store, user)
    yield ing
    ing.stop()


def turns_of(store: Store, source: str) -> list[tuple[str, str, str]]:
    return [
        (r[0], r[1], r[2])
        for r in rows(
            store, "SELECT role, text, turn_id FROM turns WHERE source = ? ORDER BY ts, id", source
        )
    ]


# -- Gemini CLI ---------------------------------------------------------------------------------
SID = "0199eeee-0000-7000-8000-000000000000"


def prompt(mid: int, text: str, ts: float) -> dict[str, object]:
    return {"sessionId": SID, "messageId": mid, "type": "user", "message": text,
            "timestamp": iso(ts)}  # fmt: skip


def test_a_gemini_prompt_read_from_logs_json_before_its_chat_appeared_is_stored_once(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    """Gemini CLI logs a prompt in logs.json a moment before its chat records it: read in
    between, the prompt comes from logs.json (no chat yet); the chat's copy is the same turn."""
    folder = gemini_project(user / ".gemini", "/home/u/api")
    logs = folder / "logs.json"
    logs.write_text(json.dumps([prompt(0, "deploy the api to staging", T0)]))
    ingestor.scan()
    assert [t[:2] for t in turns_of(store, "gemini")] == [("user", "deploy the api to staging")]
    chat = gemini_chat_path(folder, SID)
    said = [
        Said("user", "deploy the api to staging", T0 + 0.3),
        Said("assistant", "Deployed.", T0 + 4),
    ]
    chat.write_text(jsonl([gemini_header(SID), *(gemini_message(s) for s in said)]))
    ingestor.scan()
    assert turns_of(store, "gemini") == [
        ("user", "deploy the api to staging", "prompt:0"),
        ("assistant", "Deployed.", turns_of(store, "gemini")[1][2]),
    ]
    # "continue" typed twice: two prompts, each stored once, whichever file is read first.
    logs.write_text(json.dumps([prompt(0, "deploy the api to staging", T0),
                                prompt(1, "continue", T0 + 60), prompt(2, "continue", T0 + 300)]))  # fmt: skip
    ingestor.scan()  # the session has a chat now: its prompts come from there
    with open(chat, "a", encoding="utf-8") as f:
        f.write(jsonl([gemini_message(Said("user", "continue", T0 + 60.2)),
                       gemini_message(Said("user", "continue", T0 + 300.1))]))  # fmt: skip
    ingestor.scan()
    got = turns_of(store, "gemini")
    assert [(r, t) for r, t, _ in got] == [
        ("user", "deploy the api to staging"), ("assistant", "Deployed."),
        ("user", "continue"), ("user", "continue"),
    ]  # fmt: skip
    assert [i for _, _, i in got if i.startswith("prompt:")] == ["prompt:0", "prompt:1", "prompt:2"]
    # Both files read in one scan into a new index (a rebuild): the same turns, the same ids.
    again = Store.open(user / "rebuilt.db")
    try:
        fresh = ingestor_of(again, user)
        fresh.scan()
        fresh.stop()
        assert sorted(turns_of(again, "gemini")) == sorted(got)
    finally:
        again.close()


def test_gemini_chat_save_checkpoints_are_not_read(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    """`/chat save <tag>` (`/resume save` today) writes the conversation so far as Gemini API
    contents, without session, ids or times: the chat holds the same messages (docs)."""
    folder = gemini_project(user / ".gemini", "/home/u/api")
    history = [
        {"role": "user", "parts": [{"text": "<session_context>…</session_context>"}]},
        {"role": "user", "parts": [{"text": "rename the endpoint"}]},
        {"role": "model", "parts": [{"text": "Renamed to /v2/items."}]},
    ]
    (folder / "checkpoint-before-refactor.json").write_text(
        json.dumps({"history": history, "authType": "gemini-api-key"}, indent=2)
    )
    (folder / "checkpoint-old.json").write_text(json.dumps(history, indent=2))  # older versions
    assert ingestor.scan() == []
    assert turns_of(store, "gemini") == []
    assert ingestor.status()["recent_bad_lines"] == []
