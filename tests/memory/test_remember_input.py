"""What `remember` is given: control characters, the same statement twice, a retried request.

A real daemon, real files, the real socket.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.utils import DaemonProcess, wait_for


def items_in(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.startswith("- ")]


def test_a_nul_byte_does_not_hide_the_file(module_daemon: DaemonProcess) -> None:
    notes = module_daemon.memory / "_core" / "notes.md"
    bad = module_daemon.call("remember", {"text": "bad\u0000byte and \u001b[31mescapes\u2028too"})
    good = module_daemon.call("remember", {"text": "the staging server is called kestrel"})
    assert str(notes) in module_daemon.search_paths("kestrel")  # the file is still indexed
    assert bad["text"] == "bad byte and [31mescapes too"
    assert b"\x00" not in notes.read_bytes() and b"\x1b" not in notes.read_bytes()
    assert module_daemon.call("status")["problems"] == []
    module_daemon.call("reindex", {"full": True})
    ids = {i["id"] for i in module_daemon.call("memories")["items"]}
    assert {bad["id"], good["id"]} <= ids
    assert module_daemon.call("forget", {"id": bad["id"]})["removed"][0]["id"] == bad["id"]


def test_a_hand_written_file_with_a_stray_nul_is_still_text(daemon: DaemonProcess) -> None:
    topic = daemon.memory / "topics" / "pasted.md"
    topic.write_bytes(
        b"# Pasted\n\n## Notes\n- pasted from a terminal \x00 once\n- ospreys nest here\n"
    )
    wait_for(lambda: str(topic) in daemon.search_paths("ospreys"), 5)
    problem = wait_for(
        lambda: [p for p in daemon.call("status")["problems"] if p["path"] == str(topic)], 5
    )
    assert "NUL" in problem[0]["reason"] and "binary" not in problem[0]["reason"]
    # Real binary content (mostly NUL bytes) is still refused.
    blob = daemon.memory / "topics" / "blob.md"
    blob.write_bytes(b"\x00\x01" * 4000)
    wait_for(lambda: any(p["path"] == str(blob) for p in daemon.call("status")["problems"]), 5)


def test_the_same_statement_twice_is_one_item_with_two_hits(module_daemon: DaemonProcess) -> None:
    notes = module_daemon.memory / "_core" / "notes.md"
    first = module_daemon.call("remember", {"text": "Deploys go out on Tuesdays"})
    again = module_daemon.call("remember", {"text": "  deploys go out on tuesdays. "})
    assert again["id"] == first["id"] and again["existed"] is True and first["existed"] is False
    lines = [x for x in items_in(notes) if "eploys go out" in x]
    assert len(lines) == 1 and "hits=2" in lines[0], lines
    # Another scope or target is another item.
    other = module_daemon.call(
        "remember", {"text": "Deploys go out on Tuesdays", "scope": "agent", "agent_id": "ops"}
    )
    assert other["id"] != first["id"] and other["existed"] is False


def test_a_retried_request_gets_the_first_answer(module_daemon: DaemonProcess) -> None:
    notes = module_daemon.memory / "_core" / "notes.md"
    params = {"text": "the office wifi is called heron", "request_id": "req-42"}
    first = module_daemon.call("remember", params)
    again = module_daemon.call("remember", params)
    assert again == first
    (line,) = [x for x in items_in(notes) if "heron" in x]
    assert "hits=" not in line  # a retry is not a second saying
    assert re.search(r"id=m_[0-9a-f]{8}", line)
