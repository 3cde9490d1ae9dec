"""The history through the real daemon: each memd write is one change with its cause, hand
edits are recorded, and `undo` over the socket reverses a remember, a forget, a page edit and
a whole extraction run, refusing when later edits touch the same lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memd.api.client import RemoteError
from memd.core.errors import MemdError, UndoConflict
from tests import planted
from tests.utils import DaemonProcess, wait_for


def changes(d: DaemonProcess, **params: Any) -> list[dict[str, Any]]:
    return list(d.call("history", params)["changes"])


def newest(d: DaemonProcess, cause: str) -> dict[str, Any]:
    found = [c for c in changes(d, limit=200) if c["cause"] == cause]
    assert found, f"no {cause} change in {[c['cause'] for c in changes(d)]}"
    return found[0]


def say(d: DaemonProcess, session: str, turn: str, text: str) -> None:
    d.call("ingest", {"session_id": session, "id": turn, "role": "user", "content": text})


def test_each_kind_of_write_is_one_change_with_its_cause(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    d = daemon
    assert [c["cause"] for c in changes(d)] == ["baseline"]
    r = d.call("remember", {"text": "The staging host is kestrel"})
    c = newest(d, "remember")
    assert r["id"] in c["detail"] and c["files"] == [{"path": "_core/notes.md", "status": "A"}]
    d.call("edit_item", {"id": r["id"], "text": "The staging host is osprey"})
    assert "osprey" in newest(d, "edit")["detail"]
    d.call("forget", {"id": r["id"]})
    assert r["id"] in newest(d, "forget")["detail"]
    say(d, "s1", "t1", "I use jest")
    ex = d.call("run_job", {"name": "extract"})
    run = str(ex["counts"]["run"])
    extract = newest(d, "extract")
    assert extract["run"] == run and extract["files"][0]["path"] == "_core/profile.md"
    say(d, "s2", "t1", "I switched to vitest")
    assert d.call("run_job", {"name": "extract"})["counts"]["superseded"] == 1
    sup = newest(d, "supersede")
    assert sup["run"] != run and sup["files"] == [{"path": "_core/profile.md", "status": "M"}]
    notes = d.memory / "_core" / "notes.md"
    hand = "".join(f"- kept note {i}\n" for i in range(5))
    notes.write_text(
        notes.read_text() + hand + "- old <!-- memd id=m_0000aaaa expires=2001-01-01 -->\n"
    )
    wait_for(lambda: d.search_paths("old"), 5)
    arch = d.call("run_job", {"name": "archive"})
    a = newest(d, "archive")
    assert a["run"] == str(arch["counts"]["run"])
    assert {f["path"] for f in a["files"]} >= {"_core/notes.md", "archive/_core/notes.md"}
    export = tmp_path / "export.json"
    kept = d.call("remember", {"text": "Exported before it was forgotten"})
    d.call("export", {"path": str(export), "tree": False})
    d.call("forget", {"id": kept["id"]})
    d.call("import", {"path": str(export)})
    assert newest(d, "import")["files"] == [{"path": "_core/notes.md", "status": "M"}]
    causes = [c["cause"] for c in changes(d, limit=200)]
    # Nothing was recorded twice: the watcher's sight of memd's own writes adds no hand edit;
    # the one hand edit is the test's own, recorded before the archival that read it.
    assert causes.count("hand") == 1, causes
    assert causes.index("hand") == causes.index("archive") + 1  # newest first
    twice = ("remember", "forget", "extract")  # two of each were made
    for cause in ("remember", "forget", "edit", "extract", "supersede", "archive", "import"):
        assert causes.count(cause) == (2 if cause in twice else 1), (cause, causes)
    assert d.call("status")["history"]["ok"] is True


def test_undo_of_a_remember_a_forget_and_a_page_edit(daemon: DaemonProcess) -> None:
    d = daemon
    notes = d.memory / "_core" / "notes.md"
    notes.write_text("# Notes\n\n## Notes\n\n- written by hand\n")
    wait_for(lambda: d.search_paths("hand"), 5)
    r = d.call("remember", {"text": "The office plant is a fern"})
    rem = newest(d, "remember")
    dry = d.call("undo", {"change": rem["id"], "dry_run": True})
    assert dry["written"] == [] and dry["files"][0]["rel"] == "_core/notes.md"
    assert "fern" in notes.read_text()
    out = d.call("undo", {"change": rem["id"]})
    assert out["written"] == ["_core/notes.md"] and "fern" not in notes.read_text()
    assert not d.search_paths("fern")
    undo = newest(d, "undo")
    assert undo["undoes"] == rem["id"]
    d.call("undo", {"change": undo["id"]})  # an undo is a change like any other
    assert "fern" in notes.read_text()
    d.call("forget", {"id": r["id"]})
    d.call("undo", {"change": newest(d, "forget")["id"]})
    assert f"The office plant is a fern <!-- memd id={r['id']}" in notes.read_text()
    assert d.search_paths("fern") == {str(notes)}
    d.call("edit_item", {"id": r["id"], "text": "The office plant is a cactus"})
    d.call("undo", {"change": newest(d, "edit")["id"]})
    assert "fern" in notes.read_text() and "cactus" not in notes.read_text()
    diff = d.call("show_change", {"change": newest(d, "edit")["id"]})
    assert diff["change"]["cause"] == "edit"
    (fd,) = diff["diffs"]
    assert "-- The office plant is a fern" in fd["diff"]
    assert "+- The office plant is a cactus" in fd["diff"]


def test_undo_of_a_whole_extraction_run(daemon: DaemonProcess) -> None:
    d = daemon
    say(d, "s1", "t1", "I use jest")
    d.call("run_job", {"name": "extract"})
    profile = d.memory / "_core" / "profile.md"
    before = profile.read_text()
    say(d, "s2", "t1", "I switched to vitest. I prefer tabs over spaces.")
    res = d.call("run_job", {"name": "extract"})
    assert res["counts"]["superseded"] == 1 and res["counts"]["added"] >= 2
    prefs = d.memory / "_core" / "preferences.md"
    assert "tabs" in prefs.read_text() and "superseded=" in profile.read_text()
    out = d.call("undo", {"run": str(res["counts"]["run"])})
    assert {c["cause"] for c in out["changes"]} == {"extract", "supersede"}
    assert profile.read_text() == before  # the new item gone, the old one no longer superseded
    assert "tabs" not in prefs.read_text()
    assert "Jest" in d.call("context", {})["text"]


def test_undo_is_refused_when_later_edits_touch_its_lines(daemon: DaemonProcess) -> None:
    d = daemon
    notes = d.memory / "_core" / "notes.md"
    d.call("remember", {"text": "The printer is on floor 3"})
    rem = newest(d, "remember")
    notes.write_text(notes.read_text().replace("floor 3", "floor 4"))  # by hand, afterwards
    wait_for(lambda: d.search_paths('"floor 4"'), 5)
    before = notes.read_bytes()
    with pytest.raises(UndoConflict, match="cannot undo"):
        d.call("undo", {"change": rem["id"]})
    assert notes.read_bytes() == before


def test_hand_edits_are_recorded(daemon: DaemonProcess) -> None:
    d = daemon
    topic = d.memory / "topics" / "birds.md"
    topic.write_text("# Birds\n\n## Seen\n- a heron by the canal\n")
    wait_for(lambda: d.search_paths("heron"), 5)
    d.stop()  # waiting hand edits are committed when the daemon stops (else after a minute)
    d.start()
    hand = newest(d, "hand")
    assert {"path": "topics/birds.md", "status": "A"} in hand["files"]
    assert [c["files"] for c in changes(d, path="topics/birds.md")] == [hand["files"]]


def test_the_cli_lists_shows_and_undoes(daemon: DaemonProcess) -> None:
    d = daemon
    (d.memory / "_core" / "notes.md").write_text("# Notes\n\n## Notes\n\n- by hand\n")
    wait_for(lambda: d.search_paths("hand"), 5)
    d.call("remember", {"text": "The boiler code is 4411"})
    out = d.cli("history", "_core/notes.md", "--json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)["changes"]
    change = listed[0]["id"]
    assert listed[0]["cause"] == "remember"
    text = d.cli("history").stdout
    assert change in text and "remember" in text
    shown = d.cli("show", change)
    assert shown.returncode == 0 and "+- The boiler code is 4411" in shown.stdout
    dry = d.cli("undo", change, "--dry-run")
    assert (
        dry.returncode == 0
        and "would" in dry.stdout
        and "4411" in (d.memory / "_core" / "notes.md").read_text()
    )
    done = d.cli("undo", change)
    assert done.returncode == 0, done.stderr
    assert "4411" not in (d.memory / "_core" / "notes.md").read_text()
    again = d.cli("undo", change)  # already undone: refused, naming the undo
    assert again.returncode != 0 and "is already undone by" in again.stderr


@pytest.mark.postgres
def test_a_sync_pull_is_one_change(tmp_path: Path, pg: Any) -> None:
    from tests.sync.conftest import cloud_rows
    from tests.sync.test_daemons import sync_env

    pg.start()
    dsn = pg.create_database(f"h_{tmp_path.name[-8:].replace('-', '_')}")
    env = sync_env(dsn)
    a = DaemonProcess(tmp_path / "a", env=env)
    assert a.cli("sync", "init-schema", env=env).returncode == 0
    a.start()
    b = DaemonProcess(tmp_path / "b", env=env)
    try:
        (a.memory / "topics" / "rust.md").write_text("# Rust\n\n- prefers nextest\n")
        wait_for(lambda: "topics/rust.md" in cloud_rows(dsn, "memd_files"), timeout=10)
        b.start()  # pulls on start
        wait_for(lambda: (b.memory / "topics" / "rust.md").exists(), timeout=10)
        (sync,) = wait_for(lambda: [c for c in changes(b) if c["cause"] == "sync"], 10)
        assert {"path": "topics/rust.md", "status": "A"} in sync["files"]
        assert [c["cause"] for c in changes(b, path="topics/rust.md")] == ["sync"]
    finally:
        b.stop()
        a.stop()


def test_no_commit_holds_a_hand_written_secret_or_private_text(home: Path) -> None:
    """The baseline, a hand edit the watcher sees, and memd's own edits and forgets of items
    holding secrets: no object of the repository, no message and no `show_change` answer
    holds them; the files keep them."""
    path = home / "memory" / planted.REL
    path.parent.mkdir(parents=True)
    path.write_text(planted.TEXT, encoding="utf-8")
    d = DaemonProcess(home).start()
    try:
        assert [c["cause"] for c in changes(d)] == ["baseline"]
        with open(path, "a", encoding="utf-8") as fh:  # a hand edit: one more secret, in a block
            fh.write(f"- keys rotate on thursdays\n<private>\n- {planted.THERAPIST}\n</private>\n")
        wait_for(lambda: d.search_paths("thursdays"), 10)
        items = d.call("memories", {"scope": "user", "limit": 0})["items"]
        key = next(i for i in items if "deploy key" in i["text"])
        edited = d.call("edit_item", {"id": key["id"], "importance": 9})
        d.call("forget", {"id": edited["id"]})
        aws = next(i for i in items if "aws access key" in i["text"])
        d.call("forget", {"id": aws["id"]})
        log = changes(d, limit=50)
        shown = [d.call("show_change", {"change": c["id"]}) for c in log]
        assert planted.leaked(json.dumps([log, shown])) == []
        assert "rollbacks are announced" in json.dumps(shown)
    finally:
        assert d.stop() == 0
    git = ["git", f"--git-dir={home / 'data' / 'history.git'}"]
    objects = subprocess.run([*git, "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout  # fmt: skip
    messages = subprocess.run([*git, "log", "--all", "--format=%B"], capture_output=True,
                              check=True).stdout  # fmt: skip
    assert planted.leaked(objects) == [] and planted.leaked(messages) == []
    assert planted.carried(objects) == list(planted.PUBLIC) and b"rotate on thursdays" in objects
    assert planted.THERAPIST in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("show_change", {"change": "\x00"}),
        ("show_change", {"change": "abcd\x00ef"}),
        ("undo", {"change": "\x00"}),
        ("undo", {"run": "12\x0034"}),
        ("history", {"path": "topics/\x00.md"}),
    ],
)
def test_a_nul_byte_in_an_id_or_path_is_a_clear_error(
    module_daemon: DaemonProcess, method: str, params: dict[str, Any]
) -> None:
    """Found by the protocol fuzz test: git cannot be given a NUL byte, and the answer was
    -32000 "internal error: embedded null byte"."""
    with pytest.raises(MemdError) as err:
        module_daemon.call(method, params)
    assert not isinstance(err.value, RemoteError) or err.value.code != -32000, err.value
    assert "internal error" not in str(err.value)
