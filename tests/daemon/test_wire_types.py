"""Every method's real answer is exactly its declared result type: nothing dropped, nothing added."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from memd.api import messages as m
from tests.utils import DaemonProcess, wait_for


def raw_call(sock_path: Path, method: str, params: dict[str, Any]) -> Any:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(str(sock_path))
        s.sendall(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
            + b"\n"
        )
        buf = b""
        while not buf.endswith(b"\n"):
            buf += s.recv(1 << 16)
    msg = json.loads(buf)
    assert "result" in msg, (method, msg)
    return msg["result"]


def test_answers_match_their_result_types(daemon: DaemonProcess, tmp_path: Path) -> None:
    (daemon.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small components\n")
    wait_for(lambda: daemon.search_paths("components"), 5)
    export = tmp_path / "out.json"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("remember", {"text": "prefers tabs", "type": "preference"}),
        (
            "ingest",
            {
                "turns": [
                    {
                        "session_id": "s1",
                        "id": "q1",
                        "role": "user",
                        "content": "vue components please",
                    },
                    {
                        "session_id": "s1",
                        "id": "a1",
                        "role": "assistant",
                        "content": "small vue components",
                    },
                ]
            },
        ),  # fmt: skip
        ("context", {"query": "vue components", "budget_tokens": 800, "session_id": "s1"}),
        ("context", {"query": "did we talk about vue components", "budget_tokens": 60}),
        ("search", {"query": "components"}),
        ("memories", {}),
        ("memories", {"scope": "agent"}),
        ("relationship", {"agent_id": "ally"}),
        ("extraction_progress", {"session_id": "s1"}),
        ("forget", {"query": "tabs"}),
        ("recall", {"query": "vue"}),
        ("recall", {}),
        ("forget_conversation", {"session_id": "s1"}),
        ("forget_conversation", {"session_id": "s1", "turn_ids": ["a1"], "confirm": True}),
        ("status", {}),
        ("reindex", {}),
        ("reindex", {"full": True}),
        ("run_job", {"name": "archive"}),
        ("job_runs", {}),
        ("export", {"path": str(export)}),
        ("import", {"path": str(export)}),
        ("sync_status", {}),
        ("set_enabled", {"enabled": False}),
        ("context", {"query": "vue"}),
        ("ingest", {"session_id": "s2", "role": "user", "content": "off"}),
        ("set_enabled", {"enabled": True}),
    ]
    seen = set()

    def check(method: str, params: dict[str, Any]) -> Any:
        raw = raw_call(daemon.sock, method, params)
        typed = m.decode_result(m.SIGNATURES[method], raw)
        assert m.to_builtins(typed) == raw, method
        seen.add(method)
        return raw

    for method, params in calls:
        check(method, params)
    item = check("remember", {"text": "prefers spaces"})
    check("edit_item", {"id": item["id"], "text": "prefers tabs after all", "importance": 8})
    change = check("history", {"limit": 5})["changes"][0]["id"]
    check("show_change", {"change": change})
    check("undo", {"change": change, "dry_run": True})
    # sync_now and sync_init_schema answer errors while sync is off (their own tests cover them).
    assert seen == set(m.SIGNATURES) - {"sync_now", "sync_init_schema"}
