"""What the history shows of a hand edit, and what an undo that cannot be done says.

A hand edit is in the history seconds after the editor goes quiet (not a minute later); an undo
refused because a later edit touched memd's lines names that edit's change; an undo of a
change that was already undone says by which undo; undone changes are marked in `history`,
`memd history` and on the page. Refusals are one short line (the page shows them as a banner).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.core.errors import UndoConflict
from tests.ui.uihelp import UiProcess
from tests.utils import DaemonProcess, wait_for


@pytest.fixture
def ui(home: Path) -> Iterator[UiProcess]:
    u = UiProcess(home).start()
    yield u
    u.stop()


def _changes(d: DaemonProcess) -> list[dict[str, Any]]:
    return list(d.call("history", {"limit": 100})["changes"])


def _remembered(d: DaemonProcess, text: str) -> tuple[str, str]:
    r = d.call("remember", {"text": text})
    change = next(c["id"] for c in _changes(d) if r["id"] in c["detail"])
    return r["id"], change


def test_a_hand_edit_is_in_the_history_seconds_after_the_save(daemon: DaemonProcess) -> None:
    topic = daemon.memory / "topics" / "birds.md"
    t0 = time.monotonic()
    topic.write_text("# Birds\n\n## Seen\n\n- a heron by the canal\n")
    hand = wait_for(
        lambda: [c for c in _changes(daemon) if c["cause"] == "hand"
                 and {"path": "topics/birds.md", "status": "A"} in c["files"]],
        timeout=20,
    )  # fmt: skip
    assert time.monotonic() - t0 < 10, "a hand edit waited for the minute it took before"
    assert hand[0]["author"] != "memd"


def test_an_undo_refused_names_the_edit_it_meets(daemon: DaemonProcess) -> None:
    d = daemon
    notes = d.memory / "_core" / "notes.md"
    _, change = _remembered(d, "The printer is on floor 3")
    notes.write_text(notes.read_text().replace("floor 3", "mezzanine"))  # right away, by hand
    wait_for(lambda: d.search_paths("mezzanine"), 10)
    before = notes.read_bytes()
    with pytest.raises(UndoConflict) as err:
        d.call("undo", {"change": change})
    msg = str(err.value)
    hand = next(c for c in _changes(d) if c["cause"] == "hand")
    assert hand["id"] in msg and "hand edit" in msg, msg
    assert msg.startswith(f"cannot undo {change}: _core/notes.md") and "\n" not in msg
    assert len(msg) < 200, msg
    assert notes.read_bytes() == before


def test_undo_of_an_undone_change_says_which_undo_and_undone_changes_are_marked(
    daemon: DaemonProcess, ui: UiProcess
) -> None:
    d = daemon
    _, change = _remembered(d, "The office plant is a fern")
    undo = d.call("undo", {"change": change})
    undo_id = next(c["id"] for c in _changes(d) if c["cause"] == "undo")
    assert undo["written"] == ["_core/notes.md"]
    with pytest.raises(UndoConflict) as err:
        d.call("undo", {"change": change})
    assert str(err.value) == f"{change} is already undone by {undo_id}"
    assert err.value.hint == f"undo {undo_id} to bring it back"
    marked = {c["id"]: c.get("undone_by", "") for c in _changes(d)}
    assert marked[change] == undo_id and marked[undo_id] == ""
    assert d.call("show_change", {"change": change})["change"]["undone_by"] == undo_id
    out = d.cli("history")
    assert f"[undone by {undo_id}]" in out.stdout, out.stdout
    # The page marks it and offers no undo button for it.
    cookie = ui.sign_in()
    _, _, page = ui.request("GET", "/history", headers={"Cookie": cookie})
    assert f'data-undone-by="{undo_id}"' in page
    row = page[page.index(f'id="change-{change}"') :].split("</li>\n  <li", 1)[0]
    assert 'name="change"' not in row
    # Undoing the undo brings the change back: no longer marked, and it can be undone again.
    d.call("undo", {"change": undo_id})
    assert {c["id"]: c.get("undone_by", "") for c in _changes(d)}[change] == ""
    assert d.call("undo", {"change": change})["written"] == ["_core/notes.md"]
