"""memd's writes racing a person's saves, through a real daemon: nothing torn, each change of
the history holds exactly its own lines, and an undo takes back only memd's.

- An editor that truncates a file and pauses before writing it back (a slow in-place save)
  holds the file open for writing: a remember landing in the pause must not be appended into
  it (the editor's write would land over memd's bytes and fuse them to the person's lines).
- A hand line saved a moment after memd's write is the person's: memd's change in the
  history holds memd's line only, and undoing it leaves the hand line where it is.
- A remember that overlaps an in-place save is one change of its own, adding its line and
  nothing else; no hand change deletes or re-adds memd's lines.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.utils import DaemonProcess, wait_for

HEAD = "# Notes\n\n## Notes\n\n"
ITEM = re.compile(r"^- (.+?) <!-- memd id=(m_[0-9a-f]+)[^>]*-->$")


@pytest.fixture
def notes(daemon: DaemonProcess) -> Iterator[Path]:
    path = daemon.memory / "_core" / "notes.md"
    path.write_text(HEAD + "- a line written by hand\n", encoding="utf-8")
    wait_for(lambda: daemon.search_paths('"written by hand"'), 10)
    yield path


def _lines_ok(text: str, hand: set[str], acked: dict[str, str]) -> list[str]:
    """What is wrong with the file: a line that is neither a heading, a blank, a hand line nor
    one of memd's items whole; an item twice; a hand line or an acknowledged item missing."""
    problems = []
    seen: dict[str, int] = {}
    for line in text.split("\n"):
        m = ITEM.match(line)
        if m:
            seen[m.group(2)] = seen.get(m.group(2), 0) + 1
            if acked.get(m.group(2), m.group(1)) != m.group(1):
                problems.append(f"item {m.group(2)} reads {m.group(1)!r}")
        elif line and not line.startswith("#") and line not in hand:
            problems.append(f"a line neither memd's nor the person's: {line!r}")
    problems += [f"id {i} on {n} lines" for i, n in seen.items() if n > 1]
    problems += [f"hand line lost: {h!r}" for h in hand if h not in text.split("\n")]
    problems += [f"acknowledged item lost: {i}" for i in acked if i not in seen]
    return problems


def _settle(problems: Any, timeout: float = 10.0) -> None:
    """Wait (bounded) until `problems()` finds none; the caller asserts with the details."""
    end = time.monotonic() + timeout
    while problems() and time.monotonic() < end:
        time.sleep(0.1)


def _diff_lines(d: DaemonProcess, change: str) -> tuple[list[str], list[str]]:
    added, removed = [], []
    for fd in d.call("show_change", {"change": change})["diffs"]:
        for line in fd["diff"].split("\n"):
            if line.startswith("+") and not line.startswith("+++"):
                added.append(line[1:])
            elif line.startswith("-") and not line.startswith("---"):
                removed.append(line[1:])
    return added, removed


def _remember_in(d: DaemonProcess, text: str) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out.update(d.call("remember", {"text": text}))
        except Exception as exc:  # reported by the test
            out["error"] = repr(exc)

    t = threading.Thread(target=run)
    t.start()
    return t, out


