"""SIGHUP applies what it says it reloads: one test per group of settings, each with a real
daemon, a real settings file and a real SIGHUP; what needs a restart is listed in `status`."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import signal
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.utils import ROOT, DaemonProcess, wait_for

pytestmark = pytest.mark.exec_memd  # the process's signal handling

CLAUDE_FIXTURE = ROOT / "tests" / "fixtures" / "logs" / "claude_code_session.jsonl"


def _reload(d: DaemonProcess, toml: str) -> None:
    (d.home / "config.toml").write_text(toml, encoding="utf-8")
    d.send_signal(signal.SIGHUP)


def _turn_hits(d: DaemonProcess, query: str) -> list[dict[str, Any]]:
    res = d.call("search", {"query": query, "scope": "conversations", "limit": 10})
    return list(res["hits"])


def test_new_log_sources_are_tailed_without_a_restart(home: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        chat = home / "chat"
        chat.mkdir()
        (chat / "day.jsonl").write_text(
            json.dumps({"session_id": "s1", "role": "user", "content": "the zanzibar launch is on"})
            + "\n"
        )
        claude = home / "claude"
        (claude / "proj").mkdir(parents=True)
        shutil.copy(CLAUDE_FIXTURE, claude / "proj" / "5f1c2d3e-0000-4000-8000-000000000001.jsonl")
        _reload(
            d,
            f"[logs]\nclaude_dir = '{claude}'\npoll_s = 2.5\n"
            f"sources = [{{path = '{chat}', format = 'jsonl'}}]\n",
        )
        wait_for(lambda: _turn_hits(d, "zanzibar"), 10)
        wait_for(lambda: _turn_hits(d, "login test"), 10)
        logs = d.call("status")["logs"]
        mine = [s for s in logs["sources"] if s.get("assistant", "claude-code") == "claude-code"]
        assert {(s["path"], s["format"]) for s in mine} == {
            (str(claude), "claude-code"),
            (str(chat), "jsonl"),
        }
        assert logs["watcher"] == "native"
        # Live from now on: a line appended later arrives through the new watcher.
        with open(chat / "day.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"session_id": "s1", "role": "user", "content": "quokka"}) + "\n")
        wait_for(lambda: _turn_hits(d, "quokka"), 10)
        assert "log sources now:" in d.log.read_text()
    finally:
        assert d.stop() == 0


def test_a_workspace_added_to_the_settings_is_indexed_and_watched(home: Path) -> None:
    ws = home / "ws"
    (ws / ".git").mkdir(parents=True)
    ctx = ws / ".memd" / "memory" / "context.md"
    ctx.parent.mkdir(parents=True)
    ctx.write_text("# ws\n\n## Rules\n- the frobnicator must be calibrated\n")
    d = DaemonProcess(home).start()
    try:
        assert not d.search_paths("frobnicator")
        _reload(d, f"[memory]\nworkspaces = ['{ws}']\n")
        wait_for(lambda: d.search_paths("frobnicator") == {str(ctx)}, 10)
        roots = {r["path"]: r["project"] for r in d.call("status")["roots"]}
        assert roots[str(ctx.parent)] == "ws"
        with open(ctx, "a", encoding="utf-8") as fh:
            fh.write("- and polished every monday\n")
        wait_for(lambda: d.search_paths("polished") == {str(ctx)}, 10)

        _reload(d, "")  # taken out again: no longer indexed from now on
        wait_for(lambda: str(ctx.parent) not in {r["path"] for r in d.call("status")["roots"]})
        log = wait_for(lambda: "changed: memory.workspaces" in d.log.read_text(), 10)
        assert log
    finally:
        assert d.stop() == 0


def _next_run_in(job: dict[str, Any]) -> float:
    when = dt.datetime.fromisoformat(job["next_run"])
    return (when - dt.datetime.now(dt.UTC)).total_seconds()


def test_new_job_intervals_reschedule_the_jobs(home: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        assert _next_run_in(d.call("status")["jobs"]["extract"]) > 60  # 30 min by default
        _reload(d, "[extract]\ninterval_min = 1\n[summary]\nidle_min = 4\n")
        # The next runs come by the new intervals, not the old ones.
        jobs = wait_for(
            lambda: (j := d.call("status")["jobs"]) and _next_run_in(j["extract"]) <= 61 and j, 10
        )
        assert _next_run_in(jobs["summarize"]) <= 121
        assert jobs["extract"]["interval_s"] == 60
        assert jobs["summarize"]["interval_s"] == 120
    finally:
        assert d.stop() == 0


def _raw_call(sock_path: Path, payload: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(sock_path))
        s.sendall(payload)
        return s.recv(65536)


def _status_line(size: int) -> bytes:
    pad = "x" * size
    return (
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "status", "params": {"pad": pad}}) + "\n"
    ).encode()


def test_new_server_limits_apply_to_the_next_request(home: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        assert b'"result"' in _raw_call(d.sock, _status_line(4000))
        _reload(d, "[server]\nmax_request_kb = 1\nread_timeout_s = 0.5\n")
        wait_for(lambda: b"request larger than 1024 bytes" in _raw_call(d.sock, _status_line(4000)))
        assert b'"result"' in _raw_call(d.sock, _status_line(100))
        # An idle connection is closed after the new read timeout (the old one was 60 s).
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(d.sock))
            assert s.recv(1) == b""
    finally:
        assert d.stop() == 0


def test_settings_that_need_a_restart_are_listed_in_status(home: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        _reload(d, f"[server]\nworkers = 3\n[memory]\nroot = '{home / 'elsewhere'}'\n")
        st = wait_for(lambda: (s := d.call("status"))["daemon"].get("restart_required") and s, 10)
        assert st["daemon"]["restart_required"] == ["memory.root", "server.workers"]
        assert st["memory_root"] == str(d.memory)
        out = d.cli("status").stdout
        assert "restart required for: memory.root, server.workers" in out
        _reload(d, "[server]\nworkers = 8\n")  # back to the running values: nothing pending
        wait_for(lambda: "restart_required" not in d.call("status")["daemon"], 10)
    finally:
        assert d.stop() == 0
