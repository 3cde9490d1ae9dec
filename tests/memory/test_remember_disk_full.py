"""`remember` on a full disk: an error answer leaves no line behind, so a retry adds it once.

The disk is a small tmpfs (needs root; skipped otherwise), filled up to a few free pages: room
for the Markdown write, not always for the index's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.core.errors import DiskFull
from tests.daemon.test_disk_full import daemon_on, fill, tiny_disk

__all__ = ["tiny_disk"]


@pytest.mark.parametrize("free_kb", [8, 24, 64])
def test_a_failed_remember_leaves_no_line_and_a_retry_adds_one(
    tiny_disk: Path, tmp_path: Path, free_kb: int
) -> None:
    d = daemon_on(tiny_disk, tmp_path).start()
    try:
        notes = d.memory / "_core" / "notes.md"
        d.call("remember", {"text": "a first fact, written with room to spare"})
        filler = fill(tiny_disk)
        os.truncate(filler, filler.stat().st_size - free_kb * 1024)
        failed: list[str] = []
        for i in range(60):
            text = f"fact number {i} said while the disk fills up " + "words " * 30
            try:
                d.call("remember", {"text": text})
            except DiskFull:
                failed.append(text)
                if len(failed) >= 3:
                    break
        assert failed, "no remember failed: the disk never filled"
        left = [t for t in failed if t.strip() in notes.read_text()]
        assert left == [], f"{len(left)} of {len(failed)} failed remembers left their line"
        filler.unlink()
        for text in failed:  # the retries, once there is room again
            assert d.call("remember", {"text": text})["existed"] is False
        body = notes.read_text()
        assert all(body.count(t.strip()) == 1 for t in failed)
        ids = {i["text"] for i in d.call("memories")["items"]}
        assert all(t.strip() in ids for t in failed)
    finally:
        d.stop()
