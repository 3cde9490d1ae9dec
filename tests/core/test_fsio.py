"""atomic_write / atomic_file: all or nothing, permission bits, no temp file left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memd.core.errors import PathError
from memd.core.fsio import (
    TEMP_SUFFIX,
    NotRegularFile,
    atomic_file,
    atomic_write,
    is_regular,
    make_private_dir,
    read_regular,
    resolve_inside,
)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_a_new_file_gets_new_mode_and_its_folders(tmp_path: Path) -> None:
    p = tmp_path / "a" / "b" / "notes.md"
    atomic_write(p, "one\r\ntwo\n", new_mode=0o600)
    assert p.read_bytes() == b"one\r\ntwo\n"  # line endings untouched
    assert _mode(p) == 0o600


def test_a_replaced_file_keeps_its_mode_unless_one_is_given(tmp_path: Path) -> None:
    p = tmp_path / "f.md"
    p.write_text("old")
    os.chmod(p, 0o640)
    atomic_write(p, "new")
    assert (p.read_text(), _mode(p)) == ("new", 0o640)
    atomic_write(p, "newer", mode=0o600)
    assert (p.read_text(), _mode(p)) == ("newer", 0o600)


def test_a_failure_leaves_the_target_and_no_temp_file(tmp_path: Path) -> None:
    p = tmp_path / "d" / "f.md"
    p.parent.mkdir()
    p.write_text("kept")
    with pytest.raises(RuntimeError), atomic_file(p) as fh:
        fh.write("half")
        raise RuntimeError("boom")
    assert p.read_text() == "kept"
    assert [f.name for f in p.parent.iterdir()] == ["f.md"]


def test_the_temp_file_is_hidden_beside_the_target(tmp_path: Path) -> None:
    p = tmp_path / "d" / "f.md"
    with atomic_file(p) as fh:
        fh.write("x")
        (tmp,) = list(p.parent.iterdir())
        assert tmp.name.startswith(".f.md.") and tmp.name.endswith(TEMP_SUFFIX)
        assert not p.exists()
    assert p.read_text() == "x" and not tmp.exists()


# -- roots, regular files, links ---------------------------------------------------------------


def test_resolve_inside_follows_links_and_refuses_what_leaves(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "topics").mkdir(parents=True)
    outside.mkdir()
    (root / "topics" / "a.md").write_text("a")
    os.symlink(root / "topics" / "a.md", root / "link.md")
    os.symlink(outside, root / "away")
    os.symlink("loop", root / "loop")
    assert resolve_inside([root], root / "topics" / "a.md") == root / "topics" / "a.md"
    assert resolve_inside([root], root / "link.md") == root / "topics" / "a.md"
    assert resolve_inside([root], root / "new" / "b.md") == root / "new" / "b.md"
    assert resolve_inside([root, outside], root / "away" / "x.md") == outside / "x.md"
    for bad in (root / "away" / "x.md", root / ".." / "outside" / "x.md", Path("/etc/passwd")):
        with pytest.raises(PathError) as err:
            resolve_inside([root], bad)
        assert "outside memd's memory folders" in str(err.value)
    with pytest.raises((OSError, NotRegularFile)):  # a loop resolves to itself: never opened
        read_regular(resolve_inside([root], root / "loop"))


def test_read_regular_refuses_links_fifos_and_files_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.md").write_text("text")
    (tmp_path / "secret.md").write_text("secret")
    os.symlink(tmp_path / "secret.md", root / "link.md")
    os.mkfifo(root / "pipe.md")
    assert read_regular(root / "a.md", inside=[root]) == b"text"
    with pytest.raises(NotRegularFile):
        read_regular(root / "link.md")
    with pytest.raises(NotRegularFile):  # returns at once: opened without blocking
        read_regular(root / "pipe.md")
    with pytest.raises(PathError):
        read_regular(tmp_path / "secret.md", inside=[root])
    assert is_regular(root / "a.md") and not is_regular(root / "link.md")


def test_atomic_write_never_replaces_a_link_and_can_refuse_to_replace(tmp_path: Path) -> None:
    (tmp_path / "target.md").write_text("target")
    os.symlink(tmp_path / "target.md", tmp_path / "link.md")
    with pytest.raises(PathError):
        atomic_write(tmp_path / "link.md", "new")
    assert (tmp_path / "link.md").is_symlink() and (tmp_path / "target.md").read_text() == "target"
    (tmp_path / "mine.json").write_text("mine")
    with pytest.raises(FileExistsError), atomic_file(tmp_path / "mine.json", replace=False) as fh:
        fh.write("theirs")
    assert (tmp_path / "mine.json").read_text() == "mine"
    with atomic_file(tmp_path / "new.json", replace=False) as fh:
        fh.write("new")
    assert (tmp_path / "new.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == [
        "link.md", "mine.json", "new.json", "target.md"
    ]  # fmt: skip


def test_new_files_and_folders_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a" / "b" / "f.md", "x")
        make_private_dir(tmp_path / "c" / "d")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a" / "b" / "f.md") == 0o600
    for d in ("a", "a/b", "c", "c/d"):
        assert _mode(tmp_path / d) == 0o700, d
