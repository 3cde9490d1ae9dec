"""Fixtures of the memory page's tests: daemons, a real `memd ui`, a real Chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.uihelp import OlderDaemon, UiProcess
from tests.utils import DaemonProcess

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def older_daemon(home: Path) -> Iterator[OlderDaemon]:
    d = OlderDaemon(home)
    d.start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()


@pytest.fixture
def ui(home: Path) -> Iterator[UiProcess]:
    u = UiProcess(home).start()
    yield u
    u.stop()


@pytest.fixture(scope="module")
def module_ui(module_daemon: DaemonProcess) -> Iterator[UiProcess]:
    """One `memd ui` over the module's daemon (`module_daemon`), for the tests of a module that
    each leave both as they found them: requests the page refuses, reads, headers."""
    u = UiProcess(module_daemon.home).start()
    yield u
    u.stop()


def browser_missing() -> str:
    """Why the browser tests cannot run here, or "" when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -e '.[test]')"
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium; or set CHROMIUM)"
    return ""


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real headless Chromium with a fresh profile, for one test module.

    On CI (CI=true) a missing browser fails the run: skipped browser tests would hide it.
    """
    reason = browser_missing()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests must run on CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1200, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    """A new tab with no cookies from earlier tests."""
    chromium.clear_cookies()
    page = chromium.new_page()
    yield page
    page.close()
