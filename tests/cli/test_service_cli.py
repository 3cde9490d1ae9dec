"""`memd service install|uninstall|status` as a user runs them.

There is no systemd user session in a test run, so `systemctl` is a script on PATH that
records its arguments and answers `is-active` the way systemd does; everything else (the
rendered units, the files written and removed, the order of the commands) is real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import forkserver
from tests.utils import memd_env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="systemd is Linux only"
)

FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "$SYSTEMCTL_LOG"
if [ -n "$SYSTEMCTL_FAIL" ]; then
    echo "Failed to connect to bus: No medium found" >&2
    exit 1
fi
case "$2" in
    is-active) echo "$SYSTEMCTL_STATE"; echo active ;;
esac
exit 0
"""


def memd(
    home: Path, user_home: Path, *args: str, bin_dir: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    full = memd_env(home, HOME=str(user_home), **env)
    full.pop("XDG_CONFIG_HOME", None)
    if bin_dir is not None:
        full["PATH"] = f"{bin_dir}{os.pathsep}{full['PATH']}"
        full["SYSTEMCTL_LOG"] = str(bin_dir / "calls.log")
    return forkserver.run(
        [sys.executable, "-m", "memd", *args], env=full, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def fake_systemctl(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "systemctl"
    script.write_text(FAKE_SYSTEMCTL)
    script.chmod(0o755)
    return bin_dir


def test_dry_run_prints_the_plan_and_touches_nothing(home: Path, tmp_path: Path) -> None:
    user = tmp_path / "u"
    user.mkdir()
    r = memd(home, user, "service", "install", "--dry-run")
    assert r.returncode == 0, r.stderr
    unit_dir = user / ".config" / "systemd" / "user"
    assert f"write {unit_dir / 'memd.service'} (mode 644)" in r.stdout
    assert "    | Type=notify" in r.stdout
    assert f'    | Environment="MEMD_HOME={home}"' in r.stdout
    assert "run systemctl --user enable --now memd.socket memd.service" in r.stdout
    assert r.stdout.rstrip().endswith("(dry run: nothing changed)")
    assert not unit_dir.exists()

    r = memd(home, user, "service", "uninstall", "--dry-run", "--json")
    plan = json.loads(r.stdout)
    assert plan["dry_run"] is True and plan["action"] == "uninstall"
    assert {"remove": str(unit_dir / "memd.socket")} in plan["steps"]


def test_install_status_uninstall(home: Path, tmp_path: Path, fake_systemctl: Path) -> None:
    user = tmp_path / "u"
    user.mkdir()
    unit_dir = user / ".config" / "systemd" / "user"
    r = memd(home, user, "service", "install", bin_dir=fake_systemctl)
    assert r.returncode == 0, r.stderr
    assert f"wrote {unit_dir / 'memd.service'}" in r.stdout
    assert "ran systemctl --user daemon-reload: ok" in r.stdout
    assert "note: user services stop when you log out" in r.stdout
    service = (unit_dir / "memd.service").read_text()
    assert f"ExecStart={Path(sys.executable).parent}" in service and "serve" in service
    assert (unit_dir / "memd.socket").exists()
    calls = (fake_systemctl / "calls.log").read_text().splitlines()
    assert calls == [
        "--user daemon-reload",
        "--user try-restart memd.socket memd.service",
        "--user enable --now memd.socket memd.service",
    ]

    r = memd(
        home, user, "service", "status", "--json", bin_dir=fake_systemctl, SYSTEMCTL_STATE="active"
    )
    st = json.loads(r.stdout)
    assert st["installed"] is True
    assert st["active"] == {"memd.service": "active", "memd.socket": "active"}
    r = memd(home, user, "doctor", "--json", bin_dir=fake_systemctl, SYSTEMCTL_STATE="failed")
    service_check = next(c for c in json.loads(r.stdout)["checks"] if c["name"] == "service")
    assert (
        service_check["status"] == "fail"
        and "journalctl --user -u memd.service" in service_check["hint"]
    )

    r = memd(home, user, "service", "uninstall", bin_dir=fake_systemctl)
    assert r.returncode == 0, r.stderr
    assert not (unit_dir / "memd.service").exists() and not (unit_dir / "memd.socket").exists()
    assert (
        "--user disable --now memd.service memd.socket"
        in (fake_systemctl / "calls.log").read_text()
    )
    r = memd(home, user, "service", "status", bin_dir=fake_systemctl, SYSTEMCTL_STATE="inactive")
    assert r.stdout.startswith("systemd: installed no;")


def test_install_without_a_user_session_explains(
    home: Path, tmp_path: Path, fake_systemctl: Path
) -> None:
    user = tmp_path / "u"
    user.mkdir()
    r = memd(home, user, "service", "install", bin_dir=fake_systemctl, SYSTEMCTL_FAIL="1")
    assert r.returncode == 1
    assert "`systemctl --user daemon-reload` failed: Failed to connect to bus" in r.stderr
    assert "hint: no systemd user session is reachable" in r.stderr and "enable-linger" in r.stderr


SECRET = "sk-ant-api03-" + "ServiceEnvNeverShown" * 2


def test_install_env_keeps_the_key_in_a_file_only_the_user_reads(
    home: Path, tmp_path: Path, fake_systemctl: Path
) -> None:
    user = tmp_path / "u"
    user.mkdir()
    unit_dir = user / ".config" / "systemd" / "user"
    env_file = home / "service.env"
    r = memd(home, user, "service", "install", "--dry-run")
    assert "memd service install --env ANTHROPIC_API_KEY" in r.stdout  # says where a key goes
    assert f"    | EnvironmentFile=-{env_file}" in r.stdout

    dry = memd(home, user, "service", "install", "--env", "ANTHROPIC_API_KEY", "--dry-run",
               ANTHROPIC_API_KEY=SECRET)  # fmt: skip
    assert (
        f"write {env_file} (mode 600)" in dry.stdout
        and "(not shown: it holds secrets)" in dry.stdout
    )
    as_json = memd(home, user, "service", "install", "--env", "ANTHROPIC_API_KEY", "--dry-run",
                   "--json", ANTHROPIC_API_KEY=SECRET)  # fmt: skip
    assert {"write": str(env_file), "mode": 0o600, "secret": True} in json.loads(as_json.stdout)[
        "steps"
    ]
    assert SECRET not in dry.stdout + dry.stderr + as_json.stdout and not env_file.exists()

    r = memd(home, user, "service", "install", "--env", "ANTHROPIC_API_KEY",
             bin_dir=fake_systemctl, ANTHROPIC_API_KEY=SECRET)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert SECRET not in r.stdout + r.stderr
    assert oct(env_file.stat().st_mode & 0o777) == "0o600"
    assert f"ANTHROPIC_API_KEY={SECRET}" in env_file.read_text().splitlines()
    assert f"EnvironmentFile=-{env_file}" in (unit_dir / "memd.service").read_text()

    # Loosened by hand, another line added: a reinstall keeps the lines and tightens the mode.
    env_file.write_text(env_file.read_text() + "OTHER=1\n")
    env_file.chmod(0o644)
    r = memd(home, user, "service", "install", bin_dir=fake_systemctl)
    assert r.returncode == 0, r.stderr
    assert oct(env_file.stat().st_mode & 0o777) == "0o600"
    assert {f"ANTHROPIC_API_KEY={SECRET}", "OTHER=1"} <= set(env_file.read_text().splitlines())

    missing = memd(
        home, user, "service", "install", "--env", "NOT_SET_ANYWHERE", bin_dir=fake_systemctl
    )
    assert missing.returncode == 1 and "NOT_SET_ANYWHERE is not set in this shell" in missing.stderr
