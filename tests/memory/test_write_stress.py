"""Everything at once on the write path, for about a minute, with the daemon killed: nothing a
person wrote and nothing memd acknowledged is lost, and the history stays exact.

A real daemon; over `MEMD_STRESS_MIX_S` seconds (default 60):

- `remember` every 30 ms, into `_core/notes.md` and `_core/preferences.md` in turn;
- an editor saving `notes.md` in place (truncate, a pause of up to 0.3 s, write, a line of its
  own added each time);
- an editor saving `preferences.md` by rename (a new file renamed over the old one, a line of
  its own added each time; like an editor that warns when the file changed on disk, it saves
  only the version it read);
- `undo` of one of memd's remembers about every second;
- the daemon killed with SIGKILL every ~12 s and started again at once.

The run goes on past those seconds until it has done enough to prove anything (`MIN_ACKED`
acknowledged remembers, `MIN_KILLS` kills, `MIN_SAVES` saves by each editor), for at most three
times as long: on a machine loaded by others each write takes longer (at load ~10, 187
acknowledged remembers in 60 s).

Then (after a clean stop, which commits what waits): every hand line is in its file, every
acknowledged remember not undone is in its file exactly once and whole, every acknowledged
remember has one change of its own adding exactly its line, every undo removes exactly the
lines of what it undid, and no hand change adds a line of an acknowledged remember.
"""

from __future__ import annotations

import difflib
import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memd.core.errors import MemdError, UndoConflict
from memd.history import History
from memd.history.git import BRANCH
from memd.history.models import Change
from tests.utils import DaemonProcess, wait_for

# The run, a clean restart and reading every change back: well within this on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SECONDS = float(os.environ.get("MEMD_STRESS_MIX_S", "60"))
KILL_EVERY_S = 12.0
MIN_ACKED, MIN_KILLS, MIN_SAVES = 200, 2, 20  # what a run must have done to prove anything
LONGEST_S = 3 * SECONDS  # how long it may go on while it has not
ITEM = re.compile(r"^- (.+?) <!-- memd id=(m_[0-9a-f]+)[^>]*-->$")


@dataclass
class Run:
    """What the threads did, and what the daemon acknowledged."""

    d: DaemonProcess
    stop: threading.Event = field(default_factory=threading.Event)
    acked: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (text, file)
    undone: set[str] = field(default_factory=set)  # remembers an undo took back (or may have)
    hand: dict[str, list[str]] = field(default_factory=dict)  # file -> lines saved by hand
    kills: int = 0
    saves: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, method: str, params: dict[str, Any]) -> Any:
        return self.d.call(method, params)


def _remembers(run: Run) -> None:
    n = 0
    while not run.stop.is_set():
        n += 1
        kind = "preference" if n % 2 else ""
        text = f"stress fact {n:05d}"
        try:
            r = run.call("remember", {"text": text, "type": kind})
        except (MemdError, OSError):
            pass  # the daemon is down or was killed mid-call: not acknowledged
        else:
            with run.lock:
                run.acked[r["id"]] = (text, Path(r["path"]).name)
        time.sleep(0.03)


def _in_place(run: Run, path: Path) -> None:
    rng = random.Random(1)
    n = 0
    while not run.stop.wait(rng.uniform(0.2, 0.5)):
        n += 1
        line = f"- in place by hand {n:04d}"
        with open(path, "r+b") as fh:
            data = fh.read()
            fh.seek(0)
            fh.truncate(0)
            time.sleep(rng.uniform(0, 0.3))
            fh.write(data + (b"" if data.endswith(b"\n") else b"\n") + line.encode() + b"\n")
        with run.lock:
            run.hand.setdefault(path.name, []).append(line)
            run.saves[path.name] = n


