"""A full disk: plain "disk full" errors, and a daemon that starts read-only instead of failing.

The disk is a small tmpfs mounted for the test (needs root; skipped otherwise).
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core.errors import DiskFull
from tests.utils import DaemonProcess, wait_for


@pytest.fixture
def tiny_disk() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    d = Path(tempfile.mkdtemp(prefix="memd-full-", dir="/tmp"))
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(d)],
                       capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0:
        d.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)
        with contextlib.suppress(OSError):
            d.rmdir()


def fill(disk: Path) -> Path:
    """Write a filler file until the disk is full."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (1 << 16, 1):  # big writes, then the last bytes
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    return filler


def daemon_on(disk: Path, log_dir: Path) -> DaemonProcess:
    d = DaemonProcess(disk / "home")
    d.log = log_dir / "daemon.log"  # the log must not need the full disk
    return d


def test_disk_full_is_said_plainly(tiny_disk: Path, tmp_path: Path) -> None:
    d = daemon_on(tiny_disk, tmp_path).start()
    try:
        (d.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small components\n")
        wait_for(lambda: d.search_paths("components"), 5)
        filler = fill(tiny_disk)
        for method, params in (
            ("remember", {"text": "a memory that does not fit " * 20}),
            (
                "ingest",
                {
                    "turns": [
                        {
                            "session_id": "s",
                            "id": f"t{i}",
                            "role": "user",
                            "content": "words " * 2000,
                        }
                        for i in range(50)
                    ]
                },
            ),  # fmt: skip
        ):
            with pytest.raises(DiskFull, match="^disk full") as info:
                d.call(method, params)
            assert "internal error" not in str(info.value) and "Errno" not in str(info.value)
        assert d.search_paths("components")  # queries still answered
        filler.unlink()
        assert d.call("remember", {"text": "fits again"})["id"].startswith("m_")
    finally:
        d.stop()


def test_the_daemon_starts_read_only_on_a_full_disk(tiny_disk: Path, tmp_path: Path) -> None:
    d = daemon_on(tiny_disk, tmp_path).start()
    (d.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small components\n")
    wait_for(lambda: d.search_paths("components"), 5)
    assert d.stop() == 0
    filler = fill(tiny_disk)
    d.start()
    try:
        st = d.call("status")
        assert "disk full" in st["read_only"]
        assert d.search_paths("components")
        assert "small components" in d.call("context", {"query": "vue components"})["text"]
        with pytest.raises(DiskFull, match="read-only"):
            d.call("remember", {"text": "x"})
        assert "read-only" in d.cli("status").stdout
    finally:
        assert d.stop() == 0
        filler.unlink()
