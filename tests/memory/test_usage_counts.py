"""`context` and `search` count the uses of the memory items they show: what archival's decay by
disuse reads (`item_usage`). A turn, a conversation section or an answer with no Markdown
section counts nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.utils import DaemonProcess


def _uses(db: str) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT i.text, u.uses FROM item_usage u JOIN items i ON i.item_id = u.item_id"
        ).fetchall()
    finally:
        conn.close()
    return {text: uses for text, uses in rows}


def test_context_and_search_count_the_items_they_show(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "home").start()
    try:
        d.call("remember", {"text": "prefers tabs over spaces in Go code"})
        d.call("ingest", {"session_id": "s1", "role": "user", "content": "tabs or spaces?"})
        hits = d.call("search", {"query": "tabs spaces"})["hits"]
        assert {h["kind"] for h in hits} == {"section", "turn"}
        sections = d.call("context", {"query": "tabs"})["sections"]
        assert any(s.get("path") for s in sections)  # a Markdown section was shown
        d.call("search", {"query": "nothing matches this"})
        db = d.call("status")["index"]["path"]
    finally:
        d.stop()  # the counts are written at most every few seconds, and at the stop
    assert _uses(db) == {"prefers tabs over spaces in Go code": 2}
