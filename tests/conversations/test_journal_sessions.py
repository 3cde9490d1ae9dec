"""Journal entries are keyed by session and turn: apps that number their turns `q1`, `a1`, … in
every session (as the protocol examples do) get every exchange journaled."""

from __future__ import annotations

import datetime as dt
import time

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
