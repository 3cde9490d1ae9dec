"""The jobs inside a real daemon: turns pushed over the socket, `memd extract|summarize|archive
--now` from the CLI, `memd status` showing each job's last outcome and the LLM mode."""

from __future__ import annotations

import json

from tests.utils import DaemonProcess


def test_jobs_run_on_demand_in_the_daemon(daemon: DaemonProcess) -> None:
    turns = [
        {
            "session_id": "chat-1",
            "role": "user",
            "content": "Hi! My name is Sam and I live in Berlin.",
            "id": "u1",
        },
        {
            "session_id": "chat-1",
            "role": "assistant",
            "content": "Nice to meet you, Sam.",
            "id": "a1",
        },
        {"session_id": "chat-1", "role": "user", "content": "I use jest for testing.", "id": "u2"},
    ]
    assert daemon.call("ingest", {"turns": turns})["added"] == 3
    out = daemon.cli("extract", "--now", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["outcome"] == "success" and res["counts"]["added"] == 3, res
    profile = (daemon.memory / "_core" / "profile.md").read_text()
    assert "- User's name is Sam <!-- memd id=m_" in profile and "src=chat-1#u1" in profile
    assert "User uses Jest for testing" in profile
    ctx = daemon.call("context", {})
    assert "User lives in Berlin" in ctx["text"]

    daemon.call(
        "ingest",
        {"session_id": "chat-2", "role": "user", "content": "I switched to vitest.", "id": "u3"},
    )
    again = daemon.cli("extract", "--now")
    assert again.returncode == 0 and "1 superseded" in again.stdout, again.stdout + again.stderr
    assert "User switched to Vitest" in daemon.call("context", {})["text"]
    assert "Jest" not in daemon.call("context", {})["text"]

    summ = daemon.cli("summarize", "--now")
    assert summ.returncode == 0 and "nothing_to_do" in summ.stdout and "offline" in summ.stdout
    arch = daemon.cli("archive", "--now")
    assert arch.returncode == 0, arch.stderr
    assert "## " in (daemon.memory / "archive" / "CHANGES.md").read_text()

    st = json.loads(daemon.cli("status", "--json").stdout)
    assert st["jobs"]["extract"]["last_outcome"] == "success" and st["jobs"]["extract"]["runs"] == 2
    assert (
        st["jobs"]["extract"]["next_run"]
        and st["jobs"]["archive"]["last_outcome"] == "nothing_to_do"
    )
    assert st["llm"]["mode"] == "offline rules"
    assert "llm: " in daemon.cli("status").stdout
