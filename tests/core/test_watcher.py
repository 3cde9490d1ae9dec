"""`Watcher.watch_when_present`: a folder that does not exist yet is watched from the moment it
appears, however it is made, without memd creating it; a root that is one file is watched in
its folder."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core.watcher import Watcher
from tests.utils import wait_for


class Seen:
    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.appeared: list[Path] = []
        self.lock = threading.Lock()

    def changed(self, paths: list[str]) -> None:
        with self.lock:
            self.paths.update(paths)

    def has(self, path: Path) -> bool:
        with self.lock:
            return str(path) in self.paths


@pytest.fixture
def seen() -> Seen:
    return Seen()


@pytest.fixture
def watcher(seen: Seen) -> Iterator[Watcher]:
    w = Watcher(seen.changed, accept=lambda p: p.endswith(".jsonl"), debounce_s=0.02)
    yield w
    w.stop()


def test_a_folder_made_in_one_go_is_watched(tmp_path: Path, seen: Seen, watcher: Watcher) -> None:
    root = tmp_path / "a" / "b" / "logs"
    watcher.watch_when_present(root, on_present=seen.appeared.append)
    watcher.start()
    assert not (tmp_path / "a").exists()  # waiting creates nothing
    assert watcher.waiting_for == [str(root)]
    os.makedirs(root / "proj")
    wait_for(lambda: seen.appeared == [root])
    assert watcher.waiting_for == [] and str(root) in watcher.watched_roots
    log = root / "proj" / "s.jsonl"
    log.write_text("{}\n")
    wait_for(lambda: seen.has(log))


def test_a_folder_made_step_by_step_is_watched(
    tmp_path: Path, seen: Seen, watcher: Watcher
) -> None:
    root = tmp_path / "x" / "y" / "z"
    watcher.start()
    watcher.watch_when_present(root, on_present=seen.appeared.append)
    for part in (tmp_path / "x", tmp_path / "x" / "y", root):
        part.mkdir()
    wait_for(lambda: seen.appeared == [root])
    log = root / "t.jsonl"
    log.write_text("{}\n")
    wait_for(lambda: seen.has(log))


def test_a_root_that_is_one_file_is_watched_in_its_folder(
    tmp_path: Path, seen: Seen, watcher: Watcher
) -> None:
    root = tmp_path / "later" / "chat.jsonl"
    watcher.watch_when_present(root)
    watcher.start()
    root.parent.mkdir()
    root.write_text("{}\n")
    wait_for(lambda: seen.has(root))
    (root.parent / "other.jsonl").write_text("{}\n")  # not the root: never reported
    with seen.lock:
        seen.paths.clear()
    with open(root, "a") as f:
        f.write("{}\n")
    wait_for(lambda: seen.has(root))
    assert not seen.has(root.parent / "other.jsonl")


def test_an_existing_folder_is_watched_at_once(
    tmp_path: Path, seen: Seen, watcher: Watcher
) -> None:
    watcher.watch_when_present(tmp_path, on_present=seen.appeared.append)
    watcher.start()
    assert str(tmp_path) in watcher.watched_roots and seen.appeared == []
    (tmp_path / "n.jsonl").write_text("{}\n")
    wait_for(lambda: seen.has(tmp_path / "n.jsonl"))


def test_two_roots_waiting_in_one_folder_each_keep_their_watch(
    tmp_path: Path, seen: Seen, watcher: Watcher
) -> None:
    """Two roots not there yet wait in the same folder (two workspaces in one code folder):
    the first to appear must not take the other's watch with it."""
    first, second = tmp_path / "code" / "app", tmp_path / "code" / "tool"
    watcher.start()
    watcher.watch_when_present(first, on_present=seen.appeared.append)
    watcher.watch_when_present(second, on_present=seen.appeared.append)
    (tmp_path / "code").mkdir()
    # Both wait in code/ now (the watch moved down for each), then the first appears.
    wait_for(lambda: all(p.anchor == tmp_path / "code" for p in watcher._pending.values()))
    first.mkdir()
    wait_for(lambda: seen.appeared == [first])
    second.mkdir()
    wait_for(lambda: seen.appeared == [first, second])


def test_a_folder_made_between_the_wait_and_the_start_is_watched(
    tmp_path: Path, seen: Seen, watcher: Watcher
) -> None:
    """A root waited for before `start()` whose folders appear before it (an assistant's first
    run while the daemon starts): the folder's own watch and `on_present`, not only a poll."""
    root = tmp_path / ".claude" / "projects"
    watcher.watch_when_present(root, on_present=seen.appeared.append)
    os.makedirs(root / "-tmp-proj")
    watcher.start()
    wait_for(lambda: seen.appeared == [root], timeout=10)
    assert watcher.waiting_for == [] and str(root) in watcher.watched_roots
    (root / "-tmp-other").mkdir()
    log = root / "-tmp-other" / "s.jsonl"
    log.write_text("{}\n")
    wait_for(lambda: seen.has(log), timeout=10)