# -- a slow in-place save ---------------------------------------------------------------------
@pytest.mark.parametrize("written_first", [0, 1])
def test_a_remember_in_the_pause_of_a_slow_in_place_save_tears_nothing(
    daemon: DaemonProcess, notes: Path, written_first: int
) -> None:
    hand = {"- a line written by hand"}
    acked: dict[str, str] = {}
    for n in range(3):
        current = notes.read_bytes()
        mine = f"- my own note {n}".encode()
        new = current + mine + b"\n"
        hand.add(mine.decode())
        with open(notes, "r+b") as fh:  # the editor holds the file open for writing ...
            fh.truncate(0)  # ... truncates it,
            fh.write(new[: len(new) // 2] if written_first else b"")  # maybe writes a part,
            fh.flush()
            t, out = _remember_in(daemon, f"remembered during save {n}")
            time.sleep(0.6)  # ... pauses (memd's remember arrives now) ...
            fh.write(new[len(new) // 2 :] if written_first else new)  # ... and writes the rest.
        t.join(30)
        assert "error" not in out, out
        acked[out["id"]] = f"remembered during save {n}"
        # Once settled (memd may have to apply its change again), nothing is torn.
        _settle(lambda: _lines_ok(notes.read_text(), hand, acked))
        assert _lines_ok(notes.read_text(), hand, acked) == [], notes.read_text()


# -- undo after a hand line saved just after memd's write ------------------------------------
def test_undo_of_a_remember_keeps_a_hand_line_saved_just_after_it(
    daemon: DaemonProcess, notes: Path
) -> None:
    d = daemon
    for n in range(5):
        fact, mine = f"remembered fact {n}", f"- my own note {n}"
        t, out = _remember_in(d, fact)
        end = time.monotonic() + 20
        while time.monotonic() < end:  # the editor saves as soon as memd's line is there
            data = notes.read_bytes()
            if fact.encode() in data:
                tmp = notes.with_name(f"notes.md.{n}.tmp")
                tmp.write_bytes(data + mine.encode() + b"\n")
                os.replace(tmp, notes)  # a rename save with the person's line
                break
        t.join(30)
        assert "error" not in out and fact in notes.read_text(), out
        change = next(
            c["id"]
            for c in d.call("history", {"limit": 50})["changes"]
            if c["cause"] == "remember" and out["id"] in c["detail"]
        )
        added, removed = _diff_lines(d, change)
        assert removed == [] and [x for x in added if x.strip()] == [
            f"- {fact} <!-- memd {x}" for x in _meta_of(notes, out["id"])
        ], (added, removed)
        d.call("undo", {"change": change})
        text = notes.read_text()
        assert fact not in text, text
        assert mine in text.split("\n"), f"undo removed the hand line {mine!r}:\n{text}"


def _meta_of(path: Path, item_id: str) -> list[str]:
    for line in path.read_text().split("\n"):
        if f"id={item_id}" in line:
            return [line.split("<!-- memd ", 1)[1]]
    raise AssertionError(f"{item_id} not in {path}")


# -- the history of remembers overlapping in-place saves --------------------------------------
@pytest.mark.parametrize("pause", [0.1, 0.6])
def test_a_remember_overlapping_an_in_place_save_is_one_change_of_its_own_lines(
    daemon: DaemonProcess, notes: Path, pause: float
) -> None:
    d = daemon
    stop = threading.Event()
    saves = 0

    def editor() -> None:
        nonlocal saves
        while not stop.is_set():
            with open(notes, "r+b") as fh:
                data = fh.read()
                fh.seek(0)
                fh.truncate(0)
                time.sleep(pause)
                fh.write(data)
            saves += 1
            time.sleep(0.05)

    ed = threading.Thread(target=editor)
    ed.start()
    acked: dict[str, str] = {}
    try:
        for n in range(12):
            text = f"remembered while saving {n}"
            acked[d.call("remember", {"text": text})["id"]] = text
            time.sleep(0.1)
    finally:
        stop.set()
        ed.join(30)
    assert saves >= 3
    _settle(lambda: _lines_ok(notes.read_text(), {"- a line written by hand"}, acked))
    assert _lines_ok(notes.read_text(), {"- a line written by hand"}, acked) == []
    d.stop()  # hand edits waiting to be recorded are committed when the daemon stops
    d.start()
    changes = d.call("history", {"limit": 200})["changes"]
    for item_id, text in acked.items():
        mine = [c for c in changes if c["cause"] == "remember" and item_id in c["detail"]]
        assert len(mine) == 1, (item_id, [(c["cause"], c["detail"]) for c in changes])
        added, removed = _diff_lines(d, mine[0]["id"])
        assert removed == [] and [x for x in added if x.strip()] == [
            f"- {text} <!-- memd {x}" for x in _meta_of(notes, item_id)
        ], (text, added, removed)
    for c in changes:
        if c["cause"] == "hand":
            added, removed = _diff_lines(d, c["id"])
            assert not [x for x in added + removed if "<!-- memd id=" in x], (c, added, removed)
