"""`memd doctor` against a real daemon, a real index, real folders, a fake PostgREST server.

The verdicts are pure functions of what was measured, so the cases this machine cannot
produce (a SQLite without FTS5, a watcher that fell back to polling, a failed systemd unit)
are checked on those functions directly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from msgspec import structs

from memd.api.messages import STATUS, WatcherStatus, decode_result, to_builtins
from memd.cli import doctor
from memd.cli.doctor.check import configured_secrets, scrub
from memd.cli.doctor.cloud import check_sync
from memd.cli.doctor.daemon import assess_daemon, assess_service, fetch_status
from memd.cli.doctor.folders import assess_permissions
from memd.cli.doctor.inotify import assess_inotify, count_dirs
from memd.cli.doctor.runtime import assess_sqlite, check_python
from memd.cli.service import ServiceReport
from memd.core import settings as settings_mod
from memd.db.connection import sqlite_features
from tests import forkserver
from tests.fakes.postgrest_server import FakePostgrest
from tests.utils import DaemonProcess, answering_once, memd_env, wait_for

ANTHROPIC_SECRET = "sk-ant-api03-D0ctorMustNeverPrintThis"
SUPABASE_SECRET = "sb_secret_D0ctorKeyNeverShown42"
PG_PASSWORD = "pg-pa55word-never-shown"


def run_doctor(home: Path, *args: str, **env: str) -> tuple[int, dict[str, Any], str]:
    """`memd doctor --json` as a user runs it: exit code, the checks by name, raw output."""
    proc = forkserver.run(
        [sys.executable, "-m", "memd", "doctor", "--json", *args],
        env=memd_env(home, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = json.loads(proc.stdout)
    return proc.returncode, {c["name"]: c for c in out["checks"]}, proc.stdout + proc.stderr


def load(home: Path, **env: str) -> settings_mod.Settings:
    # Recall by meaning off unless asked, as the suite's (at its default the doctor's checks
    # loaded the model).
    return settings_mod.load(env={"MEMD_HOME": str(home), "MEMD_SEMANTIC_KIND": "off", **env})


@pytest.fixture
def supabase() -> Iterator[FakePostgrest]:
    with FakePostgrest(api_key=SUPABASE_SECRET) as fake:
        yield fake


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- end to end --------------------------------------------------------------------------------
def test_healthy_daemon_passes_and_reports_its_health(daemon: DaemonProcess) -> None:
    code, checks, raw = run_doctor(daemon.home)
    assert code == 0, raw
    st = daemon.call("status")
    assert {n: c["status"] for n, c in checks.items()} == {
        "config": "ok",
        "python": "ok",
        "sqlite": "ok",
        "folders": "ok",
        "permissions": "ok",
        "inotify": "ok",
        "daemon": "ok",
        "watcher": "ok",
        "service": "warn",  # HOME is a temp folder: no unit is installed there
        "index": "ok",
        "problems": "ok",
        "llm": "ok",
        "sync": "ok",
        "semantic": "ok",
        "assistants": "ok",
    }
    # Each assistant memd reads, as the daemon saw it (none is installed on this HOME).
    assert "Codex CLI: not installed here" in checks["assistants"]["detail"]
    names = [a["name"] for a in checks["assistants"]["data"]["assistants"]]
    assert names[:4] == ["claude-code", "codex", "gemini", "opencode"]
    assert checks["semantic"]["detail"] == (
        'recall by meaning off: disabled in config (semantic.kind = "off")'
    )
    assert checks["sqlite"]["data"]["fts5"] is True
    assert checks["daemon"]["data"]["pid"] == daemon.pid
    assert 5 < checks["daemon"]["data"]["rss_mb"] < 500
    assert checks["index"]["data"]["files"] == st["index"]["files"] > 0
    assert checks["index"]["data"]["stale_files"] == 0
    assert "not installed" in checks["service"]["detail"]
    assert f"pid {daemon.pid}" in checks["service"]["detail"]
    assert checks["service"]["hint"].startswith("`memd service install`")
    assert checks["llm"]["detail"].startswith(
        "the daemon uses offline rules (auto: no Anthropic key, "
    ), checks["llm"]
    assert "ANTHROPIC_API_KEY" in checks["llm"]["hint"]
    assert checks["sync"]["detail"].startswith("cloud sync not configured")


def test_open_permissions_and_problem_files_are_warnings(daemon: DaemonProcess) -> None:
    bad = daemon.memory / "topics" / "latin1.md"
    bad.write_bytes("# Caf\xe9\n".encode("latin-1"))
    wait_for(lambda: daemon.call("status")["problems"], 5)
    os.chmod(daemon.sock.parent, 0o755)
    os.chmod(daemon.sock, 0o666)
    os.chmod(daemon.memory, 0o755)
    os.chmod(daemon.home / "data" / "index.db", 0o644)
    code, checks, raw = run_doctor(daemon.home)
    assert code == 0, raw  # warnings only
    folders = checks["folders"]
    assert folders["status"] == "warn"
    assert f"{daemon.memory} (0o755)" in folders["detail"]
    assert f"{daemon.home / 'data' / 'index.db'} (0o644)" in folders["detail"]
    perm = checks["permissions"]
    assert perm["status"] == "warn"
    assert (
        "is 0o755 (should be 0o700)" in perm["detail"]
        and "is 0o666 (should be 0o600)" in perm["detail"]
    )
    assert perm["hint"] == f"chmod 700 {daemon.sock.parent} && chmod 600 {daemon.sock}"
    prob = checks["problems"]
    assert prob["status"] == "warn" and prob["data"]["count"] == 1
    assert f"{bad}: invalid UTF-8" in prob["detail"]


def test_without_a_daemon_it_fails_and_finds_stale_files(home: Path) -> None:
    d = DaemonProcess(home).start()
    d.stop()
    note = d.memory / "topics" / "later.md"
    note.write_text("# Later\n\n- written while memd was stopped\n")
    proc = forkserver.run(
        [sys.executable, "-m", "memd", "doctor"],
        env=memd_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    daemon_line = next(i for i, line in enumerate(lines) if line.startswith("fail  daemon"))
    assert f"no daemon answers on {d.sock}" in lines[daemon_line]
    assert "fix: start it: `memd service install`" in lines[daemon_line + 1]
    index_line = next(line for line in lines if line.split()[1:2] == ["index"])
    assert index_line.startswith("warn") and f"1 changed since indexed: {note}" in index_line
    assert "`memd reindex`" in proc.stdout
    assert proc.stdout.rstrip().endswith("1 failed, 2 warning(s), 11 ok")


def test_a_damaged_index_fails_with_the_rebuild_hint(home: Path) -> None:
    d = DaemonProcess(home).start()
    for i in range(30):
        d.call("remember", {"text": f"fact number {i} to fill a few pages"})
    d.stop()
    db = home / "data" / "index.db"
    size = db.stat().st_size
    assert size > 4 * 4096
    with open(db, "r+b") as fh:  # trash every page after the schema page
        fh.seek(4096)
        fh.write(b"\xa5" * (size - 4096))
    code, checks, raw = run_doctor(home)
    assert code == 1
    assert checks["index"]["status"] == "fail", raw
    assert "memd reindex --full" in checks["index"]["hint"]


# -- secrets and the cloud ---------------------------------------------------------------------
def test_keys_are_never_printed_and_a_wrong_supabase_key_fails(
    home: Path, supabase: FakePostgrest
) -> None:
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_SECRET, "MEMD_SYNC_BACKEND": "supabase",
           "SUPABASE_URL": supabase.url, "SUPABASE_KEY": SUPABASE_SECRET + "-wrong"}  # fmt: skip
    code, checks, raw = run_doctor(home, **env)
    assert code == 1
    llm = checks["llm"]
    assert llm["status"] == "ok" and llm["data"]["key_source"] == "ANTHROPIC_API_KEY", llm
    assert llm["detail"].startswith(
        "anthropic claude-haiku-4-5 (auto: an Anthropic key is set (ANTHROPIC_API_KEY))"
    )
    assert checks["sync"]["status"] == "fail"
    assert "HTTP 401" in checks["sync"]["detail"] and checks["sync"]["hint"]
    assert SUPABASE_SECRET not in raw and ANTHROPIC_SECRET not in raw

    env["SUPABASE_KEY"] = SUPABASE_SECRET
    code, checks, raw = run_doctor(home, **env)
    assert checks["sync"]["status"] == "ok", raw
    assert checks["sync"]["detail"] == f"supabase {supabase.url}, table memd_files"
    assert SUPABASE_SECRET not in raw and ANTHROPIC_SECRET not in raw


def test_unreachable_postgres_fails_fast_without_the_password(home: Path) -> None:
    port = free_port()
    s = load(home, MEMD_SYNC_BACKEND="postgres",
             MEMD_SYNC_DSN=f"postgresql://memd:{PG_PASSWORD}@127.0.0.1:{port}/memd")  # fmt: skip
    check = check_sync(s, timeout=2)
    assert check.status == "fail"
    assert "unreachable" in check.detail and "Connection refused" in check.detail
    everything = json.dumps(to_builtins(doctor.report([scrub(check, configured_secrets(s))])))
    assert PG_PASSWORD not in everything


def test_secrets_are_scrubbed_from_any_message(home: Path) -> None:
    # A backend whose own error message leaks the DSN: the doctor's last pass removes it.
    dsn = f"postgresql://memd:{PG_PASSWORD}@db.example:5432/memd"
    s = load(home, MEMD_SYNC_BACKEND="postgres", MEMD_SYNC_DSN=dsn)

    class Leaky:
        def check(self) -> str:
            raise RuntimeError(f"cannot use {dsn}")

        def close(self) -> None:
            pass

    checks = doctor.run_checks(s, timeout=1, backend_factory=lambda _s, _t: Leaky())
    sync = next(c for c in checks if c.name == "sync")
    assert sync.status == "fail" and sync.detail == "postgres: cannot use ***"
    assert PG_PASSWORD not in json.dumps(to_builtins(doctor.report(checks)))


def test_sync_misconfiguration_fails_with_a_hint(home: Path) -> None:
    c = check_sync(load(home, MEMD_SYNC_BACKEND="postgres"), timeout=1)
    assert c.status == "fail" and "sync.dsn is empty" in c.detail and "MEMD_SYNC_DSN" in c.hint
    # settings.load refuses unknown backends; a Settings built in code still gets a clear answer.
    c = check_sync(dataclasses.replace(load(home), sync_backend="dropbox"), timeout=1)
    assert c.status == "fail" and "unknown sync.backend 'dropbox'" in c.detail


# -- the verdicts, case by case ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("watches", "instances", "dirs", "status"),
    [
        (8192, 128, 100, "ok"),
        (8192, 128, 5000, "warn"),
        (8192, 128, 8192, "fail"),
        (8192, 4, 10, "warn"),
        (None, None, 100, "ok"),
    ],
)
def test_inotify_limits(watches: int | None, instances: int | None, dirs: int, status: str) -> None:
    c = assess_inotify(watches, instances, dirs)
    assert c.status == status
    if status != "ok":
        assert "fs.inotify.max_user_" in c.hint


def test_inotify_counts_every_watched_folder(tmp_path: Path) -> None:
    for sub in ("a/b/c", "a/d", "e"):
        (tmp_path / "memory" / sub).mkdir(parents=True)
    (tmp_path / "logs").mkdir()
    assert count_dirs([tmp_path / "memory", tmp_path / "logs", tmp_path / "missing"]) == 7


def test_daemon_health_verdicts(daemon: DaemonProcess) -> None:
    st = decode_result(STATUS, daemon.call("status"))
    ok = assess_daemon(st, "", daemon.sock)
    assert [c.status for c in ok] == ["ok", "ok"]
    mode = f"polling for {daemon.memory} (inotify watch limit reached)"
    polling = structs.replace(st, watcher=WatcherStatus(mode=mode))
    watcher = assess_daemon(polling, "", daemon.sock)[1]
    assert watcher.status == "warn" and watcher.detail.startswith("polling for")
    assert "max_user_watches" in watcher.hint
    old = assess_daemon(structs.replace(st, version="0.0.1"), "", daemon.sock)[0]
    assert old.status == "warn" and "runs memd 0.0.1" in old.detail and "restart" in old.hint
    fat = structs.replace(st, daemon=structs.replace(st.daemon, rss_mb=900.0))
    assert assess_daemon(fat, "", daemon.sock)[0].status == "warn"
    daemon.stop(signal.SIGKILL)
    gone = assess_daemon(None, f"no memd daemon is listening on {daemon.sock}", daemon.sock)
    assert [c.status for c in gone] == ["fail"] and "stale socket file" in gone[0].detail


@pytest.mark.parametrize(
    ("report", "status", "words"),
    [
        ({"manager": "systemd", "installed": True, "manager_available": True,
          "active": {"memd.service": "active", "memd.socket": "active"}}, "ok", "memd.service active"),
        ({"manager": "systemd", "installed": True, "manager_available": True,
          "active": {"memd.service": "failed", "memd.socket": "active"}}, "fail", "memd.service failed"),
        ({"manager": "systemd", "installed": True, "manager_available": True,
          "active": {"memd.service": "inactive", "memd.socket": "inactive"}}, "warn", "not running"),
        ({"manager": "systemd", "installed": True, "manager_available": False,
          "detail": "Failed to connect to bus"}, "warn", "not reachable: Failed to connect to bus"),
        ({"manager": "systemd", "installed": False, "manager_available": True}, "warn", "not installed"),
        ({"manager": "launchd", "installed": True, "manager_available": True,
          "active": {"io.memd.daemon": "running"}}, "ok", "io.memd.daemon running"),
        ({"manager": None, "detail": "no systemd on win32"}, "warn", "no systemd on win32"),
    ],
)  # fmt: skip
def test_service_verdicts(report: dict[str, Any], status: str, words: str) -> None:
    c = assess_service(ServiceReport(platform="linux", **report), None)
    assert c.status == status and words in c.detail
    if status != "ok":
        assert c.hint


def test_permission_verdicts(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    os.chmod(run, 0o700)
    sock_path = run / "memd.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        os.chmod(sock_path, 0o600)
        uid = os.getuid()
        assert assess_permissions(run, run.stat(), sock_path, sock_path.stat(), uid).status == "ok"
        other = assess_permissions(run, run.stat(), sock_path, sock_path.stat(), uid + 1)
        assert other.status == "fail" and f"not to you (uid {uid + 1})" in other.detail
    sock_path.unlink()
    sock_path.write_text("not a socket")
    c = assess_permissions(run, run.stat(), sock_path, sock_path.stat(), os.getuid())
    assert c.status == "fail" and "not a socket" in c.detail
    assert stat.S_IMODE(run.stat().st_mode) == 0o700


def test_python_and_sqlite_verdicts() -> None:
    assert check_python((3, 10, 4)).status == "fail"
    assert check_python((3, 11, 0)).status == "ok"
    real = sqlite_features()
    assert assess_sqlite(real).status == "ok"
    no_fts = dataclasses.replace(real, compile_fts5=False, fts5_error="no such module: fts5")
    c = assess_sqlite(no_fts)
    assert c.status == "fail" and "compiled without ENABLE_FTS5" in c.detail and "SQLite" in c.hint
    assert assess_sqlite(dataclasses.replace(real, version="3.22.0")).status == "fail"


def test_a_daemon_whose_status_this_doctor_cannot_read_is_told_to_restart(tmp_path: Path) -> None:
    # A daemon of another version answers `status` without fields this command reads.
    sock_path = tmp_path / "memd.sock"
    with answering_once(sock_path, {"version": "0.0.1", "daemon": {"pid": "one"}}):
        status, why = fetch_status(sock_path, timeout=10)
    assert status is None and "it runs memd 0.0.1" in why
    [c] = assess_daemon(status, why, sock_path)
    assert c.status == "warn" and c.detail == why and "restart the daemon" in c.hint