def _by_rename(run: Run, path: Path) -> None:
    rng = random.Random(2)
    n = 0
    while not run.stop.wait(rng.uniform(0.2, 0.5)):
        n += 1
        line = f"- renamed in by hand {n:04d}"
        while True:
            st = os.stat(path)
            data = path.read_bytes()
            tmp = path.with_name(f"{path.name}.{n}.tmp")
            tmp.write_bytes(data + (b"" if data.endswith(b"\n") else b"\n") + line.encode() + b"\n")
            now = os.stat(path)
            if (now.st_ino, now.st_size, now.st_mtime_ns) == (
                st.st_ino,
                st.st_size,
                st.st_mtime_ns,
            ):
                os.replace(tmp, path)
                break
            tmp.unlink()  # changed on disk since it was read: read it again
        with run.lock:
            run.hand.setdefault(path.name, []).append(line)
            run.saves[path.name] = n


def _undos(run: Run) -> None:
    rng = random.Random(3)
    while not run.stop.wait(1.0):
        with run.lock:
            candidates = [i for i in run.acked if i not in run.undone]
        if not candidates:
            continue
        item = rng.choice(candidates[-40:])
        try:
            changes = run.call("history", {"limit": 300})["changes"]
        except (MemdError, OSError):
            continue
        change = next(
            (c["id"] for c in changes if c["cause"] == "remember" and f"id={item} " in c["detail"]),
            None,
        )
        if change is None:
            continue
        try:
            run.call("undo", {"change": change})
        except UndoConflict:
            continue  # a later edit touched its line: refused, nothing written
        except (MemdError, OSError):
            pass  # the daemon was killed during the undo: it may have happened
        with run.lock:
            run.undone.add(item)


def _killer(run: Run) -> None:
    while not run.stop.wait(KILL_EVERY_S):
        run.d.send_signal(signal.SIGKILL)
        assert run.d.proc is not None
        run.d.proc.wait(10)
        run.kills += 1
        run.d.start(timeout=60)


def _diff(h: History, change: str) -> tuple[list[str], list[str]]:
    return _lines([line for fd in h.show(change).diffs for line in fd.diff.split("\n")])


def _lines(diff: list[str]) -> tuple[list[str], list[str]]:
    """The lines a diff adds and removes (not blank ones)."""
    added, removed = [], []
    for line in diff:
        if line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
        elif line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
    return [a for a in added if a.strip()], [r for r in removed if r.strip()]


def test_remembers_editors_undos_and_kills_together_lose_nothing(
    home: Path, tmp_path: Path
) -> None:
    d = DaemonProcess(home).start()
    notes = d.memory / "_core" / "notes.md"
    prefs = d.memory / "_core" / "preferences.md"
    notes.write_text("# Notes\n\n## Notes\n\n- a line written by hand\n")
    prefs.write_text("# User Preferences\n\n## Remembered\n\n- tabs over spaces, by hand\n")
    wait_for(lambda: d.search_paths('"tabs over spaces"') and d.search_paths('"line written"'), 10)
    run = Run(d, hand={"notes.md": ["- a line written by hand"],
                       "preferences.md": ["- tabs over spaces, by hand"]})  # fmt: skip
    threads = [
        threading.Thread(target=_remembers, args=(run,)),
        threading.Thread(target=_in_place, args=(run, notes)),
        threading.Thread(target=_by_rename, args=(run, prefs)),
        threading.Thread(target=_undos, args=(run,)),
        threading.Thread(target=_killer, args=(run,)),
    ]
    for t in threads:
        t.start()
    _until_enough(run)
    run.stop.set()
    for t in threads:
        t.join(90)
    try:
        assert _enough(run), (run.kills, len(run.acked), run.saves)
        files = {"notes.md": notes, "preferences.md": prefs}
        # The guard applies memd's changes again after an editor's save: wait for it to settle.
        end = time.monotonic() + 30
        while _lost(run, files) and time.monotonic() < end:
            time.sleep(0.2)
        lost = _lost(run, files)
        assert lost == [], (lost, _story(History(d.memory, home / "data" / "history.git"), lost))
        d.stop()  # a clean stop commits what waits; a start commits what a kill left
        d.start()
        d.stop()
        _check_history(run, History(d.memory, home / "data" / "history.git"))
    except AssertionError:
        # The home goes with the test; its tmp_path stays when it fails: what to read it by.
        for name in ("memory", "data/history.git"):
            if (home / name).exists():
                shutil.copytree(home / name, tmp_path / name, symlinks=True)
        shutil.copy(d.log, tmp_path / "daemon.log")
        (tmp_path / "run.txt").write_text(f"acked {run.acked}\nundone {run.undone}\n")
        raise
    finally:
        if d.proc and d.proc.poll() is None:
            d.stop()


