"""Secrets and `<private>` blocks written by hand in memory files stay on the disk.

The file keeps what the person wrote; everything memd serves from it (`context`, `search`,
`memories`, the answers of `forget` and `edit_item`, `relationship`) and every export of it
holds the secrets redacted and nothing of a `<private>` span, with line numbers that still
point at the file. A real daemon on real files; the planted file is `tests.planted`.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from memd.app import Engine
from memd.core.settings import load
from memd.db import Store
from memd.memory.tree import create_tree
from tests import planted
from tests.planted import carried, leaked
from tests.utils import DaemonProcess, wait_for


def _plant(memory: Path, rel: str = planted.REL) -> Path:
    path = memory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(planted.TEXT, encoding="utf-8")
    return path


def _line_of(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    return next(i + 1 for i, line in enumerate(lines) if text in line)


def _served(d: DaemonProcess) -> dict[str, Any]:
    return {
        "context": d.call("context", {"query": "deploy canary rollbacks", "budget_tokens": 4000}),
        "search": d.call("search", {"query": "deploy canary rollbacks", "limit": 50}),
        "memories": d.call("memories", {"scope": "user", "limit": 0}),
    }


def test_context_search_and_memories_serve_no_secret_and_no_private_text(home: Path) -> None:
    d = DaemonProcess(home)
    at_start = _plant(home / "memory")  # read by the startup walk
    d.start()
    try:
        live = _plant(home / "memory", "topics/live.md")  # and one the watcher reports
        wait_for(lambda: str(live) in d.search_paths("canary"), 10)
        served = _served(d)
        for name, answer in served.items():
            text = json.dumps(answer)
            assert leaked(text) == [], name
            assert carried(text) == list(planted.PUBLIC), name
        assert "[REDACTED:anthropic-key:" in served["context"]["text"]
        # Words found only inside a `<private>` span find nothing.
        for word in ("Zebulon", "Ottoline", "vault combination"):
            assert d.call("search", {"query": word, "limit": 50})["hits"] == [], word
        # Lines after the dropped block still point at the file's own lines.
        items = served["memories"]["items"]
        for path in (at_start, live):
            canary = next(i for i in items if i["path"] == str(path) and "canary" in i["text"])
            assert canary["line"] == _line_of(path, "canary runs in Frankfurt")
            assert leaked(path.read_text(encoding="utf-8")) == list(planted.fragments())
    finally:
        assert d.stop() == 0


def test_items_holding_a_secret_are_edited_and_forgotten_and_answers_stay_redacted(
    home: Path,
) -> None:
    d = DaemonProcess(home)
    path = _plant(home / "memory")
    d.start()
    try:
        items = d.call("memories", {"scope": "user", "limit": 0})["items"]
        key = next(i for i in items if "deploy key" in i["text"])
        aws = next(i for i in items if "aws access key" in i["text"])
        assert "[REDACTED:" in key["text"] and key["id"].startswith("h_")
        # What the caller was shown (redacted) is accepted as what the file holds.
        edited = d.call("edit_item", {"id": key["id"], "expect_text": key["text"], "importance": 9})
        assert leaked(json.dumps(edited)) == [] and "[REDACTED:anthropic-key:" in edited["text"]
        assert planted.ANTHROPIC in path.read_text(encoding="utf-8")  # the file keeps it
        # A hand-written item (no memd id) with a secret is found by the id it was listed with.
        gone = d.call("forget", {"id": aws["id"]})
        assert [r["id"] for r in gone["removed"]] == [aws["id"]]
        assert leaked(json.dumps(gone)) == []
        gone = d.call("forget", {"id": edited["id"]})
        assert len(gone["removed"]) == 1 and leaked(json.dumps(gone)) == []
        text = path.read_text(encoding="utf-8")
        assert planted.ANTHROPIC not in text and planted.AWS not in text
        assert planted.PASSWORD in text and planted.THERAPIST in text  # the rest is untouched
    finally:
        assert d.stop() == 0


def test_export_holds_no_secret_and_no_private_text(home: Path, tmp_path: Path) -> None:
    d = DaemonProcess(home)
    _plant(home / "memory")
    d.start()
    try:
        out = tmp_path / "export.json"
        res = d.cli("export", str(out))
        assert res.returncode == 0, res.stderr
        doc = json.loads(out.read_text(encoding="utf-8"))
        memories = [m for m in doc["memories"] if m["path"] == planted.REL]
        tree = [f for f in doc["tree"] if f["path"] == planted.REL]
        for name, part in (("memories", memories), ("tree", tree)):
            assert leaked(json.dumps(part)) == [], name
            assert carried(json.dumps(part)) == list(planted.PUBLIC), name
    finally:
        assert d.stop() == 0


def test_the_relationship_answer_holds_no_secret_and_no_private_text(home: Path) -> None:
    d = DaemonProcess(home)
    points = planted.TEXT.replace("## Deploy", "## Memory Points").replace("# Infra", "# Agent")
    rel = home / "memory" / "agents" / "ally" / "relationship.md"
    rel.parent.mkdir(parents=True)
    rel.write_text(points, encoding="utf-8")
    d.start()
    try:
        answer = d.call("relationship", {"agent_id": "ally"})
        text = json.dumps(answer)
        assert leaked(text) == []
        assert "blue-green every tuesday" in text and "rollbacks are announced" in text
        line = next(p["line"] for p in answer["points"] if "rollbacks" in p["text"])
        assert line == _line_of(rel, "rollbacks are announced")
    finally:
        assert d.stop() == 0


def test_an_index_written_before_keeps_nothing_of_them(tmp_path: Path) -> None:
    """An index made by an older memd held the file as written: on upgrade those rows go, and
    the next reconcile indexes the file redacted."""
    # Recall by meaning off, as the suite's (an environment of its own left it on).
    settings = load(env={"MEMD_HOME": str(tmp_path / "h"), "MEMD_SEMANTIC_KIND": "off"})
    create_tree(settings.memory_dir)
    _plant(settings.memory_dir)
    store = Store.open(settings.db_path)
    Engine(settings, store).indexer.reconcile()

    def as_before(c: sqlite3.Connection) -> None:
        # What the older indexer stored: the text as written, secrets and private block.
        c.execute("UPDATE sections SET text = ? WHERE heading = 'Deploy'", (planted.TEXT,))
        c.execute("UPDATE items SET text = text || ? WHERE text LIKE '%deploy key%'",
                  (" " + planted.ANTHROPIC,))  # fmt: skip
        c.execute("DELETE FROM _memd_migrations WHERE name = 'm085_markdown_redacted'")

    store.w.run(as_before)
    store.close()
    store = Store.open(settings.db_path)
    try:

        def dump() -> str:
            conn = store.read()
            rows = conn.execute("SELECT heading, text FROM sections").fetchall()
            rows += conn.execute("SELECT text, meta FROM items").fetchall()
            return json.dumps([tuple(r) for r in rows])

        assert leaked(dump()) == []  # gone as the index opens, before any reconcile
        engine = Engine(settings, store)
        engine.indexer.reconcile()
        assert leaked(dump()) == [] and carried(dump()) == list(planted.PUBLIC)
        hits = engine.handle("search", {"query": "canary", "limit": 10})["hits"]
        assert [h["path"] for h in hits] == [str(settings.memory_dir / planted.REL)]
    finally:
        store.close()
