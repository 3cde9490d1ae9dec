"""Export and import with hostile paths and documents: nothing is overwritten by accident, no
memory file becomes JSON, a crafted export adds no heading, a FIFO hangs nothing."""

from __future__ import annotations

import json
import os
import signal
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from memd.api.client import RemoteError
from memd.core.errors import InvalidParams, MemdError, PathError, SourceError
from tests.utils import DaemonProcess, unit_stop_timeout, wait_for


def test_export_refuses_existing_files_and_memd_folders(daemon: DaemonProcess) -> None:
    prefs = daemon.memory / "_core" / "preferences.md"
    before = prefs.read_text()
    for target in (prefs, daemon.memory / "topics" / "new.json", daemon.home / "data" / "x.json",
                   daemon.home / "data" / "index.db"):  # fmt: skip
        for overwrite in (False, True):
            with pytest.raises((PathError, InvalidParams)) as err:
                daemon.call("export", {"path": str(target), "overwrite": overwrite})
            assert "memory" in str(err.value) or "data" in str(err.value), err.value
    assert prefs.read_text() == before
    assert not (daemon.memory / "topics" / "new.json").exists()

    out = daemon.home / "backup.json"
    out.write_text("my own file")
    with pytest.raises((PathError, InvalidParams)) as err:
        daemon.call("export", {"path": str(out)})
    assert "overwrite" in str(err.value)
    assert out.read_text() == "my own file"
    daemon.call("export", {"path": str(out), "overwrite": True})
    assert json.loads(out.read_text())["format"] == "memd-export"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600

    # A link to a memory file is refused by where it leads.
    link = daemon.home / "link.json"
    os.symlink(daemon.memory / "_core" / "profile.md", link)
    with pytest.raises((PathError, InvalidParams)):
        daemon.call("export", {"path": str(link), "overwrite": True})
    assert link.is_symlink() and "# User Profile" in link.read_text()

    r = daemon.cli("export", str(out))
    assert r.returncode == 1 and "--overwrite" in r.stderr, r.stderr
    r = daemon.cli("export", str(out), "--overwrite")
    assert r.returncode == 0, r.stderr


def crafted_export(path: Path, memory: dict[str, Any]) -> None:
    doc = {"format": "memd-export", "version": 1, "sessions": [], "memories": [memory],
           "memory_hashes": [], "tree": []}  # fmt: skip
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("field", "memory"),
    [
        ("section", {"section": "Notes\n\n## Injected\n\n- evil item"}),
        ("meta", {"meta": {"src": "x -->\n## Injected heading\n- evil item"}}),
        ("meta", {"meta": {"src": 'a" imp="10'}}),
        ("meta", {"meta": {"bad key\n## Injected": "1"}}),
        ("path", {"path": "topics/evil\n\n## Injected\n\n- evil.md"}),
    ],
)
def test_import_refuses_markdown_injection(
    module_daemon: DaemonProcess, field: str, memory: dict[str, Any]
) -> None:
    doc = module_daemon.home / "crafted.json"
    base = {"id": "m_import1", "text": "imported text", "path": "topics/imported.md",
            "section": "Notes", "meta": {"id": "m_import1"}}  # fmt: skip
    crafted_export(doc, {**base, **memory})
    with pytest.raises(MemdError) as err:
        module_daemon.call("import", {"path": str(doc)})
    assert "memories[0]" in str(err.value) and field in str(err.value), err.value
    assert not (module_daemon.memory / "topics" / "imported.md").exists()
    assert not list((module_daemon.memory / "topics").glob("evil*"))
    assert not module_daemon.search_paths("Injected") and not module_daemon.search_paths("evil")


def test_fifo_in_the_tree_and_as_import_path_hangs_nothing(daemon: DaemonProcess) -> None:
    fifo = daemon.memory / "topics" / "pipe.md"
    os.mkfifo(fifo)
    (daemon.memory / "topics" / "real.md").write_text("# Real\n\n## R\n- fifosentinel\n")
    wait_for(lambda: daemon.search_paths("fifosentinel"), 10)
    out = daemon.home / "e.json"
    res = daemon.call("export", {"path": str(out)})
    paths = [f["path"] for f in json.loads(out.read_text())["tree"]]
    assert "topics/real.md" in paths and "topics/pipe.md" not in paths, res
    with pytest.raises((SourceError, InvalidParams, PathError, RemoteError)) as err:
        daemon.call("import", {"path": str(fifo)})
    assert "regular file" in str(err.value) or "not a file" in str(err.value), err.value
    with pytest.raises((SourceError, InvalidParams, PathError, RemoteError)):
        daemon.call("import", {"path": str(fifo), "format": "memd"})
    assert daemon.call("status") and daemon.proc is not None and daemon.proc.poll() is None


def test_sigterm_with_a_fifo_export_in_flight_exits(home: Path) -> None:
    d = DaemonProcess(home).start()
    try:
        os.mkfifo(d.memory / "topics" / "pipe.md")
        done: list[Any] = []

        def export() -> None:
            try:
                done.append(d.call("export", {"path": str(home / "e.json")}))
            except Exception as exc:  # the daemon may stop before it answers
                done.append(exc)

        t = threading.Thread(target=export, daemon=True)
        t.start()
        t.join(3)  # let the export reach the tree (or finish)
        # A liveness check; the bound is the unit's TimeoutStopSec (systemd kills after it).
        code = d.stop(signal.SIGTERM, timeout=unit_stop_timeout())
        assert code is not None
    finally:
        if d.proc and d.proc.poll() is None:
            d.proc.kill()
