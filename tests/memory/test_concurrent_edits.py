"""memd's writes and a person's editor on the same file at the same time: nothing is lost.

A real daemon, real files and the real socket. An "editor" thread saves a memory file the way
editors do while memd writes the same file through the socket:

- in place, unchanged (read, then truncate and write it back in two chunks, as a slow save);
- by rename with a hand edit added each time (write a temp file, rename it over the file);
- from a buffer read once at the start, with one hand edit added at each save (an editor that
  never reloads).

Afterwards every hand-written line and every acknowledged memd write must be in the file.
`MEMD_STRESS_S` sets how long each run lasts (default 10 s); memd keeps writing past it until
it has made `MIN_ACKED` acknowledged writes (a loaded machine makes each write slower: on a
shared machine at load 8-13 fewer than 50 fitted in 10 s), for at most six times as long.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.utils import DaemonProcess, wait_for

# Each test runs for MEMD_STRESS_S seconds or more: their own step (scripts/test).
pytestmark = pytest.mark.slow

SECONDS = float(os.environ.get("MEMD_STRESS_S", "10"))
MIN_ACKED = 50  # acknowledged remembers a run needs to prove anything
LONGEST_S = 6 * SECONDS  # how long the writes may go on while fewer have been acknowledged
HAND_ITEMS = 200
SETTLE_S = 20.0  # how long memd may take to repair after the editor stops (polled, not timed)


def hand_lines(n: int = HAND_ITEMS) -> list[str]:
    return [f"- hand item {i:03d} written by a person" for i in range(n)]


def notes_text(extra: list[str] | None = None) -> str:
    return "# Notes\n\n## Notes\n\n" + "\n".join([*hand_lines(), *(extra or [])]) + "\n"


def write_in_place(path: Path, data: bytes) -> None:
    """Truncate and write, in two chunks with a pause: the file is empty, then half written."""
    with open(path, "wb") as fh:  # O_TRUNC
        half = len(data) // 2
        fh.write(data[:half])
        fh.flush()
        time.sleep(0.002)
        fh.write(data[half:])


def write_by_rename(path: Path, data: bytes, n: int) -> None:
    tmp = path.with_name(f"{path.name}.{n}.tmp")  # an editor's temp name (never indexed)
    tmp.write_bytes(data)
    os.replace(tmp, path)


@dataclass
class Editor:
    """A thread saving `path` every `period` seconds in one of three ways."""

    path: Path
    mode: str  # "in_place" | "rename" | "buffer"
    period: float
    hand_edits: list[str] = field(default_factory=list)
    saves: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Editor:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(10)

    def _run(self) -> None:
        buffer = self.path.read_bytes()
        n = 0
        while not self._stop.wait(self.period):
            n += 1
            edit = f"- hand edit {n:04d} made in the editor\n".encode()
            if self.mode == "in_place":
                write_in_place(self.path, self.path.read_bytes())
            elif self.mode == "rename":
                data = self.path.read_bytes()
                data = data if data.endswith(b"\n") else data + b"\n"
                write_by_rename(self.path, data + edit, n)
                self.hand_edits.append(edit.decode().strip())
            else:
                buffer += edit
                write_in_place(self.path, buffer)
                self.hand_edits.append(edit.decode().strip())
            self.saves += 1


@dataclass
class Writes:
    """What memd acknowledged over the socket."""

    acked: dict[str, str] = field(default_factory=dict)  # id -> text
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0  # how long the writes went on


def remember_loop(d: DaemonProcess, seconds: float, every: float = 0.01) -> Writes:
    """Remember one fact after another for `seconds`, then on until `MIN_ACKED` writes have
    been acknowledged or `LONGEST_S` has passed: the run is as long as before on an idle
    machine, and the writes it asserts on do not depend on the machine's load."""
    out = Writes()
    start = time.monotonic()
    i = 0
    while (elapsed := time.monotonic() - start) < seconds or (
        len(out.acked) < MIN_ACKED and elapsed < LONGEST_S
    ):
        i += 1
        text = f"remembered fact number {i:05d}"
        try:
            r = d.call("remember", {"text": text})
        except Exception as exc:
            out.errors.append(f"{text}: {exc}")
        else:
            out.acked[r["id"]] = text
        time.sleep(every)
    out.seconds = time.monotonic() - start
    return out