def _enough(run: Run) -> bool:
    with run.lock:
        saves = [run.saves.get(name, 0) for name in ("notes.md", "preferences.md")]
        return run.kills >= MIN_KILLS and len(run.acked) >= MIN_ACKED and min(saves) >= MIN_SAVES


def _until_enough(run: Run) -> None:
    """`SECONDS`, then on until the run has done enough, or `LONGEST_S` in all."""
    start = time.monotonic()
    time.sleep(SECONDS)
    while not _enough(run) and time.monotonic() - start < LONGEST_S:
        time.sleep(0.5)


def _lost(run: Run, files: dict[str, Path]) -> list[str]:
    """Hand lines and acknowledged remembers (not undone) missing; items twice or torn."""
    problems = []
    texts = {name: p.read_text() for name, p in files.items()}
    for name, lines in run.hand.items():
        have = set(texts[name].split("\n"))
        problems += [f"hand line lost from {name}: {x}" for x in lines if x not in have]
    found: dict[str, list[str]] = {}
    for name, text in texts.items():
        for line in text.split("\n"):
            m = ITEM.match(line)
            if m:
                found.setdefault(m.group(2), []).append(m.group(1))
            elif "<!-- memd" in line or (line and not line.startswith(("#", "- "))):
                problems.append(f"a torn line in {name}: {line!r}")
    for item, (text, _name) in run.acked.items():
        if item in run.undone:
            continue
        if found.get(item) != [text]:
            problems.append(f"acknowledged remember {item} ({text}): {found.get(item)}")
    return problems


def _story(h: History, lost: list[str]) -> list[str]:
    """For a failure's message: each change the history holds of the first lost items' lines
    (the watcher's hand changes and memd's own), oldest first."""
    ids = [m.group(0) for p in lost[:3] if (m := re.search(r"m_[0-9a-f]{8}", p))]
    out = []
    for c in reversed(h.log(limit=0)):
        added, removed = _diff(h, c.id)
        for item in ids:
            mine = [f"+{a}" for a in added if item in a] + [f"-{r}" for r in removed if item in r]
            if mine:
                out.append(f"{c.id} {c.cause} ({c.detail[:60]}): {mine}")
    return out


def _check_history(run: Run, h: History) -> None:
    """Every acknowledged remember has one change adding exactly its line; every undo removes
    memd's lines only; no hand change adds a line of an acknowledged remember."""
    changes = h.log(limit=0)
    diffs = _all_diffs(h.git_dir, changes)
    _same_as_shown(h, changes, diffs)
    own: dict[str, list[str]] = {}
    for c in changes:
        if c.cause == "remember" and c.detail.startswith("id="):
            own.setdefault(c.detail.split()[0][3:], []).append(c.id)
    problems = [_own_change(diffs, item, text, own.get(item, []))
                for item, (text, _) in run.acked.items()]  # fmt: skip
    for c in changes:
        if c.cause not in ("undo", "hand"):
            continue
        added, removed = diffs[c.id]
        if c.cause == "undo" and (added or any("<!-- memd id=" not in r for r in removed)):
            problems.append(f"undo {c.id} ({c.detail[:60]}) holds other lines: +{added} -{removed}")
        acked = [a for a in added if (m := ITEM.match(a)) and m.group(2) in run.acked]
        if c.cause == "hand" and acked:
            problems.append(f"hand change {c.id} ({c.detail}) adds memd's lines: {acked[:2]}")
    problems = [p for p in problems if p]
    assert problems == [], problems[:12]


