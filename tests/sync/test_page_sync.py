"""The page's Activity view of cloud sync, from a real `memd ui` over a device's index."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sync.conftest import Device
from tests.ui.uihelp import UiProcess

pytestmark = pytest.mark.postgres


def _sync_section(device: Device, dsn: str, table: str) -> str:
    """The #sync section of /activity, as `memd ui` shows it with no daemon (from the index)."""
    ui = UiProcess(device.home, MEMD_SYNC_BACKEND="postgres", MEMD_SYNC_DSN=dsn,
                   MEMD_SYNC_TABLE=table, MEMD_SYNC_USER_ID="alice").start()  # fmt: skip
    try:
        status, _, page = ui.request("GET", "/activity", headers={"Cookie": ui.sign_in()})
    finally:
        ui.stop()
    assert status == 200
    start = page.index('<section id="sync">')
    return page[start : page.index("</section>", start)]


def test_a_conflict_is_shown_with_its_cloud_copy(devices: Any, sync_dsn: str, table: str) -> None:
    a, b = devices("a"), devices("b")
    a.write("topics/rust.md", "# Rust\n")
    a.sync()
    b.sync()
    a.write("topics/rust.md", "# Rust\n\n- prefers nextest\n")
    b.write("topics/rust.md", "# Rust\n\n- prefers cargo test\n")
    a.sync()
    assert b.sync()["counts"]["conflicts"] == 1
    (conflict,) = b.status()["conflicts"]
    section = _sync_section(b, sync_dsn, table)
    assert "<dt>state</dt><dd>on · postgres</dd>" in section, section
    assert "<dd>0 pending (0 due), 0 parked</dd>" in section, section
    # Each conflict names the file, what happened and where the cloud's version was put (not
    # a method of the answer's dictionary).
    shown = f"<li><code>topics/rust.md</code>: changed-both · cloud version in <code>{conflict['copy']}</code> · "
    assert shown in section, section
    assert "built-in method" not in section, section
