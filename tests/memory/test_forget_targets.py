"""`forget` targets memory items: not the journal's conversation records (a conversation is
forgotten with `forget --session`), nor the status lines memd keeps in an agent's relationship
file; the page says who wrote each line and offers forget only for memory items."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from memd.core.errors import InvalidParams
from memd.memory import authorship
from tests import forkserver
from tests.ui.uihelp import UiProcess
from tests.utils import DaemonProcess, memd_env, wait_for

RELATIONSHIP = """# Agent Relationship

## Basic Status
<!-- memd: kept by memd from your conversations. -->
- Trust Level: 62/100
- Familiarity: 40/100
- Total Interactions: 12 sessions, 230 turns

## Current Mood
- Status: pleased
- Notes: 2026-03-02 "Fix the vitest config": thanks

## Memory Points
- Keep vitest output short
"""


def test_who_wrote_a_line() -> None:
    rel = "agents/ally/relationship.md"
    assert authorship.writer(rel, "Basic Status", "Trust Level: 62/100", {}) == "status"
    assert authorship.writer(rel, "Current Mood", "Status: pleased", {}) == "status"
    assert authorship.writer(rel, "Memory Points", "Status: a point", {}) == "hand"
    assert authorship.writer(rel, "Basic Status", "my own note", {}) == "hand"
    assert authorship.writer(rel, "Memory Points", "x", {"id": "m_1"}) == "memory"
    assert authorship.writer("journal/2026-01-02.md", "q · s1", "**Q:** x", {"turn": "t"}) == (
        "journal"
    )
    assert authorship.writer("topics/vue.md", "Basic Status", "Trust Level: 1", {}) == "hand"


def ingest_vitest(d: DaemonProcess) -> Path:
    d.call("ingest", {"turns": [
        {"session_id": "s1", "id": "t1", "role": "user", "content": "We run vitest in watch mode"},
        {"session_id": "s1", "id": "t2", "role": "assistant", "content": "Noted, watch mode."},
    ]})  # fmt: skip
    journal: Path = wait_for(lambda: list((d.memory / "journal").glob("*.md")), 20)[0]
    wait_for(lambda: "vitest" in journal.read_text() and d.search_paths("watch mode"), 20)
    return journal


def test_forget_offers_memory_items_only(daemon: DaemonProcess) -> None:
    d = daemon
    journal = ingest_vitest(d)
    rel = d.memory / "agents" / "ally" / "relationship.md"
    rel.parent.mkdir(parents=True)
    rel.write_text(RELATIONSHIP)
    kept = d.call("remember", {"text": "always use vitest"})
    wait_for(lambda: str(rel) in d.search_paths("Familiarity"), 10)

    cands = d.call("forget", {"query": "vitest"})["candidates"]
    assert {c["text"] for c in cands} == {"always use vitest", "Keep vitest output short"}
    assert not any(c["path"] == str(journal) for c in cands)
    # The status lines memd keeps are not memories: not listed, not offered, not forgotten.
    assert d.call("forget", {"query": "Trust Level"})["candidates"] == []
    listed = [i["text"] for i in d.call("memories", {})["items"]]
    assert "Keep vitest output short" in listed and not any("Trust" in t for t in listed)
    assert "watch mode" not in d.cli("memories").stdout  # the journal holds no memory items
    hits = d.call("search", {"query": "watch mode", "scope": "memory"})["hits"]
    assert hits and hits[0]["path"] == str(journal)

    out = d.cli("forget", "vitest", "--yes")
    assert out.returncode == 0, out.stderr
    assert "always use vitest" in out.stdout and "watch mode" not in out.stdout
    assert "vitest" in journal.read_text()  # the conversation record stays
    assert d.call("recall", {"query": "watch mode"})["sessions"]  # and the turn with it
    assert kept["id"] not in (d.memory / "_core" / "notes.md").read_text()
    assert "Trust Level: 62/100" in rel.read_text()


def test_forget_by_id_refuses_a_journal_line_and_a_status_line(home: Path) -> None:
    from memd.api import messages as m
    from memd.app import Engine
    from memd.core.settings import load
    from memd.db import Store

    env = memd_env(home)
    s = load(env=env)
    d = DaemonProcess(home).start()
    try:
        ingest_vitest(d)
        rel = d.memory / "agents" / "ally" / "relationship.md"
        rel.parent.mkdir(parents=True)
        rel.write_text(RELATIONSHIP)
        wait_for(lambda: str(rel) in d.search_paths("Familiarity"), 10)
    finally:
        d.stop()
    store = Store.open_readonly(s.db_path)
    try:
        conn = store.read()
        ids = dict(conn.execute("SELECT i.text, i.item_id FROM items i").fetchall())
    finally:
        store.close()
    journal_id = next(v for k, v in ids.items() if "watch mode" in k)
    trust_id = ids["Trust Level: 62/100"]
    store = Store.open(s.db_path)
    try:
        engine = Engine(s, store)
        with pytest.raises(InvalidParams, match="conversation record") as exc:
            engine.call(m.FORGET, m.ForgetParams(id=journal_id))
        assert "forget --session" in (exc.value.hint or "")
        with pytest.raises(InvalidParams, match="a line memd keeps"):
            engine.call(m.FORGET, m.ForgetParams(id=trust_id))
    finally:
        store.close()


def test_without_a_daemon_writing_directly_is_said_once(home: Path) -> None:
    DaemonProcess(home).start().stop()  # the index exists
    env = memd_env(home)

    def memd(*args: str) -> subprocess.CompletedProcess[str]:
        return forkserver.run([sys.executable, "-m", "memd", *args], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    assert memd("remember", "always use vitest").returncode == 0
    out = memd("forget", "vitest", "--yes")
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("writing directly") == 1, out.stderr
    assert "forgot" in out.stdout


def test_the_page_says_who_wrote_each_line_and_offers_forget_for_memories(
    daemon: DaemonProcess,
) -> None:
    d = daemon
    journal = ingest_vitest(d)
    rel = d.memory / "agents" / "ally" / "relationship.md"
    rel.parent.mkdir(parents=True)
    rel.write_text(RELATIONSHIP)
    wait_for(lambda: str(rel) in d.search_paths("Familiarity"), 10)
    ui = UiProcess(d.home).start()
    try:
        cookie = ui.sign_in()
        _, _, page = ui.request("GET", "/memory/file?root=0&rel=agents/ally/relationship.md",
                                headers={"Cookie": cookie})  # fmt: skip
        _, _, day = ui.request("GET", f"/memory/file?root=0&rel=journal/{journal.name}",
                               headers={"Cookie": cookie})  # fmt: skip
    finally:
        ui.stop()
    items = re.findall(r'<li class="item[^"]*" id="item-[^"]+".*?</li>', page, re.S)
    by_text = {re.search(r'<div class="text">(.*?)</div>', i, re.S).group(1): i for i in items}  # type: ignore[union-attr]
    trust = by_text["Trust Level: 62/100"]
    assert "kept by memd" in trust and "written by hand" not in trust
    assert 'action="/forget"' not in trust and "/edit?id=" not in trust
    point = by_text["Keep vitest output short"]
    assert "written by hand" in point and 'action="/forget"' in point
    (record,) = re.findall(r'<li class="item[^"]*" id="item-[^"]+".*?</li>', day, re.S)
    assert "conversation record written by memd" in record and "forget --session" in record
    assert 'action="/forget"' not in record
