"""The memory page in a real Chromium, against a real daemon and the real `memd ui` process.

With MEMD_SCREENSHOTS=1 these tests also write the screenshots in docs/screenshots/.
"""

from __future__ import annotations

import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.ui.uihelp import OlderDaemon, UiProcess, open_page, screenshot, seed
from tests.utils import DaemonProcess, wait_for

pytestmark = pytest.mark.browser


def test_token_link_opens_the_page_and_nothing_opens_without_it(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    seed(daemon)
    resp = browser.goto(f"{ui.base}/memory")
    assert resp.status == 403
    assert "This page needs its link" in browser.content()
    browser.goto(ui.url)
    browser.wait_for_url(f"{ui.base}/memory")  # the token left the address bar
    cookie = next(c for c in browser.context.cookies() if c["name"] == f"memd_ui_{ui.port}")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert browser.evaluate("document.cookie") == ""  # HttpOnly: scripts cannot read it
    # The tree: the core files first, each item with its metadata and where it came from.
    assert browser.locator("#group-_core details.file").count() >= 2
    old = browser.locator("li.item.superseded", has_text="User works at Acme Corp")
    assert old.locator("s").inner_text() == "User works at Acme Corp"
    assert "replaced by “User works at Globex”" in old.inner_text()
    new = browser.locator("li.item:not(.superseded)", has_text="User works at Globex")
    meta = new.inner_text()
    assert "personal" in meta and "importance 8" in meta and "hits 1" in meta and "added " in meta
    new.get_by_role("link", name="session s-globex, turn t1").click()
    browser.wait_for_url(re.compile(r"/conversations/session\?id=s-globex#turn-t1$"))
    assert browser.locator("#turn-t1").inner_text().count("Globex") == 1
    assert "User works at Globex" in browser.locator("#extracted").inner_text()
    screenshot(browser, "session")
    browser.goto(f"{ui.base}/memory")
    screenshot(browser, "memory")
    browser.set_viewport_size({"width": 390, "height": 844})
    screenshot(browser, "memory-phone")
    browser.set_viewport_size({"width": 1200, "height": 900})


def test_a_page_elsewhere_cannot_post_to_it(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    open_page(browser, ui, "/edit")
    notes = daemon.memory / "_core" / "notes.md"
    # The page's own form, its CSRF field taken out: refused.
    browser.fill("#remember-text", "posted without the csrf field")
    browser.evaluate("document.querySelector('#remember-form input[name=csrf]').remove()")
    with browser.expect_response(f"{ui.base}/remember") as r:
        browser.click("#remember-button")
    assert r.value.status == 403
    assert "CSRF" in browser.content()
    # Another origin's page submitting a form here: the cookie stays home, the post is refused.
    other = browser.context.new_page()
    other.set_content(
        f'<form method="post" action="{ui.base}/remember"><input name="text" value="cross-site">'
        '<input name="csrf" value="guessed"><button>go</button></form>'
    )
    with other.expect_response(f"{ui.base}/remember") as r:
        other.click("button")
    assert r.value.status == 403
    other.close()
    assert not any(
        t in p.read_text()
        for p in daemon.memory.rglob("*.md")
        for t in ("posted without the csrf field", "cross-site")
    )
    assert not notes.exists()


def test_search_highlights_hits_in_memory_and_conversations(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    seed(daemon)
    open_page(browser, ui, "/search")
    browser.fill("#search-q", "pinia")
    browser.keyboard.press("Enter")
    browser.wait_for_url(re.compile(r"/search\?q=pinia"))
    hits = browser.locator("#hits li.hit")
    assert hits.count() >= 2
    assert browser.locator("#hits li.hit.section mark").first.inner_text().lower() == "pinia"
    turn = browser.locator("#hits li.hit.turn").first
    assert turn.locator("mark").first.inner_text().lower() == "pinia"
    assert "Vue components use Pinia" in turn.inner_text()
    screenshot(browser, "search")
    # The exchange is one hit, the answer; the question is listed as its source, linked too.
    assert (
        turn.locator(".sources a").get_attribute("href")
        == "/conversations/session?id=s-vue#turn-t1"
    )
    turn.locator(".where a").click()
    browser.wait_for_url(re.compile(r"/conversations/session\?id=s-vue#turn-t2"))


def test_context_preview_shows_tiers_and_what_was_dropped(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    seed(daemon)
    open_page(browser, ui, "/context")
    browser.fill("#context-q", "how should I test this vue component?")
    browser.fill("input[name=budget]", "260")
    browser.click("#context-form button[type=submit]")
    browser.wait_for_url(re.compile(r"/context\?q="))
    tiers = browser.locator("#tiers tr.tier")
    assert [tiers.nth(i).get_attribute("data-tier") for i in range(3)] == [
        "user",
        "project",
        "conversation",
    ]
    want = daemon.call(
        "context", {"query": "how should I test this vue component?", "budget_tokens": 260}
    )
    for i, tier in enumerate(("user", "project", "conversation")):
        used = sum(s["tokens"] for s in want["sections"] if s["tier"] == tier)
        # Used against the quota the daemon reported, not one the page worked out itself.
        assert tiers.nth(i).locator("td.used").inner_text().split()[:3] == [
            str(used),
            "/",
            str(want["quotas"][tier]),
        ]
        label = tiers.nth(i).locator("svg.bar").get_attribute("aria-label")
        assert label == f"{used} of {want['quotas'][tier]} tokens"
    assert tiers.nth(0).locator("svg.bar rect").count() == 3
    dropped = browser.locator("#dropped tr.dropped")
    assert dropped.count() >= 1
    assert "over the user tier budget" in dropped.first.locator("td.reason").inner_text()
    block = browser.locator("#context-block").inner_text()
    assert block == want["text"]  # exactly what an assistant gets
    screenshot(browser, "context")


def test_remember_then_forget_changes_the_markdown_file(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    open_page(browser, ui, "/edit")
    notes = daemon.memory / "_core" / "notes.md"
    browser.fill("#remember-text", "Deploys happen on Tuesdays")
    browser.select_option("#remember-type", "decision")
    screenshot(browser, "edit")
    browser.click("#remember-button")
    browser.wait_for_url(re.compile(r"/memory\?msg=Remembered"))
    assert "Remembered m_" in browser.locator("#flash").inner_text()
    line = next(x for x in notes.read_text().splitlines() if "Deploys happen on Tuesdays" in x)
    m = re.search(r"id=(m_\w+)", line)
    assert m is not None, line
    item_id = m.group(1)
    assert "type=decision" in line and "src=manual" in line
    row = browser.locator(f"#item-{item_id}")
    assert "decision" in row.inner_text()
    browser.once("dialog", lambda d: d.accept())
    row.get_by_role("button", name="forget").click()
    browser.wait_for_url(re.compile(r"msg=Forgot"))
    assert "Deploys happen on Tuesdays" not in notes.read_text()
    assert browser.locator(f"#item-{item_id}").count() == 0
    # Dismissing the question keeps the item.
    daemon.call("remember", {"text": "Keep this one"})
    browser.reload()
    row = browser.locator("li.item", has_text="Keep this one")
    browser.once("dialog", lambda d: d.dismiss())
    row.get_by_role("button", name="forget").click()
    assert "Keep this one" in notes.read_text()


def test_changing_an_item_in_place_changes_the_markdown_line(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    r = daemon.call("remember", {"text": "Use squash merges", "type": "preference"})
    prefs = Path(r["path"])
    open_page(browser, ui, f"/edit?id={r['id']}")
    assert browser.locator("#edit-unavailable").count() == 0
    assert not browser.locator("#edit-form button[type=submit]").is_disabled()
    browser.fill("#edit-form textarea[name=text]", "Use rebase merges")
    browser.fill("#edit-form input[name=importance]", "9")
    browser.click("#edit-form button[type=submit]")
    browser.wait_for_url(re.compile(r"msg=Changed"))
    (line,) = [x for x in prefs.read_text().splitlines() if r["id"] in x]
    assert line.startswith("- Use rebase merges <!-- memd ") and "imp=9" in line
    # A change made in the file after the page was loaded is never written over.
    open_page(browser, ui, f"/edit?id={r['id']}")
    prefs.write_text(prefs.read_text().replace("Use rebase merges", "Use merge commits"))
    browser.fill("#edit-form textarea[name=text]", "Use fast-forward merges")
    browser.click("#edit-form button[type=submit]")
    browser.wait_for_url(re.compile(r"err="))
    assert "reload" in browser.locator("#flash-error").inner_text()
    assert "Use merge commits" in prefs.read_text() and "fast-forward" not in prefs.read_text()


def test_the_switch_turns_memory_off_and_says_what_that_means(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    seed(daemon)
    open_page(browser, ui, "/context?q=vue")
    assert browser.locator("#memory-state").inner_text() == "memory on"
    browser.click("#switch-button")
    browser.wait_for_url(re.compile(r"/context\?q=vue.*msg=Memory"))
    assert browser.locator("#memory-state").inner_text() == "memory off"
    banner = browser.locator(".banner.off").first.inner_text()
    assert "assistants get no memory" in banner and "Markdown files stay as they are" in banner
    assert daemon.call("status")["enabled"] is False
    assert daemon.call("context", {"query": "vue"})["text"] == ""
    browser.goto(f"{ui.base}/edit")
    assert browser.locator("#remember-button").is_disabled()
    browser.click("#switch-button")
    browser.wait_for_url(re.compile(r"msg=Memory"))
    assert browser.locator("#memory-state").inner_text() == "memory on"
    assert daemon.call("status")["enabled"] is True


def test_conversations_and_activity(daemon: DaemonProcess, ui: UiProcess, browser: Any) -> None:
    seed(daemon)
    open_page(browser, ui, "/conversations")
    bars = browser.locator("#timeline svg.timeline rect")
    assert bars.count() == 3  # three days with sessions, one source
    titles = [bars.nth(i).locator("title").text_content() for i in range(3)]
    assert all("1 session from ingest" in t for t in titles)
    assert browser.locator("#sessions ul.sessions li").count() == 3
    screenshot(browser, "conversations")
    browser.goto(f"{ui.base}/activity")
    assert browser.locator("#runs-note").count() == 0
    runs = browser.locator("#runs tbody tr.run")
    want = daemon.call("job_runs", {"limit": 60})["runs"]
    assert runs.count() == len(want) >= 1  # the daemon's run history, one row per run
    extract = browser.locator('#runs tr.run[data-job="extract"]')
    assert extract.count() == 1
    assert "added" in extract.inner_text() and "superseded" in extract.inner_text()
    assert extract.get_by_role("button", name="undo this run").count() == 1
    assert "running · pid" in browser.locator("#daemon-state").inner_text()
    assert "Off: set sync.backend" in browser.locator("#sync").inner_text()
    screenshot(browser, "activity")


def test_a_daemon_without_the_newer_methods_says_what_it_cannot_do(
    older_daemon: OlderDaemon, ui: UiProcess, browser: Any
) -> None:
    r = older_daemon.call("remember", {"text": "Use squash merges"})
    open_page(browser, ui, "/activity")
    assert "not available in this daemon" in browser.locator("#runs-note").inner_text()
    assert browser.locator("#jobs tbody tr").count() >= 3  # each job's last run, from `status`
    browser.goto(f"{ui.base}/edit?id={r['id']}")
    assert "not available in this daemon" in browser.locator("#edit-unavailable").inner_text()
    assert browser.locator("#edit-form button[type=submit]").is_disabled()


def test_with_the_daemon_stopped_the_page_reads_the_index_and_writes_as_the_cli_does(
    daemon: DaemonProcess, ui: UiProcess, browser: Any
) -> None:
    seed(daemon)
    open_page(browser, ui)
    daemon.stop()
    browser.goto(f"{ui.base}/search?q=vitest")
    banner = browser.locator("#daemon-down").inner_text()
    assert "The daemon is not running" in banner and "written straight to the files" in banner
    assert browser.locator("#hits li.hit").count() >= 1  # from the index on disk
    assert not browser.locator("#switch-button").is_disabled()
    screenshot(browser, "daemon-stopped")
    browser.goto(f"{ui.base}/edit")
    browser.fill("#remember-text", "written while the daemon is down")
    browser.click("#remember-button")
    browser.wait_for_url(re.compile(r"msg=Remembered"))
    notes = daemon.memory / "_core" / "notes.md"
    assert "written while the daemon is down" in notes.read_text()
    # The change is in the history, and undone from it like any other.
    browser.goto(f"{ui.base}/history")
    first = browser.locator("#changes li.change").first
    assert first.get_attribute("data-cause") == "remember"
    browser.once("dialog", lambda d: d.accept())
    first.locator("form.undo button").click()
    browser.wait_for_url(re.compile(r"msg=Undid"))
    # The remember had made the file: undoing it takes the file away again.
    assert not notes.exists() or "written while the daemon is down" not in notes.read_text()
    daemon.start()
    browser.goto(f"{ui.base}/memory")
    assert browser.locator("#daemon-down").count() == 0


def test_the_browser_is_opened_through_a_private_launch_file(
    daemon: DaemonProcess, home: Path, tmp_path: Path, browser: Any
) -> None:
    record = tmp_path / "argv"
    fake = tmp_path / "fake-browser"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(record)!r}, 'w').write(sys.argv[1])\n"
    )
    fake.chmod(0o700)
    ui = UiProcess(home, open_browser=True, BROWSER=str(fake)).start()
    try:
        wait_for(lambda: record.exists() and record.read_text(), 10)
        arg = record.read_text()
        assert ui.token not in arg  # command lines are visible to every user
        launch = Path(arg.removeprefix("file://"))
        assert stat.S_IMODE(launch.stat().st_mode) == 0o600
        assert stat.S_IMODE(launch.parent.stat().st_mode) == 0o700
        assert ui.token in launch.read_text()
        browser.goto(arg)
        browser.wait_for_url(f"{ui.base}/memory")
        assert browser.locator("h1").inner_text() == "Memory"
        assert not launch.exists()  # used once, then removed
    finally:
        ui.stop()


def test_activity_names_the_llm_backend_why_and_what_it_cost(
    home: Path, ui: UiProcess, browser: Any
) -> None:
    from tests.fakes.openai_server import FakeOpenAI, chat_json

    with FakeOpenAI() as server:
        d = DaemonProcess(home, MEMD_LLM_BASE_URL=server.base_url, MEMD_LLM_MODEL="qwen3:4b",
                          MEMD_LLM_CLAUDE_PATH=str(home / "no-claude")).start()  # fmt: skip
        try:
            d.call("ingest", {"session_id": "s1", "role": "user", "content": "I use Neovim."})
            server.enqueue(chat_json({"memories": [{"content": "User uses Neovim",
                                                    "type": "skill", "importance": 6}]},
                                     prompt_tokens=700, completion_tokens=40))  # fmt: skip
            assert d.call("run_job", {"name": "extract"})["outcome"] == "success"
            open_page(browser, ui, "/activity")
            llm = browser.locator("#llm").inner_text()
            assert llm.startswith(f"openai qwen3:4b at {server.base_url}"), llm
            assert f"auto: llm.base_url {server.base_url} answers" in llm
            assert "1 LLM request, 740 tokens today · at most 30 requests a minute" in llm
            run = browser.locator('#runs tr.run[data-job="extract"]').inner_text()
            assert "(openai qwen3:4b)" in run and "1 LLM request, 740 tokens" in run, run
        finally:
            d.stop()
