"""FIFOs and devices named like memory files are never opened in a way that can block: the
daemon indexes around them, refuses to write into them, and its jobs go on. A real daemon on
real folders with real FIFOs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memd.api.client import RemoteError
from memd.core.errors import MemdError
from tests.utils import DaemonProcess, wait_for


def _unblock(fifo: Path) -> None:
    """Open a FIFO for writing without blocking, so a reader stuck on it (a bug) returns."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # nobody is reading it
    os.close(fd)


def test_fifos_in_the_tree_are_skipped_and_refused_never_waited_on(home: Path) -> None:
    memory = home / "memory"
    (memory / "topics").mkdir(parents=True)
    (memory / "topics" / "real.md").write_text("# Real\n\n## Notes\n- the zither is tuned\n")
    os.mkfifo(memory / "topics" / "pipe.md")  # there at the startup walk
    d = DaemonProcess(home).start()
    fifos = [memory / "topics" / "pipe.md"]
    try:
        assert d.search_paths("zither") == {str(memory / "topics" / "real.md")}
        fifos.append(memory / "topics" / "later.md")
        os.mkfifo(fifos[-1])  # one the watcher reports
        notes = memory / "_core" / "notes.md"
        notes.unlink(missing_ok=True)
        fifos.append(notes)
        os.mkfifo(notes)  # where `remember` writes
        (memory / "topics" / "after.md").write_text("# After\n\n## Notes\n- the lute is new\n")
        wait_for(lambda: d.search_paths("lute"), 10)  # every earlier event was handled
        with pytest.raises((RemoteError, MemdError)) as err:
            d.call("remember", {"text": "Prefers the harp"})
        assert "notes.md" in str(err.value) and "not a regular file" in str(err.value)
        paths = {h["path"] for h in d.call("search", {"query": "the", "limit": 50})["hits"]}
        assert not paths & {str(f) for f in fifos}
        assert d.call("reindex", {"full": False})  # a reconcile walks past them again
        assert d.call("status")["daemon"]["pid"] > 0
    finally:
        for f in fifos:
            _unblock(f)
        assert d.stop() == 0


def test_a_fifo_relationship_file_does_not_hang_the_extract_job(home: Path) -> None:
    rel = home / "memory" / "agents" / "ally" / "relationship.md"
    rel.parent.mkdir(parents=True)
    os.mkfifo(rel)
    d = DaemonProcess(home, MEMD_SUMMARY_IDLE_MIN="1").start()
    try:
        old = time.time() - 3600
        d.call("ingest", {"turns": [
            {"session_id": "s1", "id": "q1", "role": "user", "agent_id": "ally", "content": "I always use tabs, thanks!", "ts": old},
            {"session_id": "s1", "id": "a1", "role": "assistant", "agent_id": "ally", "content": "Tabs it is.", "ts": old + 1},
        ]})  # fmt: skip
        # A job stuck opening the FIFO would never answer (the client gives up after 30 s).
        res = d.call("run_job", {"name": "extract"})
        assert res["counts"].get("relationship_errors") == 1, res
        assert "not a regular file" in res["message"], res
        assert d.call("relationship", {"agent_id": "ally"})["exists"] is False
    finally:
        _unblock(rel)
        assert d.stop() == 0
