"""`memd sync` on the command line: off until configured, the supabase schema hint, --json."""

from __future__ import annotations

import json
from pathlib import Path

from memd.sync.backend import schema_path
from tests.utils import DaemonProcess


def test_sync_is_off_until_configured(daemon: DaemonProcess) -> None:
    st = daemon.call("status")
    assert st["sync"]["state"] == "off" and "sync" not in st["jobs"]
    shown = daemon.cli("sync", "status")
    assert shown.returncode == 0 and shown.stdout.startswith("sync: off - set sync.backend")
    ran = daemon.cli("sync", "--now")
    assert (
        ran.returncode == 1
        and "memd: sync is off" in ran.stderr
        and "hint: set sync.backend" in ran.stderr
    )
    assert daemon.call("sync_status")["state"] == "off"


def test_supabase_init_schema_points_to_the_sql_and_status_speaks_json(home: Path) -> None:
    d = DaemonProcess(home)
    env = {
        "MEMD_SYNC_BACKEND": "supabase",
        "SUPABASE_URL": "http://127.0.0.1:9",
        "SUPABASE_KEY": "k" * 40,
    }
    init = d.cli("sync", "init-schema", env=env)
    assert init.returncode == 0, init.stderr
    assert "supabase: not created here" in init.stdout and str(schema_path()) in init.stdout
    st = json.loads(d.cli("sync", "status", "--json", env=env).stdout)
    assert st["state"] == "on" and st["backend"] == "supabase" and st["table"] == "memd_files"
    assert st["pending"] == 0 and st["parked_ops"] == [] and st["conflicts"] == []
    bad = d.cli("sync", "status", MEMD_SYNC_BACKEND="dropbox")
    assert (
        bad.returncode == 1 and "sync.backend must be empty, 'postgres' or 'supabase'" in bad.stderr
    )
