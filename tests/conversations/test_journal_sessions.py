"""Journal entries are keyed by session and turn: apps that number their turns `q1`, `a1`, … in
every session (as the protocol examples do) get every exchange journaled."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

from tests.utils import DaemonProcess, wait_for


def test_two_sessions_with_the_same_turn_ids_both_reach_the_journal(
    daemon: DaemonProcess,
) -> None:
    now = time.time()
    for sid, topic in (("chat-a", "the red bicycle"), ("chat-b", "the green canoe")):
        daemon.call("ingest", {"turns": [
            {"session_id": sid, "id": "q1", "role": "user", "content": f"How do I fix {topic}?", "ts": now - 20},
            {"session_id": sid, "id": "a1", "role": "assistant", "content": f"Oil {topic} first.", "ts": now - 10},
        ]})  # fmt: skip
    day = daemon.memory / "journal" / f"{dt.date.fromtimestamp(now - 20).isoformat()}.md"

    def both() -> bool:
        text = day.read_text() if day.exists() else ""
        return "red bicycle" in text and "green canoe" in text

    wait_for(both)
    text = day.read_text()
    assert text.count("<!-- memd turn=q1 -->") == 2
    # Writing the same exchanges again (a crash between the file and the database) adds nothing.
    daemon.call("ingest", {"session_id": "chat-b", "id": "a1", "role": "assistant",
                           "content": "Oil the green canoe first.", "ts": now - 10})  # fmt: skip
    time.sleep(0.5)
    assert day.read_text().count("<!-- memd turn=q1 -->") == 2


def test_a_journal_folder_linked_out_of_the_tree_is_never_written_through(
    home: Path, tmp_path: Path
) -> None:
    """`journal/` made a link to a folder elsewhere: the daemon writes nothing there, says so
    once in its log, and journals the exchange when the link is gone."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    memory = home / "memory"
    memory.mkdir(parents=True)
    os.symlink(outside, memory / "journal")
    d = DaemonProcess(home).start()
    try:
        now = time.time()
        d.call("ingest", {"turns": [
            {"session_id": "s1", "id": "q1", "role": "user", "content": "How do I tune the oboe?", "ts": now - 20},
            {"session_id": "s1", "id": "a1", "role": "assistant", "content": "Warm the reed first.", "ts": now - 10},
        ]})  # fmt: skip
        # Either memd wrote through the link or it refused: wait for whichever comes first.
        wait_for(lambda: list(outside.iterdir()) or "journal not written" in d.log.read_text(), 10)
        assert list(outside.iterdir()) == []
        assert d.log.read_text().count("journal not written") == 1
        # Later polls retry quietly; with the link gone the exchange is journaled in the tree.
        os.unlink(memory / "journal")
        day = memory / "journal" / f"{dt.date.fromtimestamp(now - 20).isoformat()}.md"
        wait_for(lambda: day.exists() and "oboe" in day.read_text(), 15)
        assert list(outside.iterdir()) == []
        assert d.log.read_text().count("journal not written") == 1
    finally:
        assert d.stop() == 0
