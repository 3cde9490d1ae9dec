"""Fixtures of the history tests: a real memory tree, a real git repository, a settable clock."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.history import History

TEMPLATE = {
    "_core/profile.md": "# User Profile\n\n## Basic Info\n\n- lives in Lyon\n",
    "_core/preferences.md": "# User Preferences\n\n## Technical Preferences\n\n- tabs over spaces\n",
    "topics/vue.md": "# Vue\n\n## Testing\n\n- use vitest\n- mount with @vue/test-utils\n",
}


class Clock:
    """A clock the test moves by hand (seconds since the epoch)."""

    def __init__(self, now: float | None = None) -> None:
        self.now = time.time() if now is None else now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def write(tree: Path, rel: str, text: str) -> Path:
    """Write a file of the tree as an editor would (whole file, folders created)."""
    path = tree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(h: History, *args: str, input: bytes | None = None) -> str:
    """Run plain `git --git-dir=<history>` as a user would, with nothing of memd's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(
        ["git", f"--git-dir={h.git_dir}", *args],
        input=input,
        capture_output=True,
        env=env,
        check=True,
        cwd=h.tree,
    )
    return proc.stdout.decode("utf-8", "surrogateescape")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    for rel, text in TEMPLATE.items():
        write(root, rel, text)
    return root


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def hist(tree: Path, tmp_path: Path, clock: Clock) -> Iterator[History]:
    """A history opened on the tree (baseline committed), recording synchronously."""
    h = History(tree, tmp_path / "data" / "history.git", clock=clock)
    h.flush()
    yield h
    h.close()