def _own_change(diffs: dict[str, Lines], item: str, text: str, mine: list[str]) -> str:
    if len(mine) != 1:
        return f"{item} has {len(mine)} changes of its own"
    added, removed = diffs[mine[0]]
    if removed or len(added) != 1 or not added[0].startswith(f"- {text} <!-- memd id={item} "):
        return f"{item}'s change holds more than its line: +{added} -{removed}"
    return ""


# -- every change's lines, read at once ------------------------------------------------------
# `History.show` finds a change by searching the whole history (and its undos) each time: over
# the ~2,000 changes of a run, reading them one by one took ~80 ms of CPU each (most of this
# test's CPU, on a machine where the suite's CPU is what its run waits for). The same diffs,
# made the same way (the files' versions before and after, through difflib as `show` does),
# from one `git log` and one `git cat-file` over the history; a sample is checked against
# `show` itself.
Lines = tuple[list[str], list[str]]
_ABSENT = "0" * 40
_SHOWN_SAMPLE = 25


def _git(git_dir: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], input=input, capture_output=True, check=True
    ).stdout


def _all_diffs(git_dir: Path, changes: list[Change]) -> dict[str, Lines]:
    """Each change's added and removed lines (as `_diff` reads them from `show`)."""
    raw = _git(git_dir, "log", "--first-parent", "--diff-merges=first-parent", "--root",
               "--no-renames", "--raw", "--no-abbrev", "-z", "--format=%x1e%H", BRANCH)  # fmt: skip
    files: dict[str, list[tuple[str, str, str]]] = {}  # commit -> (path, before, after)
    for chunk in raw.decode("utf-8", "surrogateescape").split("\x1e")[1:]:
        commit, _, rest = chunk.partition("\0")
        fields = rest.lstrip("\n").split("\0")
        files[commit] = [(path, meta.split()[2], meta.split()[3])
                         for meta, path in zip(fields[0::2], fields[1::2], strict=False)
                         if meta.startswith(":")]  # fmt: skip
    blobs = _blobs(git_dir, {b for fs in files.values() for _, *ab in fs for b in ab} - {_ABSENT})
    out: dict[str, Lines] = {}
    for c in changes:
        text = []
        for path, before, after in files[c.commit]:
            a, b = blobs.get(before), blobs.get(after)
            if b"\x00" in (a or b"") or b"\x00" in (b or b""):
                continue  # `show` gives a binary file no diff
            lines = difflib.unified_diff(
                _decode(a).splitlines(keepends=True), _decode(b).splitlines(keepends=True),
                fromfile="/dev/null" if a is None else f"a/{path}",
                tofile="/dev/null" if b is None else f"b/{path}",
            )  # fmt: skip
            text += [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n"
                     for ln in lines]  # fmt: skip
        out[c.id] = _lines("".join(text).split("\n"))
    return out


def _decode(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "surrogateescape")


def _blobs(git_dir: Path, shas: set[str]) -> dict[str, bytes]:
    order = sorted(shas)
    raw = _git(git_dir, "cat-file", "--batch", input="".join(f"{s}\n" for s in order).encode())
    out, at = {}, 0
    for sha in order:
        header_end = raw.index(b"\n", at)
        size = int(raw[at:header_end].split()[2])
        out[sha] = raw[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
    return out


def _same_as_shown(h: History, changes: list[Change], diffs: dict[str, Lines]) -> None:
    """The lines read at once are those `show` gives, on a sample spread over the history."""
    step = max(1, len(changes) // _SHOWN_SAMPLE)
    for c in changes[::step]:
        assert diffs[c.id] == _diff(h, c.id), c
