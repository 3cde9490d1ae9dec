"""The History view in a real Chromium, against a real daemon and the real `memd ui` process:
changes newest first, a change's diff, and Undo (refused, writing nothing, on a conflict).

With MEMD_SCREENSHOTS=1 these tests also write docs/screenshots/history*.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.ui.uihelp import UiProcess, open_page, screenshot, seed
from tests.utils import DaemonProcess

pytestmark = pytest.mark.browser


def accept_next_dialog(page: Any) -> None:
    page.once("dialog", lambda d: d.accept())


def causes(daemon: DaemonProcess) -> list[str]:
    return [c["cause"] for c in daemon.call("history", {"limit": 20})["changes"]]


def test_edit_delete_then_undo_the_delete_from_the_history(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    r = daemon.call("remember", {"text": "Use squash merges", "type": "preference"})
    prefs = Path(r["path"])
    item = r["id"]
    # Edit the item, then delete it, both on the page.
    open_page(browser, ui, f"/edit?id={item}")
    browser.fill("#edit-form textarea[name=text]", "Use rebase merges")
    browser.click("#edit-form button[type=submit]")
    browser.wait_for_url(re.compile(r"msg=Changed"))
    accept_next_dialog(browser)
    browser.locator(f"#item-{item}").get_by_role("button", name="forget").click()
    browser.wait_for_url(re.compile(r"msg=Forgot"))
    assert "Use rebase merges" not in prefs.read_text()
    # The History view, from the nav bar: newest first, each change with its cause and files.
    browser.get_by_role("link", name="History", exact=True).click()
    browser.wait_for_url(f"{ui.base}/history")
    rows = browser.locator("#changes li.change")
    assert [rows.nth(i).get_attribute("data-cause") for i in range(3)] == [
        "forget",
        "edit",
        "remember",
    ]
    forget = rows.nth(0)
    assert "Use rebase merges" in forget.locator(".summary").inner_text()
    assert forget.locator("ul.files").inner_text().split() == [
        "M",
        "_core/preferences.md",
        "·",
        "open",
    ]
    forget_id = forget.get_attribute("data-id")
    assert forget_id == daemon.call("history", {"limit": 1})["changes"][0]["id"]
    # Its diff, through `show_change`.
    forget.get_by_role("link", name="diff").click()
    browser.wait_for_url(re.compile(r"/history/change\?id="))
    assert "forget" in browser.locator("#change-facts").inner_text()
    removed = browser.locator("pre.diff span.del")
    assert removed.count() == 1 and removed.inner_text().startswith(
        "-- Use rebase merges <!-- memd"
    )
    assert browser.locator("pre.diff span.add").count() == 0
    screenshot(browser, "history-diff")
    # Undo it: the item is back in the Markdown file, and the undo is a change of its own.
    accept_next_dialog(browser)
    browser.get_by_role("button", name="Undo this change").click()
    browser.wait_for_url(re.compile(r"/history\?msg=Undid"))
    assert f"Undid {forget_id}" in browser.locator("#flash").inner_text()
    assert "rewrote _core/preferences.md" in browser.locator("#flash").inner_text()
    (line,) = [x for x in prefs.read_text().splitlines() if item in x]
    assert line.startswith("- Use rebase merges <!-- memd ")
    top = browser.locator("#changes li.change").first
    assert top.get_attribute("data-cause") == "undo"
    assert f"undoes {forget_id}" in top.locator(".meta").inner_text()
    assert causes(daemon)[:2] == ["undo", "forget"]
    screenshot(browser, "history")
    # The item is on the Memory view again, and links to its own history.
    browser.goto(f"{ui.base}/memory")
    row = browser.locator(f"#item-{item}")
    assert "Use rebase merges" in row.inner_text()
    row.get_by_role("link", name="history").click()
    browser.wait_for_url(re.compile(r"/history\?path=_core(/|%2F)preferences.md&item="))
    marked = browser.locator("#changes li.change.names-item")
    assert {marked.nth(i).get_attribute("data-cause") for i in range(marked.count())} >= {
        "remember",
        "edit",
        "forget",
    }


def test_an_undo_refused_on_a_conflict_shows_why_and_writes_nothing(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    r = daemon.call("remember", {"text": "Deploys happen on Tuesdays"})
    notes = Path(r["path"])
    open_page(browser, ui, "/history")
    row = browser.locator("#changes li.change").first
    assert row.get_attribute("data-cause") == "remember"
    change = row.get_attribute("data-id")
    # Someone edits the remembered line by hand after the page was loaded.
    notes.write_text(notes.read_text().replace("on Tuesdays", "on Fridays"))
    edited = notes.read_bytes()
    accept_next_dialog(browser)
    row.get_by_role("button", name="undo").click()
    browser.wait_for_url(re.compile(r"/history\?err="))
    err = browser.locator("#flash-error").inner_text()
    assert f"cannot undo {change}: _core/notes.md" in err and "edited since by" in err
    assert notes.read_bytes() == edited  # nothing written
    assert "undo" not in causes(daemon)  # no undo was recorded
    # Undo from the diff view is refused the same way, and the refusal is shown there.
    browser.goto(f"{ui.base}/history/change?id={change}")
    accept_next_dialog(browser)
    browser.get_by_role("button", name="Undo this change").click()
    browser.wait_for_url(re.compile(r"/history/change\?id=.*err="))
    assert "cannot undo" in browser.locator("#flash-error").inner_text()
    assert notes.read_bytes() == edited


def test_undo_an_extraction_run_from_activity(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    run = seed(daemon)
    profile = daemon.memory / "_core" / "profile.md"
    assert "User works at Globex" in profile.read_text()
    open_page(browser, ui, "/activity")
    accept_next_dialog(browser)
    browser.locator('#runs tr.run[data-job="extract"]').get_by_role(
        "button", name="undo this run"
    ).click()
    browser.wait_for_url(re.compile(r"/history\?msg=Undid"))
    text = profile.read_text() if profile.exists() else ""
    assert "User works at Globex" not in text and "superseded" not in text
    top = browser.locator("#changes li.change").first
    assert top.get_attribute("data-cause") == "undo"
    run_changes = [
        c["id"]
        for c in daemon.call("history", {"limit": 50})["changes"]
        if c["run"] == str(run["counts"]["run"])
    ]
    assert run_changes and all(c in top.locator(".meta").inner_text() for c in run_changes)


def test_a_file_links_to_its_history(daemon: DaemonProcess, ui: UiProcess, browser: Any) -> None:
    daemon.call("remember", {"text": "Always write tests first"})
    open_page(browser, ui, "/memory/file?root=0&rel=_core/notes.md")
    browser.click("#file-history")
    browser.wait_for_url(re.compile(r"/history\?path=_core(/|%2F)notes.md$"))
    assert browser.locator("#history-path").input_value() == "_core/notes.md"
    rows = browser.locator("#changes li.change")
    assert rows.count() >= 1
    for i in range(rows.count()):
        assert "_core/notes.md" in rows.nth(i).locator("ul.files").inner_text()
