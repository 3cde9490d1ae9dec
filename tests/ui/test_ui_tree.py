"""The memory tree as the page reads it, checked against what the daemon indexed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.api.messages import STATUS, decode_result
from memd.ui import tree
from tests.ui.uihelp import seed
from tests.utils import DaemonProcess, wait_for

MAX = 1 << 20


def test_the_page_names_every_item_as_the_daemon_does(daemon: DaemonProcess) -> None:
    seed(daemon)
    (daemon.memory / "agents" / "bot").mkdir(parents=True)
    (daemon.memory / "agents" / "bot" / "relationship.md").write_text(
        "# Bot\n\n## Memory Points\n- likes haiku\n"
    )
    (daemon.memory / "projects" / "shop").mkdir(parents=True)
    (daemon.memory / "projects" / "shop" / "context.md").write_text(
        "# Shop\n\n## Context\n- API errors use RFC 7807\n"
    )
    wait_for(lambda: daemon.search_paths("haiku") and daemon.search_paths("7807"), 5)
    status = decode_result(STATUS, daemon.call("status"))
    roots = tree.roots_from_status(status)
    groups = tree.scan(roots, status.problems or [], max_bytes=MAX)
    assert [g.key for g in groups] == [
        "_core",
        "topics",
        "agents",
        "projects",
        "journal",
        "archive",
    ]
    shown = {(f.rel, i.line): i for g in groups for f in g.files if f.inline for i in f.items}
    indexed = daemon.call("memories", {"all": True})["items"]
    assert {(m["rel"], m["line"]): m["id"] for m in indexed} == {k: i.id for k, i in shown.items()}
    old = next(i for i in shown.values() if i.text == "User works at Acme Corp")
    assert old.superseded and old.replaced_by is not None
    assert (
        old.replaced_by.text == "User works at Globex" and old.replaced_by.rel == "_core/profile.md"
    )
    assert old.sources == [("s-acme", "t1")] and old.type == "personal" and old.importance == "8"
    core = groups[0].files
    assert [f.rel for f in core][:2] == ["_core/preferences.md", "_core/profile.md"]
    vue = next(f for g in groups for f in g.files if f.rel == "topics/vue.md")
    assert [s.heading for s in vue.sections] == ["Components", "Testing", "State"]
    assert all(not i.managed for i in vue.items)
    journal = next(g for g in groups if g.key == "journal")
    assert journal.files and not any(f.inline or f.sections for f in journal.files)
    assert tree.agents_and_projects(roots) == (["bot"], ["shop"])


def test_problem_files_are_shown_with_their_reason(daemon: DaemonProcess) -> None:
    (daemon.memory / "topics" / "broken.md").write_text(
        "---\nkey: [unclosed\n---\n# Broken\n\n- kept\n"
    )
    (daemon.memory / "topics" / "latin1.md").write_bytes(b"# Caf\xe9\n\n- menu\n")
    wait_for(lambda: len(daemon.call("status")["problems"]) == 2, 5)
    status = decode_result(STATUS, daemon.call("status"))
    files = {
        f.rel: f
        for g in tree.scan(tree.roots_from_status(status), status.problems or [], max_bytes=MAX)
        for f in g.files
    }
    assert files["topics/broken.md"].problem.startswith("broken front matter")
    assert [i.text for i in files["topics/broken.md"].items] == ["kept"]  # nothing is hidden
    assert files["topics/latin1.md"].problem == "invalid UTF-8 at byte 5"


def test_only_memory_files_inside_a_root_can_be_opened(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "_core").mkdir(parents=True)
    (root / "_core" / "profile.md").write_text("# Me\n")
    (root / "notes.txt").write_text("not memory")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n")
    (root / "topics").mkdir()
    os.symlink(outside, root / "topics" / "link.md")
    os.symlink(tmp_path, root / "topics" / "up")
    roots = [tree.RootInfo(0, root)]
    found = tree.resolve_file(roots, 0, "_core/profile.md")
    assert found is not None and found[1] == root / "_core" / "profile.md"
    for rel in (
        "../secret.md",
        "_core/../../secret.md",
        "/etc/hostname",
        "topics/link.md",
        "topics/up/secret.md",
        "notes.txt",
        "_core/missing.md",
        "_core//profile.md",
        "",
    ):
        assert tree.resolve_file(roots, 0, rel) is None, rel
    assert tree.resolve_file(roots, 1, "_core/profile.md") is None
    assert tree.resolve_file(roots, -1, "_core/profile.md") is None


@pytest.mark.parametrize(
    ("meta", "expired"),
    [
        ({"expires": "2000-01-01"}, True),
        ({"expires": "2999-01-01"}, False),
        ({"expires": "soon"}, False),
        ({}, False),
    ],
)
def test_expiry(meta: dict[str, str], expired: bool) -> None:
    import datetime as dt

    item = tree.ItemView("m_1", "x", 1, {"id": "m_1", **meta}, "a.md", 0)
    assert item.expired(dt.date(2026, 11, 23)) is expired


@pytest.mark.parametrize(
    ("meta", "dates"),
    [
        ({"at": "2026-03-02", "added": "2026-03-04"}, "said 2026-03-02, added 2026-03-04"),
        ({"at": "2026-03-02", "added": "2026-03-02"}, "added 2026-03-02"),
        ({"at": "2026-03-02"}, "added 2026-03-02"),
        ({}, ""),
    ],
)
def test_an_item_shows_the_day_it_was_said_and_the_day_it_was_added(
    meta: dict[str, str], dates: str
) -> None:
    assert tree.ItemView("m_1", "x", 1, {"id": "m_1", **meta}, "a.md", 0).dates == dates
