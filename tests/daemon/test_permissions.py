"""File modes under a permissive umask: memd's folders are 0700 and the files it creates 0600,
so another user of the machine reads nothing; a file the user made keeps its mode."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.utils import DaemonProcess


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # inherited by the daemon process
    try:
        yield
    finally:
        os.umask(old)


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_folders_0700_files_0600_under_umask_022(home: Path, umask_022: None) -> None:
    os.chmod(home, 0o755)  # like ~/.local/share: others may enter, so modes below matter
    (home / "memory" / "topics").mkdir(parents=True)
    (home / "memory").chmod(0o755)
    mine = home / "memory" / "topics" / "shared.md"
    mine.write_text("# Shared\n\n- the user made this one readable on purpose\n")
    mine.chmod(0o644)
    d = DaemonProcess(home).start()
    try:
        d.call("remember", {"text": "private preference", "type": "preference"})
        d.call("remember", {"text": "private note"})
        d.call(
            "ingest", {"turns": [{"session_id": "s1", "role": "user", "content": "hello there"}]}
        )
        d.call("export", {"path": str(home / "backup.json")})
        db = home / "data" / "index.db"
        files = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), home / "backup.json",
                 home / "memory" / "_core" / "preferences.md", home / "memory" / "_core" / "notes.md",
                 home / "memory" / "_core" / "profile.md", home / "memory" / "README.md"]  # fmt: skip
        # memd's folders, and the memory root the user made (0755): the owner's alone now.
        folders = [home / "data", home / "memory", home / "run", home / "memory" / "_core",
                   home / "memory" / "journal", home / "memory" / "agents"]  # fmt: skip
        for f in files:
            assert f.exists(), f
        bad = {str(p): oct(mode(p)) for p in files if mode(p) != 0o600}
        bad |= {str(p): oct(mode(p)) for p in folders if mode(p) != 0o700}
        for dirpath, _, names in os.walk(home / "memory"):
            for n in names:
                p = Path(dirpath) / n
                if p != mine and mode(p) & 0o077:
                    bad[str(p)] = oct(mode(p))
        assert not bad, bad
        assert mode(mine) == 0o644, "a file the user made keeps its mode"

        if shutil.which("runuser") and os.geteuid() == 0:
            for f in (db, Path(f"{db}-wal"), mine, home / "backup.json"):
                other = subprocess.run(["runuser", "-u", "nobody", "--", "cat", str(f)],
                                       capture_output=True, timeout=30)  # fmt: skip
                assert other.returncode != 0 and b"Permission denied" in other.stderr, f
    finally:
        d.stop()
