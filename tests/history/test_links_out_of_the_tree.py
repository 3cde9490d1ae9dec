"""A symbolic link in the memory tree that leads out of it: the history skips it quietly, the
rest of the tree is recorded as ever, and the link is a listed problem from the start.

The history never reads through a link (it could commit a file from anywhere on the disk);
the indexer does not read it either and lists it under problems. Neither may cost a warning
at every start and every write, nor hide the edits made next to it while memd was stopped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.utils import DaemonProcess, wait_for


def _warnings(d: DaemonProcess) -> list[str]:
    return [
        line
        for line in d.log.read_text(errors="replace").splitlines()
        if "not recorded" in line or "is a symlink" in line
    ]


def _changes(d: DaemonProcess) -> list[dict[str, Any]]:
    return list(d.call("history", {"limit": 100})["changes"])


def _link_out(d: DaemonProcess, tmp_path: Path) -> Path:
    secret = tmp_path / "outside.md"
    secret.write_text("# Outside\n\n- host kestrel\n")
    link = d.memory / "topics" / "outside.md"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(secret, link)
    return link


def test_a_link_out_of_the_tree_is_skipped_quietly_and_listed_at_start(
    home: Path, tmp_path: Path
) -> None:
    d = DaemonProcess(home).start()
    d.stop()
    link = _link_out(d, tmp_path)
    notes = d.memory / "_core" / "notes.md"
    notes.write_text("# Notes\n\n## Notes\n\n- written while memd was stopped\n")

    d.start()
    try:
        problems = {p["path"]: p["reason"] for p in d.call("status")["problems"]}
        assert str(link) in problems, problems  # at start, without a reindex
        assert "outside the memory folders" in problems[str(link)]
        # The edit made while memd was stopped is recorded at start, the link is not.
        hand = [c for c in _changes(d) if c["cause"] == "hand"]
        assert hand and {f["path"] for f in hand[0]["files"]} == {"_core/notes.md"}, hand
        # One made while memd runs is listed as soon as the watcher sees it.
        later = d.memory / "topics" / "later.md"
        os.symlink(tmp_path / "outside.md", later)
        wait_for(lambda: str(later) in {p["path"] for p in d.call("status")["problems"]}, 10)
        d.call("remember", {"text": "The deploy window is Thursday"})
        wait_for(lambda: any(c["cause"] == "remember" for c in _changes(d)), 10)
        d.call("reindex", {})
        assert all("topics/outside.md" not in str(c["files"]) for c in _changes(d))
        assert _warnings(d) == []
    finally:
        d.stop()
    # A write without a daemon (the CLI writes directly) says nothing about the link either.
    out = d.cli("remember", "Written without the daemon")
    assert out.returncode == 0, out.stderr
    assert "not recorded" not in out.stderr and "symlink" not in out.stderr
