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
    assert ingestor.status().recent_bad_lines == []


# -- Aider --------------------------------------------------------------------------------------
def aider_run(started: str, k: int, turns: int) -> str:
    """One run of Aider in its history: the header, Aider's status lines, inputs and replies."""
    out = [
        f"\n# aider chat started at {started}\n",
        "> Aider v0.86.1  ",
        "> Main model: sonnet  ",
        "",
    ]
    for i in range(turns):
        out += [f"#### question {k}.{i} about the build cache  ", "",
                f"Answer {k}.{i}: the cache lives in `.cache/build`.", "",
                "> Tokens: 1.2k sent, 80 received.  ", ""]  # fmt: skip
    return "\n".join(out) + "\n"


def aider_ingestor(store: Store, user: Path, workspace: Path) -> LogIngestor:
    s = load(env={"MEMD_HOME": str(user / "memd")}, use_file=False,
             overrides={"memory.workspaces": [str(workspace)]})  # fmt: skip
    return LogIngestor(store, list(sources.configured(s.value, Where(user, {})).sources),
                       poll_s=60, debounce_s=0.02)  # fmt: skip


def whole(history: Path) -> set[tuple[str, str, str, str]]:
    """The turns of the whole file, parsed at once."""
    from memd.conversations.formats import aider
    from memd.conversations.formats.contract import FileContext

    ctx = FileContext(str(history), "aider", aider.describe(str(history)))
    return {(t.session_id, t.turn_id, t.role, t.text)
            for t in aider.parse_document(history.read_bytes(), ctx).turns}  # fmt: skip


def stored(store: Store) -> set[tuple[str, str, str, str]]:
    return set(
        rows(store, "SELECT session_id, turn_id, role, text FROM turns WHERE source = 'aider'")
    )


def test_an_append_to_an_aider_history_reads_what_was_appended_not_the_whole_file(
    store: Store, user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memd.conversations.formats import aider

    workspace = tmp_path / "shop"
    workspace.mkdir()
    history = workspace / aider.HISTORY_NAME
    history.write_text("".join(aider_run(f"2026-03-{d:02d} 09:00:00", d, 30) for d in range(1, 21)))
    ing = aider_ingestor(store, user, workspace)
    try:
        ing.scan()
        assert stored(store) == whole(history) and len(stored(store)) == 20 * 60
        parsed: list[int] = []
        real = aider.parse_aider_history

        def counting(data: bytes, **kw: object) -> object:
            parsed.append(len(data))
            return real(data, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(aider, "parse_aider_history", counting)
        more = "#### and where do the logs go?  \n\nTo `.cache/logs`.\n\n"
        with open(history, "a", encoding="utf-8") as f:
            f.write(more)
        ing.scan()
        last_run = len(aider_run("2026-03-20 09:00:00", 20, 30).encode()) + len(more)
        size = history.stat().st_size
        assert parsed and max(parsed) <= last_run < size / 10, (parsed, last_run, size)
        assert stored(store) == whole(history) and len(stored(store)) == 20 * 60 + 2
    finally:
        ing.stop()


def test_an_aider_history_read_as_it_grows_gives_what_the_whole_file_gives(
    store: Store, user: Path, tmp_path: Path
) -> None:
    """Runs appended in pieces (a scan after each), runs that start in the same second, a clock
    set back (the same start twice, far apart); then the file truncated and written anew, and
    rewritten at the same size with a run moved: always what the whole file says."""
    from memd.conversations.formats import aider

    workspace = tmp_path / "shop"
    workspace.mkdir()
    history = workspace / aider.HISTORY_NAME
    starts = ["2026-03-02 09:00:00", "2026-03-02 10:00:00", "2026-03-02 10:00:00",
              "2026-03-02 09:30:00", "2026-03-02 10:00:00", "2026-03-02 11:00:00"]  # fmt: skip
    text = "".join(aider_run(s, k, 4) for k, s in enumerate(starts))
    lines = text.splitlines(keepends=True)
    ing = aider_ingestor(store, user, workspace)
    try:
        history.write_text("")
        step = 7
        for i in range(0, len(lines), step):
            with open(history, "a", encoding="utf-8") as f:
                f.write("".join(lines[i : i + step]))
            ing.scan()
            assert whole(history) <= stored(store)
        assert stored(store) == whole(history)
        assert len({sid for sid, *_ in stored(store)}) == len(starts)  # one session per run
        # Truncated and written anew (the person deleted it; Aider started again).
        history.write_text(
            aider_run("2026-04-01 08:00:00", 98, 3) + aider_run("2026-04-01 09:00:00", 99, 3)
        )
        ing.scan()
        assert whole(history) <= stored(store)
        # Rewritten at the same size, a word of the run before the last changed: read whole again.
        history.write_text(history.read_text().replace("question 98.2", "question 77.2"))
        ing.scan()
        assert ("user", "question 77.2 about the build cache") in {
            (r, t) for _, _, r, t in stored(store)
        }
        assert whole(history) <= stored(store)
    finally:
        ing.stop()
