"""Cline, Roo Code, Continue and Aider read live through the one ingestor and by a real daemon:
documents rewritten in place (Cline and Continue write the whole file again; Cline without a
temporary file, so it can be caught half written), appended histories (Aider), folders that appear
after memd started, files rewritten shorter; problems named in `status`, nothing lost."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.conversations import inventory, sources
from memd.conversations.logs import LogIngestor
from memd.conversations.sources import Where
from memd.core.settings import SettingValue, load
from memd.db import Store
from tests.conversations.helpers import rows
from tests.utils import DaemonProcess, wait_for

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CLINE_TASK = "1767644899093"
ROO_TASK = "0198f1c2-7a3e-7b41-9c55-2f1e8d0c4a10"
ROO_SUBTASK = "0198f1c9-1b2d-74e0-8a61-5b3c9e7f2d21"
CONTINUE_ID = "c9b1f7a2-3d44-4e0b-9a1c-6f2e8b7d5a13"


def configured(home: Path, **settings: SettingValue) -> sources.Configured:
    s = load(env={"MEMD_HOME": str(home / "memd")}, overrides=settings, use_file=False)
    return sources.configured(s.value, Where(home, {}, "linux"))


@pytest.fixture
def user(tmp_path: Path) -> Path:
    (tmp_path / "u").mkdir()
    return tmp_path / "u"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.fixture
def ingestor(store: Store, user: Path, workspace: Path) -> Iterator[LogIngestor]:
    picked = configured(user, **{"memory.workspaces": [str(workspace)]})
    ing = LogIngestor(store, list(picked.sources), poll_s=60, debounce_s=0.02)
    yield ing
    ing.stop()


def texts(store: Store, source: str) -> list[str]:
    return [
        r[0] for r in rows(store, "SELECT text FROM turns WHERE source = ? ORDER BY ts, id", source)
    ]


def storage(user: Path, ext_id: str, editor: str = "Code") -> Path:
    return user / ".config" / editor / "User" / "globalStorage" / ext_id


def records(task: str = CLINE_TASK) -> list[dict[str, Any]]:
    return list(json.loads((FIXTURES / "cline" / task / "ui_messages.json").read_bytes()))


def test_registry_has_every_editor_and_the_workspaces(user: Path, workspace: Path) -> None:
    got = {
        (s.assistant, s.format, s.root)
        for s in configured(user, **{"memory.workspaces": [str(workspace)]}).sources
    }
    assert {
        ("cline", "cline", storage(user, "saoudrizwan.claude-dev") / "tasks"),
        ("cline", "cline", storage(user, "saoudrizwan.claude-dev", "Cursor") / "tasks"),
        ("cline", "cline", user / ".cline" / "data" / "tasks"),
        ("roo-code", "roo-code", storage(user, "rooveterinaryinc.roo-cline", "Windsurf") / "tasks"),
        ("continue", "continue", user / ".continue" / "sessions"),
        ("aider", "aider", workspace),
    } <= got
    chosen: dict[str, SettingValue] = {"logs.aider_dir": str(user / "p"), "logs.roo_code": False}
    picked = configured(user, **chosen)
    assert {s.root for s in picked.sources if s.assistant == "aider"} == {user / "p"}
    assert "roo-code" not in {s.assistant for s in picked.sources}


def test_cline_task_folder_appears_then_is_rewritten_in_place(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    ingestor.start()  # no editor has Cline yet
    wait_for(lambda: ingestor.watcher is not None and ingestor.watcher.waiting_for, 10)
    task = storage(user, "saoudrizwan.claude-dev") / "tasks" / CLINE_TASK
    task.mkdir(parents=True)
    path = task / "ui_messages.json"
    first = records()[:3]
    path.write_text(json.dumps(first))
    wait_for(lambda: len(texts(store, "cline")) == 1, 30)
    # Cline writes the whole array again after every message (no temporary file).
    path.write_text(json.dumps(records()))
    wait_for(lambda: len(texts(store, "cline")) == 6, 30)
    [(project,)] = rows(store, "SELECT DISTINCT project FROM turns WHERE source = 'cline'")
    assert project == "/home/user/code/invoice-app"
    assert not [t for t in texts(store, "cline") if "Still streaming" in t or "PASSED" in t]


def test_cline_caught_mid_write_keeps_what_is_complete_and_reads_again(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    path = storage(user, "saoudrizwan.claude-dev") / "tasks" / CLINE_TASK / "ui_messages.json"
    path.parent.mkdir(parents=True)
    whole = json.dumps(records())
    path.write_text(whole[: whole.index('"user_feedback"') + 40])  # cut inside a record
    ingestor.scan(quick=True)
    assert len(texts(store, "cline")) == 3  # the complete records before the cut
    assert any(
        "ends early" in b and "ui_messages.json" in b for b in ingestor.status().recent_bad_lines
    )
    path.write_text(whole)
    ingestor.scan(quick=True)
    assert len(texts(store, "cline")) == 6
    assert ingestor.status().recent_bad_lines == [
        b for b in ingestor.status().recent_bad_lines if "memd does not know" in b
    ]
    # A checkpoint restored in Cline rewrites the file shorter: what memd kept stays.
    path.write_text(json.dumps(records()[:3]))
    ingestor.scan(quick=True)
    assert len(texts(store, "cline")) == 6


def test_roo_code_tasks_their_history_items_and_subtasks(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    tasks = storage(user, "rooveterinaryinc.roo-cline", "VSCodium") / "tasks"
    tasks.mkdir(parents=True)
    for task in (ROO_TASK, ROO_SUBTASK):
        shutil.copytree(FIXTURES / "roo" / task, tasks / task)
    ingestor.scan()
    said = texts(store, "roo-code")
    assert len(said) == 6 and "mention that the maintenance window is Sunday 02:00 UTC" in said
    assert not [t for t in said if "Write docs/cutover.md" in t or "Subtask finished" in t]
    assert {r[0] for r in rows(store, "SELECT project FROM turns WHERE source = 'roo-code'")} == {
        "/home/user/billing"
    }


def test_continue_sessions_and_their_index(ingestor: LogIngestor, store: Store, user: Path) -> None:
    folder = user / ".continue" / "sessions"
    folder.mkdir(parents=True)
    for name in ("sessions.json", f"{CONTINUE_ID}.json", "b2.json"):
        shutil.copy(FIXTURES / "continue" / name, folder / name)
    ingestor.scan()
    assert len(texts(store, "continue")) == 6
    ts = rows(store, "SELECT min(ts) FROM turns WHERE session_id = ?", CONTINUE_ID)[0][0]
    assert ts == 1790848800.0  # dateCreated in the index
    # Continue rewrites the session with a new exchange; the index holds no turns.
    doc = json.loads((folder / f"{CONTINUE_ID}.json").read_text())
    doc["history"].append(
        {
            "message": {"role": "user", "content": "and the e2e suite?", "id": "new-1"},
            "contextItems": [],
        }
    )
    (folder / f"{CONTINUE_ID}.json").write_text(json.dumps(doc))
    ingestor.scan(quick=True)
    assert "and the e2e suite?" in texts(store, "continue")
    assert not [b for b in ingestor.status().recent_bad_lines if "sessions.json" in b]


def test_aider_history_appended_live_in_a_workspace(
    ingestor: LogIngestor, store: Store, workspace: Path
) -> None:
    ingestor.start()
    history = workspace / ".aider.chat.history.md"
    data = (FIXTURES / "aider" / ".aider.chat.history.md").read_text()
    cut = data.index("#### /code")
    history.write_text(data[:cut])  # the first exchange only
    wait_for(lambda: len(texts(store, "aider")) == 2, 30)
    with open(history, "a", encoding="utf-8") as f:  # Aider appends as the chat goes
        f.write(data[cut:])
    wait_for(lambda: len(texts(store, "aider")) == 7, 30)
    assert {r[0] for r in rows(store, "SELECT project FROM turns WHERE source = 'aider'")} == {
        str(workspace)
    }
    # Only the workspace's own entries are watched, never the project's tree.
    assert ingestor.watcher is not None
    (workspace / "src" / "deep").mkdir(parents=True)
    (workspace / "src" / "deep" / ".aider.chat.history.md").write_text(data)
    ingestor.scan(quick=True)
    assert len(texts(store, "aider")) == 7


def test_inventory_lists_them(ingestor: LogIngestor, store: Store, user: Path) -> None:
    path = storage(user, "saoudrizwan.claude-dev") / "tasks" / CLINE_TASK / "ui_messages.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(records()))
    ingestor.scan()
    picked = configured(user)
    found = {
        f.name: f for f in inventory.assistants(store.read(), picked.choices, ingestor.problems)
    }
    assert {"cline", "roo-code", "continue", "aider"} <= set(found)
    assert (found["cline"].found, found["cline"].files, found["cline"].turns) == (True, 1, 6)
    assert (found["continue"].found, found["roo-code"].found) == (False, False)
    assert any("memd does not know" in p for p in found["cline"].problems)


def test_a_daemon_hears_cline_started_after_it_and_names_it(home: Path) -> None:
    user = Path.home()  # this test's own HOME (see conftest)
    d = DaemonProcess(home).start()
    try:
        task = storage(user, "saoudrizwan.claude-dev", "Cursor") / "tasks" / CLINE_TASK
        task.mkdir(parents=True)
        (task / "ui_messages.json").write_text(json.dumps(records()))

        def hits() -> list[dict[str, Any]]:
            out = d.cli("search", "accountant", "--json")
            return [h for h in json.loads(out.stdout)["hits"] if h["kind"] == "turn"]

        wait_for(lambda: hits(), 30)
        assert {h["source"] for h in hits()} == {"cline"}
        status = d.cli("status").stdout
        assert "Cline (cline): 1 file, 6 turns in 1 session" in status, status
        assert (
            "Roo Code (roo-code): not found" in status
            and "Continue (continue): not found" in status
        )
    finally:
        d.stop()


def test_aider_histories_in_folders_conversations_were_held_in(
    store: Store, tmp_path: Path
) -> None:
    from memd.conversations.aider_folders import AiderFolders
    from memd.conversations.ingest import write_turns
    from memd.core.models import Turn

    held, plain = tmp_path / "held", tmp_path / "plain"
    for folder in (held, plain):
        folder.mkdir()
    (held / ".aider.chat.history.md").write_text("# aider chat started at 2026-01-01 10:00:00\n")
    turns = [
        Turn("claude-code", f"s-{f.name}", "t1", "user", "hi", 1.7e9, project=str(f))
        for f in (held, plain)
    ]
    store.w.run(lambda c: write_turns(c, turns))
    finder = AiderFolders(store, lambda: True, lambda: 0.0)
    [found] = finder.find([])
    assert (found.root, found.format, found.assistant) == (held, "aider", "aider")
    assert finder.find([held]) == []  # read already
    assert AiderFolders(store, lambda: False, lambda: 0.0).due() is False  # logs.aider off
    every = [60.0]  # `logs.aider_folders_s`, read at every look
    later = AiderFolders(store, lambda: True, lambda: every[0])
    later.find([])
    assert later.due() is False
    every[0] = 0.0
    assert later.due() is True


def test_a_daemon_reads_aider_in_a_folder_a_client_named(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".aider.chat.history.md").write_bytes(
        (FIXTURES / "aider" / ".aider.chat.history.md").read_bytes()
    )
    # The folders sessions were held in are looked at every `logs.aider_folders_s` (a minute by
    # default) when the log folders are polled; here both every second, not once a minute.
    d = DaemonProcess(home, MEMD_LOGS_AIDER_FOLDERS_S="1", MEMD_LOGS_POLL_S="1").start()
    try:
        pushed = {
            "turns": [
                {
                    "session_id": "c1",
                    "role": "user",
                    "content": "hello",
                    "ts": 1.7e9,
                    "project": str(project),
                }
            ]
        }
        d.call("ingest", pushed)

        def aider_hits() -> list[dict[str, Any]]:
            found = d.call("search", {"query": "yubikey", "scope": "conversations"})["hits"]
            return [h for h in found if h.get("source") == "aider"]

        wait_for(lambda: aider_hits(), 60)
    finally:
        d.stop()


def test_a_fork_of_cline_is_read_through_logs_sources(store: Store, user: Path) -> None:
    tasks = user / ".config" / "Code" / "User" / "globalStorage" / "kilocode.kilo-code" / "tasks"
    shutil.copytree(FIXTURES / "cline" / CLINE_TASK, tasks / CLINE_TASK)
    picked = configured(user, **{"logs.sources": [{"path": str(tasks), "format": "cline"}]})
    ing = LogIngestor(store, [s for s in picked.sources if s.root == tasks], poll_s=60)
    try:
        ing.scan()
    finally:
        ing.stop()
    assert len(texts(store, "cline")) == 6
