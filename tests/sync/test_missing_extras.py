"""A sync backend whose extra is not installed: every surface names the extra; nothing stops.

The client libraries are made uninstalled for real subprocesses (the daemon, the CLI) by a
`sys.meta_path` finder in a `sitecustomize` module put first on their PYTHONPATH.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.utils import ROOT, DaemonProcess, wait_for

BLOCKER = """
import importlib.abc
import os
import sys


class _Uninstalled(importlib.abc.MetaPathFinder):
    names = set(os.environ["MEMD_TEST_UNINSTALLED"].split(","))

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Uninstalled())
"""


@pytest.fixture
def uninstalled(tmp_path: Path) -> Callable[..., dict[str, str]]:
    """Environment for subprocesses in which the given top-level packages cannot be imported."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)

    def env(*packages: str) -> dict[str, str]:
        return {
            "PYTHONPATH": f"{site}{os.pathsep}{ROOT}",
            "MEMD_TEST_UNINSTALLED": ",".join(packages),
        }

    return env


def _doctor_sync(d: DaemonProcess, env: dict[str, str]) -> dict[str, str]:
    proc = d.cli("doctor", "--json", env=env)
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert proc.returncode == 1, proc.stdout + proc.stderr
    sync: dict[str, str] = checks["sync"]
    return sync


def test_postgres_without_its_extra(
    tmp_path: Path, uninstalled: Callable[..., dict[str, str]]
) -> None:
    env = {
        **uninstalled("psycopg", "psycopg_binary"),
        "MEMD_SYNC_BACKEND": "postgres",
        "MEMD_SYNC_DSN": "postgresql://memd@127.0.0.1:9/memd",
        "MEMD_SYNC_INTERVAL_S": "3600",
    }
    d = DaemonProcess(tmp_path / "home", env=env).start()
    try:
        (d.memory / "topics").mkdir(exist_ok=True)
        (d.memory / "topics" / "rust.md").write_text("# Rust\n\n- prefers nextest\n")
        wait_for(lambda: d.search_paths("nextest"), timeout=10)

        ran = d.cli("sync", "--now", env=env)
        assert ran.returncode == 1
        assert "sync: config_error - sync.backend is postgres but its client library" in ran.stdout
        assert "not installed (psycopg: No module named 'psycopg')" in ran.stdout
        assert "pip install 'memd[postgres]'" in ran.stdout

        st = d.call("sync_status")
        assert st["state"] == "refused" and st["pending"] == 0 and st["parked"] >= 1
        assert "memd[postgres]" in st["last_error"]
        job = d.call("status")["jobs"]["sync"]
        assert job["last_outcome"] == "config_error" and "memd[postgres]" in job["last_message"]

        check = _doctor_sync(d, env)
        assert check["status"] == "fail" and "client library is not installed" in check["detail"]
        assert "pip install 'memd[postgres]'" in check["hint"]

        # The daemon keeps serving.
        assert d.search_paths("nextest") and d.call("status")["daemon"]["pid"] == d.pid
    finally:
        assert d.stop() == 0


def test_supabase_without_its_extra(
    tmp_path: Path, uninstalled: Callable[..., dict[str, str]]
) -> None:
    env = {
        **uninstalled("postgrest", "httpx"),
        "MEMD_SYNC_BACKEND": "supabase",
        "SUPABASE_URL": "http://127.0.0.1:9",
        "SUPABASE_KEY": "k" * 40,
        "MEMD_SYNC_INTERVAL_S": "3600",
    }
    d = DaemonProcess(tmp_path / "home", env=env).start()
    try:
        ran = d.cli("sync", "--now", env=env)
        assert ran.returncode == 1
        assert "sync.backend is supabase but its client library is not installed" in ran.stdout
        assert "pip install 'memd[supabase]'" in ran.stdout
        check = _doctor_sync(d, env)
        assert check["status"] == "fail" and "pip install 'memd[supabase]'" in check["hint"]
        # Creating the tables needs no client: the SQL file is still shown.
        init = d.cli("sync", "init-schema", env=env)
        assert init.returncode == 0 and "supabase: not created here" in init.stdout
        assert d.call("status")["daemon"]["pid"] == d.pid
    finally:
        assert d.stop() == 0
