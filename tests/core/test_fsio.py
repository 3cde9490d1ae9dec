"""atomic_write / atomic_file: all or nothing, permission bits, no temp file left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memd.core.fsio import TEMP_SUFFIX, atomic_file, atomic_write


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
