"""The page's layout in a real Chromium: after Remember or Edit the message and the changed
item are in sight (not under the sticky bar), and on a phone every view is in reach from the
nav bar."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.ui.uihelp import UiProcess, open_page
from tests.utils import DaemonProcess

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1200, "height": 900}


def box(page: Any, selector: str) -> dict[str, float]:
    found: dict[str, float] = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return found


def seen(page: Any, selector: str) -> bool:
    """Whether the element is in the viewport and on top there (not under another element)."""
    return bool(
        page.evaluate(
            """(selector) => {
                const el = document.querySelector(selector);
                const r = el.getBoundingClientRect();
                if (r.top < 0 || r.bottom > window.innerHeight || r.height === 0) return false;
                const x = r.left + Math.min(10, r.width / 2), y = r.top + Math.min(8, r.height / 2);
                const hit = document.elementFromPoint(x, y);
                return hit !== null && (el === hit || el.contains(hit));
            }""",
            selector,
        )
    )


def fill_the_page(daemon: DaemonProcess) -> None:
    """Enough items that the page scrolls to reach the last file."""
    for i in range(40):
        daemon.call("remember", {"text": f"a preference to scroll past, number {i}",
                                 "type": "preference"})  # fmt: skip


@pytest.mark.parametrize("size", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_after_a_change_the_message_and_the_item_are_in_sight(
    daemon: DaemonProcess, ui: UiProcess, browser: Any, size: dict[str, int]
) -> None:
    fill_the_page(daemon)
    browser.set_viewport_size(size)
    open_page(browser, ui, "/edit")
    browser.fill("#remember-text", "Deploys happen on Tuesdays")
    browser.click("#remember-button")
    browser.wait_for_url(re.compile(r"/memory\?msg=Remembered.*#item-m_\w+$"))
    item = "#" + browser.url.rsplit("#", 1)[1]
    assert browser.evaluate("window.scrollY") > 0  # the page did scroll to the item
    assert seen(browser, "#flash") and "Remembered m_" in browser.inner_text("#flash")
    assert seen(browser, f"{item} .text"), "the remembered item is under the sticky bar"
    assert box(browser, item)["y"] >= box(browser, "#sticky")["height"] - 1
    # Changing it: the same, with the "Changed…" message.
    browser.goto(f"{ui.base}/edit?id={item.removeprefix('#item-')}")
    browser.fill("#edit-form textarea[name=text]", "Deploys happen on Wednesdays")
    browser.click("#edit-form button[type=submit]")
    browser.wait_for_url(re.compile(r"msg=Changed.*#item-m_\w+$"))
    item = "#" + browser.url.rsplit("#", 1)[1]
    assert seen(browser, "#flash") and "Changed" in browser.inner_text("#flash")
    assert seen(browser, f"{item} .text")
    assert "Wednesdays" in browser.inner_text(item)
    # The message can be closed; what it covered is then in sight.
    browser.click("#flash .dismiss")
    assert browser.locator("#flash").count() == 0


def test_on_a_phone_every_view_is_in_reach_from_the_nav_bar(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    browser.set_viewport_size(PHONE)
    open_page(browser, ui, "/memory")
    links = browser.locator("header.top nav a")
    names = [links.nth(i).inner_text() for i in range(links.count())]
    assert names == ["Memory", "Search", "Context preview", "Conversations", "Activity",
                     "History", "Edit"]  # fmt: skip
    for i in range(links.count()):
        b = links.nth(i).bounding_box()
        assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= PHONE["width"], names[i]
        assert seen(browser, f"header.top nav a:nth-child({i + 1})"), names[i]
    # The last one works with a tap.
    links.nth(6).click()
    browser.wait_for_url(f"{ui.base}/edit")
    # The bar stays a small part of the screen.
    assert box(browser, "#sticky")["height"] < PHONE["height"] / 5
