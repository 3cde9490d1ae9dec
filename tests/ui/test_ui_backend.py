"""The page's way to the daemon, and the read-only method it adds (`job_runs`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core import settings
from memd.core.errors import InvalidParams, StoreError
from memd.ui.backend import Backend, WritesNeedDaemon
from memd.ui.present import EDIT_METHOD, EDIT_PROBE
from tests.ui.uihelp import PageDaemon, seed
from tests.utils import DaemonProcess


def backend_for(home: Path, monkeypatch: pytest.MonkeyPatch) -> Backend:
    monkeypatch.setenv("MEMD_HOME", str(home))
    return Backend(settings.load(), timeout=10)


def test_job_runs_lists_what_each_run_did(page_daemon: PageDaemon) -> None:
    seed(page_daemon)
    page_daemon.call("run_job", {"name": "archive"})
    runs = page_daemon.call("job_runs", {})["runs"]
    assert [r["job"] for r in runs] == ["archive", "extract"]
    extract = runs[1]
    assert extract["outcome"] == "success" and extract["counts"]["added"] >= 2
    assert extract["counts"]["superseded"] >= 1 and "added" in extract["message"]
    assert extract["finished"] >= extract["started"] and extract["seconds"] >= 0
    assert [r["job"] for r in page_daemon.call("job_runs", {"name": "extract"})["runs"]] == [
        "extract"
    ]
    assert len(page_daemon.call("job_runs", {"limit": 1})["runs"]) == 1
    for bad in ({"limit": 0}, {"limit": 201}, {"limit": "5"}, {"limit": True}, {"name": 3}):
        with pytest.raises(InvalidParams):
            page_daemon.call("job_runs", bad)


def test_methods_are_probed_once_per_daemon(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = DaemonProcess(home).start()
    b = backend_for(home, monkeypatch)
    try:
        assert not b.has("job_runs", {"limit": 1}, daemon="one")
        assert b.has(EDIT_METHOD, EDIT_PROBE, daemon="one")  # refuses the probe: it is there
        assert b.has("forget", {}, daemon="one")  # exists: refuses the empty probe
    finally:
        plain.stop()
    with_runs = PageDaemon(home).start()
    try:
        assert not b.has("job_runs", {"limit": 1}, daemon="one")  # remembered for that daemon
        assert b.has("job_runs", {"limit": 1}, daemon="two")
    finally:
        with_runs.stop()


def test_without_a_daemon_reads_come_from_the_index_and_writes_are_refused(
    daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(daemon)
    b = backend_for(daemon.home, monkeypatch)
    assert b.call("status")["daemon"]["running"] is True
    daemon.stop()
    st = b.call("status")
    assert st["daemon"]["running"] is False and st["index"]["files"] >= 3
    assert any(
        h["path"].endswith("topics/vue.md") for h in b.call("search", {"query": "vitest"})["hits"]
    )
    sessions = b.call("recall", {"mode": "sessions"})["sessions"]
    assert {s["session_id"] for s in sessions} == {"s-acme", "s-vue", "s-globex"}
    with pytest.raises(WritesNeedDaemon, match="nothing can be changed"):
        b.call("remember", {"text": "while down"}, write=True)
    assert not b.has("job_runs", {"limit": 1}, daemon="none")
    assert not any("while down" in p.read_text() for p in daemon.memory.rglob("*.md"))
    daemon.start()
    assert b.call("status")["daemon"]["running"] is True
    assert b._fallback is None  # the read-only index was closed once the daemon came back
    b.close()


def test_no_daemon_and_no_index(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = backend_for(home, monkeypatch)
    with pytest.raises(StoreError, match="no index"):
        b.call("status")
