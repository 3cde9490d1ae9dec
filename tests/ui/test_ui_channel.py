"""The page's way to the daemon: its socket, the index without it, and what it can ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.api import messages as m
from memd.api.messages import STATUS, NoParams
from memd.core import settings
from memd.core.errors import DaemonError, StoreError
from memd.ui.channel import Channel
from memd.ui.present import EDIT_PROBE
from tests.ui.uihelp import OlderDaemon, seed
from tests.utils import DaemonProcess, answering_once


def channel_for(home: Path, monkeypatch: pytest.MonkeyPatch) -> Channel:
    monkeypatch.setenv("MEMD_HOME", str(home))
    return Channel(settings.load(), timeout=10)


def test_methods_are_probed_once_per_daemon(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    older = OlderDaemon(home).start()
    b = channel_for(home, monkeypatch)
    try:
        assert not b.has(m.EDIT_ITEM, EDIT_PROBE, daemon="one")
        assert b.has(m.FORGET, m.ForgetParams(), daemon="one")  # exists: refuses the empty probe
    finally:
        older.stop()
    current = DaemonProcess(home).start()
    try:
        assert not b.has(m.EDIT_ITEM, EDIT_PROBE, daemon="one")  # remembered for that daemon
        assert b.has(m.EDIT_ITEM, EDIT_PROBE, daemon="two")  # refuses the probe: it is there
    finally:
        current.stop()


def test_without_a_daemon_reads_come_from_the_index_and_writes_are_made_as_the_cli_makes_them(
    daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(daemon)
    b = channel_for(daemon.home, monkeypatch)
    assert b.request(STATUS, NoParams()).daemon.running is True
    daemon.stop()
    st = b.request(STATUS, NoParams())
    assert st.daemon.running is False
    assert not isinstance(st.index, m.UnsetType) and st.index.files >= 3
    hits = b.request(m.SEARCH, m.SearchParams(query="vitest")).hits
    assert any(h.path.endswith("topics/vue.md") for h in hits)
    sessions = b.request(m.RECALL, m.RecallParams(mode="sessions")).sessions
    assert {s.session_id for s in sessions} == {"s-acme", "s-vue", "s-globex"}
    written = b.request(m.REMEMBER, m.RememberParams(text="while down"), write=True)
    assert "- while down <!-- memd" in Path(written.path).read_text()
    assert b.request(m.HISTORY, m.HistoryParams(limit=1)).changes[0].cause == "remember"
    items = b.request(m.MEMORIES, m.MemoriesParams()).items
    assert any(i.text == "while down" for i in items)
    runs = b.request(m.JOB_RUNS, m.JobRunsParams(name="extract")).runs
    assert [r.job for r in runs] == ["extract"]
    daemon.start()
    assert "while down" in {i["text"] for i in daemon.call("memories", {})["items"]}
    assert b.request(STATUS, NoParams()).daemon.running is True
    assert b._fallback is None  # the read-only index was closed once the daemon came back
    b.close()


def test_no_daemon_and_no_index(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = channel_for(home, monkeypatch)
    with pytest.raises(StoreError, match="no index"):
        b.request(STATUS, NoParams())


def test_an_answer_not_of_the_methods_type_is_said_not_raised_as_a_crash(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A daemon of another version answers `status` without the fields this page reads: the
    # typed request says so as a memd error (which the page shows), not a validation crash.
    b = channel_for(home, monkeypatch)
    sock_path = b.settings.socket_path
    sock_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        answering_once(sock_path, {"daemon": "old"}),
        pytest.raises(DaemonError, match="answer to status cannot be read"),
    ):
        b.request(STATUS, NoParams())
