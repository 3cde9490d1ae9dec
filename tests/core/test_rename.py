"""The atomic renames (memd/core/rename.py): swap two names, create only onto no name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memd.core.rename import Renamer


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")
def test_a_renamer_swaps_and_refuses_without_starting_a_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding renameat2 starts no child process: every daemon start and every command that
    writes makes a Renamer (ctypes' `find_library` ran `ldconfig -p` for it)."""

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    r = Renamer()
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("A")
    b.write_text("B")
    assert r.exchange(a, b)
    assert (a.read_text(), b.read_text()) == ("B", "A")
    c = tmp_path / "c"
    c.write_text("C")
    with pytest.raises(FileExistsError):
        r.create(c, a)
    assert (a.read_text(), c.read_text()) == ("B", "C")
    r.create(c, tmp_path / "d")
    assert (tmp_path / "d").read_text() == "C" and not c.exists()