def missing(path: Path, lines: list[str]) -> list[str]:
    try:
        have = set(path.read_text(encoding="utf-8").split("\n"))
    except FileNotFoundError:
        return list(lines)
    return [x for x in lines if x not in have]


def missing_items(path: Path, acked: dict[str, str]) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return sorted(acked)
    found = dict(re.findall(r"^- (.+?) <!-- memd id=(m_[0-9a-f]+)", text, re.M))
    by_id = {v: k for k, v in found.items()}
    return [i for i, t in acked.items() if by_id.get(i) != t]


def settled(**checks: Callable[[], list[str]]) -> None:
    """Wait until no check finds anything missing; fail naming everything still missing."""
    last: dict[str, list[str]] = {}

    def ok() -> bool:
        last.update({what: check() for what, check in checks.items()})
        return not any(last.values())

    try:
        wait_for(ok, SETTLE_S, 0.1)
    except AssertionError:
        lost = "; ".join(f"{len(v)} {k.replace('_', ' ')} lost (e.g. {v[:2]})"
                         for k, v in last.items() if v)  # fmt: skip
        raise AssertionError(lost) from None


@pytest.fixture(autouse=True)
def _kept_on_failure(
    request: pytest.FixtureRequest, daemon: DaemonProcess, tmp_path: Path
) -> Iterator[None]:
    """A failed test's daemon home goes with it; its tmp_path stays: the daemon's home (its
    memory tree, history and log) is copied there to read the failure by (they happened only
    under load)."""
    yield
    report = getattr(request.node, "report_call", None)  # tests/memory/conftest.py
    if report is not None and report.failed:
        shutil.copytree(
            daemon.home,
            tmp_path / "daemon",
            symlinks=True,
            ignore_dangling_symlinks=True,
            ignore=shutil.ignore_patterns("*.sock"),
        )


@pytest.fixture
def notes(daemon: DaemonProcess) -> Iterator[Path]:
    path = daemon.memory / "_core" / "notes.md"
    path.write_text(notes_text(), encoding="utf-8")
    wait_for(lambda: daemon.search_paths('"hand item 199"'), 10)
    yield path


def check_memd_and_hand(
    d: DaemonProcess, path: Path, editor: Editor, writes: Writes, min_acked: int = MIN_ACKED
) -> None:
    assert editor.saves >= 5, "the editor hardly saved: the run proves nothing"
    assert len(writes.acked) >= min_acked, (
        f"too few acknowledged writes in {writes.seconds:.0f} s: {writes.errors[:3]}"
    )
    settled(
        hand_written_items=lambda: missing(path, hand_lines()),
        hand_edits_made_in_the_editor=lambda: missing(path, editor.hand_edits),
        acknowledged_remembers=lambda: missing_items(path, writes.acked),
        # The index agrees with the file: every acknowledged item is listed (and can be forgotten).
        acknowledged_remembers_in_the_index=lambda: sorted(
            set(writes.acked) - {i["id"] for i in d.call("memories")["items"]}
        ),
    )
    assert writes.errors == []


def test_in_place_resaves_lose_nothing(daemon: DaemonProcess, notes: Path) -> None:
    editor = Editor(notes, "in_place", 0.5).start()
    try:
        writes = remember_loop(daemon, SECONDS)
    finally:
        editor.stop()
    check_memd_and_hand(daemon, notes, editor, writes)


def test_rename_saves_with_hand_edits_lose_nothing(daemon: DaemonProcess, notes: Path) -> None:
    editor = Editor(notes, "rename", 0.1).start()
    try:
        writes = remember_loop(daemon, SECONDS)
    finally:
        editor.stop()
    check_memd_and_hand(daemon, notes, editor, writes)


