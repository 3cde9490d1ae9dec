"""A person's editor and the daemon's refresh of memd's block, racing on one instructions file.

The editor is a process of its own (as a real one is: memd sees which programs hold a file open
for writing), saving again and again, each save adding a line of the person's above memd's
block; the keeper refreshes as fast as it can with a block that changes every time (no quiet
time, no pacing: the worst case). Afterwards every line the person saved is in the file, their
text is exactly what they saved, and memd's newest block is there.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memd.integrations import instructions as ins
from memd.integrations.instructions import Keeper, Target, Targets

pytestmark = pytest.mark.slow  # editors saving for seconds on purpose

# The person's own text: long enough that a save caught half-way ends before memd's block.
USER_TEXT = "# My rules\n\n" + "".join(f"- rule {i}: keep it short and tested\n" for i in range(60))

EDITOR = r"""
import os, random, sys, time

path, how, saves, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
for k in range(saves):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    data = (f"person line {k}\n" + text).encode()
    if how == "rename":  # write a copy beside it, then rename it over the file
        tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.save")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    else:  # in place and slowly: truncate, write half, pause, write the rest
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, data[: len(data) // 2])
            time.sleep(pause)
            os.write(fd, data[len(data) // 2 :])
        finally:
            os.close(fd)
    time.sleep(random.uniform(0, pause))
print("saved", saves)
"""


def race(tmp_path: Path, how: str, saves: int, pause: float) -> tuple[str, str]:
    """The file after `saves` saves of the editor raced by the keeper; (its text, the
    newest block memd meant)."""
    path = tmp_path / "AGENTS.md"
    path.write_text(USER_TEXT)
    targets = Targets(tmp_path / "state" / "instructions.json")
    targets.add(Target("codex", str(path)))
    n = {"k": 0}

    def context(assistant: str) -> str:
        n["k"] += 1
        return f"- memory version {n['k']}"

    keeper = Keeper(targets, context, quiet_s=0.0, recent_every_s=0.0)
    assert keeper.refresh() == 1  # the block is there before the person starts
    done = threading.Event()
    wrote = {"n": 0}

    def refresh() -> None:
        while not done.is_set():
            wrote["n"] += keeper.refresh()

    runner = threading.Thread(target=refresh)
    runner.start()
    try:
        editor = subprocess.run(
            [sys.executable, "-c", EDITOR, str(path), how, str(saves), str(pause)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        done.set()
        runner.join()
    assert editor.returncode == 0, editor.stderr
    assert wrote["n"] > 0, "the keeper never wrote while the person saved: no race was run"
    assert keeper.problems == {}
    keeper.refresh()  # memd's newest block, over the older one the last save carried
    return path.read_bytes().decode(), ins.body("codex", f"- memory version {n['k']}")


def expected(saves: int) -> str:
    return "".join(f"person line {k}\n" for k in reversed(range(saves))) + USER_TEXT


@pytest.mark.parametrize(("how", "saves", "pause"), [("rename", 150, 0.01), ("in-place", 40, 0.05)])
def test_no_save_of_the_person_is_lost_and_the_block_is_there(
    tmp_path: Path, how: str, saves: int, pause: float
) -> None:
    final, newest = race(tmp_path, how, saves, pause)
    mine = ins.remove_block(final)
    lost = [k for k in range(saves) if f"person line {k}\n" not in mine]
    assert lost == [], f"{len(lost)} of {saves} saves lost (e.g. {lost[:5]})"
    assert mine == expected(saves)  # the person's text exactly as they saved it
    assert final.endswith(newest)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".AGENTS.md.")]
