"""With the daemon down, query commands answer from the index and say how stale it may be."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from tests.utils import DaemonProcess, wait_for


def test_an_offline_edit_is_reported_as_a_changed_file(home: Path) -> None:
    d = DaemonProcess(home).start()
    note = d.memory / "topics" / "deploys.md"
    note.write_text("# Deploys\n\n## Rule\n- deploy on tuesdays\n")
    wait_for(lambda: d.search_paths("tuesdays"), 5)
    d.stop()

    r = d.cli("context", "deploy")
    assert r.returncode == 0 and "tuesdays" in r.stdout
    assert re.search(r"index last updated \d+ s ago; 0 files changed since", r.stderr), r.stderr

    # Edited and added while nothing watches: the answer is the old one, and it says so.
    note.write_text("# Deploys\n\n## Rule\n- deploy on thursdays\n")
    later = time.time() + 2
    os.utime(note, (later, later))
    (d.memory / "topics" / "new.md").write_text("# New\n\n- written offline\n")
    r = d.cli("context", "deploy")
    assert "tuesdays" in r.stdout
    assert "2 files changed since (answers may be stale" in r.stderr, r.stderr
    r = d.cli("search", "deploy", "--json")
    assert r.returncode == 0 and "2 files changed since" in r.stderr
    assert r.stdout.lstrip().startswith("{")  # the note goes to stderr, never into the JSON


def test_import_without_a_daemon_writes_directly(home: Path, tmp_path: Path) -> None:
    # The in-process engine answers `import` with its typed result; the command prints it as
    # it prints the daemon's (logs, then a memd export of them).
    d = DaemonProcess(home)
    log = tmp_path / "turns.jsonl"
    log.write_text(
        json.dumps(
            {
                "session_id": "s1",
                "role": "user",
                "content": "the deploy runs on fridays",
                "ts": 1_750_000_000,
            }
        )
        + "\n"  # fmt: skip
    )
    r = d.cli("import", str(log))
    assert r.returncode == 0, r.stderr
    assert "imported jsonl: 1 new turn in 1 session" in r.stdout, r.stdout
    r = d.cli("import", str(log), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["added"] == 0, r.stdout + r.stderr
    export = tmp_path / "export.json"
    assert d.cli("export", str(export)).returncode == 0
    r = d.cli("import", str(export), "--json")
    assert r.returncode == 0, r.stderr
    merged = json.loads(r.stdout)
    assert merged["format"] == "memd-export" and merged["sessions_in_export"] == 1, merged
