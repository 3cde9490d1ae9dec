"""`edit_item` over the socket: change an item in place, move it, refuse stale or bad edits.

A real daemon, real files, the real socket.
"""

from __future__ import annotations

import pytest

from memd.api.client import RemoteError
from memd.core.errors import EditConflict, InvalidParams, NotFound
from memd.memory.parse import split_item
from tests.utils import DaemonProcess, wait_for


def item_line(daemon: DaemonProcess, rel: str, item_id: str) -> str:
    lines = (daemon.memory / rel).read_text().split("\n")
    found = [x for x in lines if f"id={item_id}" in x]
    assert len(found) == 1, (rel, item_id, found)
    return found[0]


def test_text_importance_pin_and_expiry(module_daemon: DaemonProcess) -> None:
    r = module_daemon.call("remember", {"text": "Use squash merges", "type": "preference"})
    rel = "_core/preferences.md"
    out = module_daemon.call(
        "edit_item",
        {"id": r["id"], "expect_text": "Use squash merges", "text": "Use rebase merges",
         "importance": 9, "pinned": True, "expires": "2031-01-31"},
    )  # fmt: skip
    assert out["id"] == r["id"] and out["path"] == r["path"] and out["moved_from"] == ""
    assert out["text"] == "Use rebase merges"
    assert out["meta"]["imp"] == "9" and out["meta"]["pinned"] == "true"
    assert out["meta"]["expires"] == "2031-01-31" and out["meta"]["type"] == "preference"
    split = split_item(item_line(module_daemon, rel, r["id"]))
    assert split is not None
    text, meta = split
    assert text == "Use rebase merges" and meta == out["meta"]
    assert (
        out["line"]
        == (module_daemon.memory / rel)
        .read_text()
        .split("\n")
        .index(item_line(module_daemon, rel, r["id"]))
        + 1
    )
    # Unpin and clear the expiry; the index follows at once.
    out = module_daemon.call("edit_item", {"id": r["id"], "pinned": False, "expires": ""})
    assert "pinned" not in out["meta"] and "expires" not in out["meta"]
    hits = module_daemon.call("search", {"query": "rebase merges"})["hits"]
    assert any(h["path"] == r["path"] for h in hits)
    assert not module_daemon.call("search", {"query": "squash"})["hits"]


def test_a_stale_edit_is_refused_and_writes_nothing(daemon: DaemonProcess) -> None:
    r = daemon.call("remember", {"text": "The cat is called Miso"})
    notes = daemon.memory / "_core" / "notes.md"
    notes.write_text(notes.read_text().replace("called Miso", "called Tofu"))
    before = notes.read_bytes()
    with pytest.raises(EditConflict, match="now reads 'The cat is called Tofu'"):
        daemon.call(
            "edit_item",
            {"id": r["id"], "expect_text": "The cat is called Miso", "text": "The cat is Miso"},
        )
    assert notes.read_bytes() == before


def test_moving_to_another_file_and_within_a_file(module_daemon: DaemonProcess) -> None:
    r = module_daemon.call("remember", {"text": "Vue components stay small"})
    out = module_daemon.call(
        "edit_item", {"id": r["id"], "move_to": {"path": "topics/vue.md", "section": "Components"}}
    )
    vue = module_daemon.memory / "topics" / "vue.md"
    assert out["moved_from"] == r["path"] and out["path"] == str(vue) and out["id"] == r["id"]
    assert r["id"] not in (module_daemon.memory / "_core" / "notes.md").read_text()
    assert "## Components\n- Vue components stay small <!-- memd id=" in vue.read_text()
    assert {
        h["path"] for h in module_daemon.call("search", {"query": "components small"})["hits"]
    } == {str(vue)}
    out = module_daemon.call(
        "edit_item", {"id": r["id"], "move_to": {"path": "topics/vue.md", "section": "Style"}}
    )
    body = vue.read_text()
    assert out["moved_from"] == "" and body.count(r["id"]) == 1
    assert body.index("## Style") < body.index("Vue components stay small")


def test_a_hand_written_item_gets_an_id_when_it_gets_metadata(module_daemon: DaemonProcess) -> None:
    topic = module_daemon.memory / "topics" / "garden.md"
    topic.write_text("# Garden\n\n## Plants\n- tomatoes need sun\n")
    wait_for(lambda: module_daemon.search_paths("tomatoes"), 5)
    (item,) = [
        i for i in module_daemon.call("memories")["items"] if i["text"] == "tomatoes need sun"
    ]
    assert item["id"].startswith("h_")
    out = module_daemon.call("edit_item", {"id": item["id"], "importance": 8})
    assert out["id"].startswith("m_") and out["meta"]["imp"] == "8"
    assert topic.read_text() == (
        f"# Garden\n\n## Plants\n- tomatoes need sun <!-- memd id={out['id']} imp=8 -->\n"
    )


def test_bad_calls_are_refused_and_write_nothing(module_daemon: DaemonProcess) -> None:
    r = module_daemon.call("remember", {"text": "Lunch is at noon"})
    notes = module_daemon.memory / "_core" / "notes.md"
    before = notes.read_bytes()
    for params, error in (
        ({}, InvalidParams),  # how the memory page asks whether the method exists
        ({"text": "x"}, InvalidParams),
        ({"id": r["id"]}, InvalidParams),  # nothing to change
        ({"id": r["id"], "text": " \u0000 "}, InvalidParams),
        ({"id": r["id"], "importance": 11}, InvalidParams),
        ({"id": r["id"], "expires": "next week"}, InvalidParams),
        ({"id": r["id"], "move_to": {"path": "../outside.md"}}, InvalidParams),
        ({"id": r["id"], "move_to": {"path": "/etc/passwd.md"}}, InvalidParams),
        ({"id": r["id"], "move_to": {"path": "topics/notes.txt"}}, InvalidParams),
        ({"id": "m_00000000", "text": "x"}, NotFound),
    ):
        with pytest.raises((error, RemoteError)) as info:
            module_daemon.call("edit_item", params)
        assert isinstance(info.value, error), (params, info.value)
    assert notes.read_bytes() == before
    assert not (module_daemon.memory.parent / "outside.md").exists()