def test_an_editor_writing_back_an_old_buffer_loses_nothing(
    daemon: DaemonProcess, notes: Path
) -> None:
    editor = Editor(notes, "buffer", 0.5).start()
    try:
        writes = remember_loop(daemon, SECONDS)
    finally:
        editor.stop()
    check_memd_and_hand(daemon, notes, editor, writes)


def test_forget_under_in_place_saves(daemon: DaemonProcess, notes: Path) -> None:
    ids = [daemon.call("remember", {"text": f"to forget later {i:03d}"})["id"] for i in range(60)]
    kept = [daemon.call("remember", {"text": f"to keep {i:03d}"})["id"] for i in range(20)]
    editor = Editor(notes, "in_place", 0.1).start()
    errors = []
    try:
        for i in ids:
            try:
                res = daemon.call("forget", {"id": i})
            except Exception as exc:
                errors.append(f"{i}: {exc}")
            else:
                if [r["id"] for r in res["removed"]] != [i]:  # acknowledged, nothing removed
                    errors.append(f"{i}: removed {res['removed']}")
            time.sleep(SECONDS / len(ids) / 2)
    finally:
        editor.stop()
    settled(
        hand_written_items=lambda: missing(notes, hand_lines()),
        forgets_items_came_back=lambda: [i for i in ids if i in notes.read_text()],
        kept_memd_items=lambda: [i for i in kept if i not in notes.read_text()],
        # Named beside what came back: an item whose forget failed was never removed.
        forgets_that_failed=lambda: list(errors),
    )


def test_extraction_under_in_place_saves(daemon: DaemonProcess) -> None:
    prefs = daemon.memory / "_core" / "preferences.md"
    body = "\n".join(hand_lines())
    prefs.write_text(f"# User Preferences\n\n## Technical Preferences\n\n{body}\n", "utf-8")
    wait_for(lambda: daemon.search_paths('"hand item 199"'), 10)
    tools = ["vitest", "pnpm", "neovim", "tmux", "ruff", "mypy", "poetry", "podman", "zsh",
             "kotlin", "svelte", "deno", "esbuild", "pytest", "helix", "nushell", "zig", "elixir"]  # fmt: skip
    for n, tool in enumerate(tools):
        daemon.call("ingest", {"session_id": f"s{n}", "id": f"t{n}", "role": "user",
                               "content": f"I prefer {tool} for my work."})  # fmt: skip
    editor = Editor(prefs, "in_place", 0.1).start()
    try:
        res = daemon.call("run_job", {"name": "extract"})
        time.sleep(0.5)
    finally:
        editor.stop()
    assert res["counts"].get("added") == len(tools), res
    settled(
        hand_written_items=lambda: missing(prefs, hand_lines()),
        extracted_memories=lambda: [
            t for t in tools if f"User prefers {t} for their work" not in prefs.read_text()
        ],
    )


def test_archival_under_saves_of_an_old_buffer(daemon: DaemonProcess, notes: Path) -> None:
    expired = [f"- expired note {i:02d} <!-- memd id=m_e{i:07d} imp=3 expires=2000-01-01 -->"
               for i in range(20)]  # fmt: skip
    notes.write_text(notes_text(expired), encoding="utf-8")
    wait_for(lambda: daemon.search_paths('"expired note 19"'), 10)
    # The editor loaded the file before archival and keeps saving its buffer (plus hand edits).
    editor = Editor(notes, "buffer", 0.1).start()
    try:
        res = daemon.call("run_job", {"name": "archive"})
        time.sleep(0.5)
    finally:
        editor.stop()
    assert res["counts"].get("items") == len(expired), json.dumps(res)
    archived = daemon.memory / "archive" / "_core" / "notes.md"
    settled(
        hand_written_items=lambda: missing(notes, hand_lines()),
        hand_edits_made_in_the_editor=lambda: missing(notes, editor.hand_edits),
        archived_items_came_back=lambda: [e for e in expired if e in notes.read_text()],
        archived_items_not_in_the_archive=lambda: [
            f"m_e{i:07d}" for i in range(20) if f"m_e{i:07d}" not in archived.read_text()
        ],
    )
