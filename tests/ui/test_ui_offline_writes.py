"""Without a daemon the CLI and the memory page make a change the same way: written directly
by the same code, recorded in the history, under the daemon's own lock — so neither ever writes
beside a daemon (one starting, or one listening on another socket)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.api import messages as m
from memd.core import settings
from memd.core.errors import DaemonStarting
from memd.daemon.lock import InstanceLock
from memd.ui.channel import Channel
from tests.ui.uihelp import UiProcess, csrf_of
from tests.utils import DaemonProcess, memd_env


def post_remember(ui: UiProcess, cookie: str, text: str) -> str:
    """Remember `text` through the page's form; the address it sends the browser to."""
    from urllib.parse import quote

    _, _, page = ui.request("GET", "/edit", headers={"Cookie": cookie})
    body = f"csrf={csrf_of(page)}&back=%2Fmemory&text={quote(text)}&scope=user"
    status, headers, _ = ui.request(
        "POST", "/remember", body=body,
        headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded",
                 "Origin": ui.base},
    )  # fmt: skip
    assert status == 303, status
    return headers["location"]


def test_the_cli_and_the_page_both_write_without_a_daemon(home: Path) -> None:
    d = DaemonProcess(home).start()
    d.stop()
    notes = home / "memory" / "_core" / "notes.md"
    out = d.cli("remember", "from the shell")
    assert out.returncode == 0, out.stderr
    assert "writing directly" in out.stderr
    ui = UiProcess(home).start()
    try:
        cookie = ui.sign_in()
        where = post_remember(ui, cookie, "from the page")
        assert "msg=Remembered" in where and "err=" not in where
        _, _, page = ui.request("GET", "/memory", headers={"Cookie": cookie})
        assert "written straight to the files" in page
    finally:
        ui.stop()
    text = notes.read_text()
    assert "- from the shell <!-- memd" in text and "- from the page <!-- memd" in text
    d.start()
    try:
        causes = [c["cause"] for c in d.call("history", {"limit": 5})["changes"]]
        assert causes[:2] == ["remember", "remember"]
        items = {i["text"] for i in d.call("memories", {})["items"]}
        assert {"from the shell", "from the page"} <= items
    finally:
        d.stop()


def test_neither_writes_while_a_daemon_holds_the_memory(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon that holds its lock but does not answer on this socket (starting, or on
    another socket): the CLI waits for it, then refuses; the page refuses; nothing written."""
    d = DaemonProcess(home).start()
    d.stop()
    monkeypatch.setenv("MEMD_HOME", str(home))
    s = settings.load(env=memd_env(home))
    tree = home / "memory"
    before = {p: p.read_bytes() for p in tree.rglob("*.md")}
    held = InstanceLock(s.lock_path)
    held.acquire()
    try:
        out = d.cli("remember", "beside a daemon", "--timeout", "1")
        assert out.returncode == 1
        assert "a daemon holds this memory but did not answer" in out.stderr, out.stderr
        with pytest.raises(DaemonStarting, match="already running .*, but does not answer") as exc:
            Channel(s, timeout=5).request(
                m.REMEMBER, m.RememberParams(text="beside a daemon"), write=True
            )
        assert "try again in a moment" in exc.value.hint
    finally:
        held.release()
    assert {p: p.read_bytes() for p in tree.rglob("*.md")} == before


def test_the_cli_never_writes_beside_a_daemon_on_another_socket(home: Path, tmp_path: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        d.call("remember", {"text": "a first note"})
        elsewhere = str(tmp_path / "other.sock")
        out = d.cli("remember", "beside the daemon", "--timeout", "1", MEMD_SOCKET=elsewhere)
        assert out.returncode == 1, out.stdout
        assert "a daemon holds this memory" in out.stderr
        assert "beside the daemon" not in (d.memory / "_core" / "notes.md").read_text()
    finally:
        d.stop()
