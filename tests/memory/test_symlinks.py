"""Symbolic links in the memory tree: nothing outside the memory roots is indexed, served,
queued for sync, exported or written, and a link inside the tree counts once, at its target.

Every test runs a real daemon on real files; "outside" is a folder next to MEMD_HOME.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memd.api.client import RemoteError
from memd.core.errors import InvalidParams, MemdError, PathError
from tests.utils import DaemonProcess, wait_for

SECRET = "outsidesecret7f3a"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.md").write_text(f"# Secret\n\n## Keys\n- {SECRET} lives here\n")
    return d


def texts(d: DaemonProcess, query: str) -> str:
    ctx = d.call("context", {"query": query, "budget_tokens": 4000})
    hits = d.call("search", {"query": query, "limit": 50})["hits"]
    assert isinstance(ctx["text"], str)
    return ctx["text"] + "\n" + "\n".join(h["snippet"] + h["path"] for h in hits)


def settle(d: DaemonProcess, name: str) -> None:
    """Write a sentinel file and wait until it is searchable: every earlier event is handled."""
    word = "sentinel" + name.replace("-", "")
    (d.memory / "topics" / f"{name}.md").write_text(f"# S\n\n## S\n- {word}\n")
    wait_for(lambda: d.search_paths(word), 10)


def test_links_leaving_the_tree_are_never_indexed_served_or_queued(
    home: Path, outside: Path
) -> None:
    d = DaemonProcess(
        home,
        MEMD_SYNC_BACKEND="postgres",
        MEMD_SYNC_DSN="postgresql://memd@127.0.0.1:1/nowhere?connect_timeout=1",
        MEMD_SYNC_INTERVAL_S="3600",
        MEMD_SYNC_PUSH_DELAY_S="0",
    )
    home.mkdir(exist_ok=True)
    memory = home / "memory"
    (memory / "topics").mkdir(parents=True)
    # Present at start (the startup walk) ...
    os.symlink("/etc/passwd", memory / "topics" / "passwd.md")
    os.symlink(outside / "secret.md", memory / "topics" / "secret.md")
    os.symlink(outside, memory / "topics" / "linked-dir")
    d.start()
    try:
        # ... and made while the daemon runs (the watcher).
        os.symlink(outside, memory / "agents-linked")
        os.symlink(outside / "secret.md", memory / "_core" / "late.md")
        settle(d, "after-links")
        d.call("reindex", {})

        assert "root:x:0:0" not in texts(d, "root")
        assert SECRET not in texts(d, SECRET)
        assert not any(str(outside) in p or "passwd" in p for p in d.search_paths("lives"))
        mems = d.call("memories", {})["items"]
        assert not any(SECRET in m["text"] for m in mems)
        conn = sqlite3.connect(f"file:{home / 'data' / 'index.db'}?mode=ro", uri=True)
        try:
            files = [r[0] for r in conn.execute("SELECT path FROM files")]
            queued = [(r[0], r[1]) for r in conn.execute("SELECT path, content FROM sync_outbox")]
        finally:
            conn.close()
        assert not [f for f in files if "passwd" in f or "secret" in f or "linked" in f], files
        assert queued, "the sentinel file is queued: the hook ran"
        assert not [p for p, c in queued if "root:x:0:0" in c or SECRET in c or "passwd" in p]
        # The user sees why those files are not in memory.
        problems = {p["path"]: p["reason"] for p in d.call("status")["problems"]}
        for link in ("topics/passwd.md", "topics/secret.md", "topics/linked-dir", "_core/late.md"):
            assert problems[str(memory / link)].startswith("symbolic link to "), problems
        (memory / "topics" / "passwd.md").unlink()
        settle(d, "after-unlink")
        problem_paths = {p["path"] for p in d.call("status")["problems"]}
        assert str(memory / "topics" / "passwd.md") not in problem_paths
    finally:
        d.stop()


def test_an_extra_root_is_a_folder_included_on_purpose(home: Path, outside: Path) -> None:
    memory = home / "memory"
    (memory / "_core").mkdir(parents=True)
    (outside / "notes.md").write_text("# Notes\n\n## Notes\n- kept in the shared folder\n")
    os.symlink(outside / "notes.md", memory / "_core" / "notes.md")
    d = DaemonProcess(home, MEMD_MEMORY_EXTRA_ROOTS=f'["{outside}"]').start()
    try:
        assert d.search_paths(SECRET) == {str(outside / "secret.md")}
        r = d.call("remember", {"text": "written through the link"})
        assert r["path"] == str(outside / "notes.md")
        assert (memory / "_core" / "notes.md").is_symlink()
        assert "written through the link" in (outside / "notes.md").read_text()
        assert not [p for p in d.call("status")["problems"] if "symbolic" in p["reason"]]
    finally:
        d.stop()


def test_a_link_inside_the_tree_is_indexed_once_by_its_real_path(home: Path) -> None:
    memory = home / "memory"
    (memory / "topics" / "deep").mkdir(parents=True)
    real = memory / "topics" / "deep" / "garden.md"
    real.write_text("# Garden\n\n## Plants\n- tomatoes need sun\n")
    os.symlink(real, memory / "topics" / "garden-link.md")
    os.symlink("..", memory / "topics" / "deep" / "up")  # a cycle: topics/deep/up -> topics
    os.symlink(memory, memory / "topics" / "root-again")  # another way round
    d = DaemonProcess(home).start()
    try:
        hits = d.call("search", {"query": "tomatoes", "limit": 50})["hits"]
        assert [h["path"] for h in hits] == [str(real)]
        ctx = d.call("context", {"query": "garden tomatoes", "budget_tokens": 4000})
        assert ctx["text"].count("tomatoes need sun") == 1
    finally:
        d.stop()


def test_remember_keeps_a_link_and_writes_its_target_only_inside_the_roots(
    home: Path, outside: Path
) -> None:
    memory = home / "memory"
    (memory / "_core").mkdir(parents=True)
    (memory / "topics").mkdir()
    shared = memory / "topics" / "shared-notes.md"
    shared.write_text("# Notes\n\n## Notes\n- hand written\n")
    os.symlink("../topics/shared-notes.md", memory / "_core" / "notes.md")
    (outside / "notes.md").write_text("# Outside\n")
    os.symlink(outside / "notes.md", memory / "_core" / "preferences.md")
    d = DaemonProcess(home).start()
    try:
        r = d.call("remember", {"text": "always use vitest"})
        assert (memory / "_core" / "notes.md").is_symlink(), "the link is kept"
        assert "always use vitest" in shared.read_text() and "hand written" in shared.read_text()
        assert r["path"] == str(shared)
        assert [h["path"] for h in d.call("search", {"query": "vitest"})["hits"]] == [str(shared)]

        # A link whose target leaves the tree is never written through, nor replaced.
        with pytest.raises(MemdError) as err:
            d.call("remember", {"text": "prefers tabs", "type": "preference"})
        assert "outside" in str(err.value) or "leaves" in str(err.value)
        assert (outside / "notes.md").read_text() == "# Outside\n"
        assert (memory / "_core" / "preferences.md").is_symlink()
    finally:
        d.stop()


def test_agent_folder_linked_outside_is_refused(home: Path, outside: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        os.symlink(outside, d.memory / "agents" / "evil")
        with pytest.raises((InvalidParams, PathError, RemoteError)) as err:
            d.call("remember", {"text": "x marks the spot", "scope": "agent", "agent_id": "evil"})
        assert "evil" in str(err.value)
        assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
        assert (d.memory / "agents" / "evil").is_symlink()
        # The daemon keeps serving.
        assert d.call("remember", {"text": "fine", "scope": "agent", "agent_id": "good"})["id"]
    finally:
        d.stop()


def test_export_and_archival_never_read_or_write_through_outside_links(
    home: Path, outside: Path
) -> None:
    d = DaemonProcess(home).start()
    try:
        memory = d.memory
        os.symlink(outside / "secret.md", memory / "topics" / "secret.md")
        os.symlink(outside / "secret.md", memory / "journal" / "2000-01-01.md")
        settle(d, "before-export")
        out = home / "export.json"
        d.call("export", {"path": str(out)})
        assert SECRET not in out.read_text()

        # The archive folder itself leaves the tree: archival writes nothing there.
        (memory / "journal" / "2000-01-02.md").write_text("# 2000-01-02\n\n- old day\n")
        os.rmdir(memory / "archive")
        os.symlink(outside, memory / "archive")
        res: dict[str, Any] = d.call("run_job", {"name": "archive"})
        assert sorted(p.name for p in outside.iterdir()) == ["secret.md"], res
        assert SECRET in (outside / "secret.md").read_text()
        assert (memory / "journal" / "2000-01-01.md").is_symlink()
        assert (memory / "journal" / "2000-01-02.md").exists()
    finally:
        d.stop()


def test_an_agent_folder_linked_outside_gets_no_relationship_file(
    home: Path, outside: Path
) -> None:
    d = DaemonProcess(home).start()
    try:
        os.symlink(outside, d.memory / "agents" / "evil")
        turns = [{"session_id": "s-evil", "role": r, "agent_id": "evil", "content": c}
                 for r, c in (("user", "I prefer tabs over spaces, always."),
                              ("assistant", "Noted: tabs."))]  # fmt: skip
        d.call("ingest", {"turns": turns})
        d.call("run_job", {"name": "extract"})
        assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
        assert (d.memory / "agents" / "evil").is_symlink()
        # Nor is a relationship file there read back.
        (outside / "relationship.md").write_text("# R\n\n## Memory Points\n\n- OUTSIDE-POINT\n")
        assert "OUTSIDE-POINT" not in str(d.call("relationship", {"agent_id": "evil"}))
    finally:
        d.stop()
