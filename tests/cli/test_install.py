"""Install plans for Linux and macOS, applied into tmp_path with a recording runner."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from memd.cli import service as install
from memd.cli import units
from memd.cli.service import (
    InstallPlan,
    MakeDir,
    RemoveFile,
    RunCommand,
    WriteFile,
    apply,
    plan_install,
    plan_uninstall,
    resolve_executable,
    service_status,
)
from memd.core.errors import ServiceError
from memd.core.paths import Paths
from memd.core.settings import Settings, load

ALICE = Path("/home/alice")
MEMD = ["/opt/memd/bin/memd"]


def default_settings(home: Path) -> Settings:
    """What platformdirs gives on Linux without MEMD_HOME (built by hand: plans are pure)."""
    data = home / ".local/share/memd"
    return Settings(
        paths=Paths(
            home=None,
            config_file=home / ".config/memd/config.toml",
            memory_root=data / "memory",
            data_dir=data,
            state_dir=home / ".local/state/memd",
            runtime_dir=Path("/run/user/1000/memd"),
            log_dir=home / ".local/state/memd/log",
            cache_dir=home / ".cache/memd",
        )
    )


class Recorder:
    """A `subprocess.run` stand-in that records calls and answers from a table."""

    def __init__(self, answers: dict[str, tuple[int, str, str]] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.kwargs: list[dict[str, Any]] = []
        self.answers = answers or {}

    def __call__(self, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        self.kwargs.append(kwargs)
        for prefix, (code, out, err) in self.answers.items():
            if " ".join(argv).startswith(prefix):
                if code == 127:
                    raise FileNotFoundError(2, "No such file or directory", argv[0])
                return subprocess.CompletedProcess(list(argv), code, out, err)
        return subprocess.CompletedProcess(list(argv), 0, "", "")


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


# --- Linux -------------------------------------------------------------------------------------


def test_linux_plan_writes_units_then_enables_socket_and_service() -> None:
    plan = plan_install(default_settings(ALICE), "linux", ALICE, MEMD, env={})
    unit_dir = ALICE / ".config/systemd/user"
    assert [f.path for f in plan.files] == [unit_dir / "memd.service", unit_dir / "memd.socket"]
    service, socket_unit = (f.content for f in plan.files)
    assert "ExecStart=/opt/memd/bin/memd serve\n" in service
    assert "PrivateTmp=yes\n" in service
    assert "Environment=" not in service
    assert "ListenStream=%t/memd/memd.sock\n" in socket_unit
    assert plan.commands == (
        ("systemctl", "--user", "daemon-reload"),
        ("systemctl", "--user", "try-restart", "memd.socket", "memd.service"),
        ("systemctl", "--user", "enable", "--now", "memd.socket", "memd.service"),
    )
    assert all(isinstance(s, RunCommand) and s.check for s in plan.steps[2:])
    assert any("loginctl enable-linger $USER" in note for note in plan.notes)


def test_linux_plan_respects_xdg_config_home() -> None:
    settings = default_settings(ALICE)
    plan = plan_install(settings, "linux", ALICE, MEMD, env={"XDG_CONFIG_HOME": "/cfg"})
    assert plan.files[0].path == Path("/cfg/systemd/user/memd.service")
    # The XDG spec says a relative value is ignored.
    plan = plan_install(settings, "linux", ALICE, MEMD, env={"XDG_CONFIG_HOME": "cfg"})
    assert plan.files[0].path == ALICE / ".config/systemd/user/memd.service"


def test_memd_home_and_socket_are_carried_into_the_units() -> None:
    settings = load(env={"MEMD_HOME": "/srv/memd-home", "MEMD_SOCKET": "/srv/sock/memd.sock"})
    plan = plan_install(settings, "linux", ALICE, MEMD, env={})
    service, socket_unit = (f.content for f in plan.files)
    assert 'Environment="MEMD_HOME=/srv/memd-home"\n' in service
    assert 'Environment="MEMD_SOCKET=/srv/sock/memd.sock"\n' in service
    assert "ListenStream=/srv/sock/memd.sock\n" in socket_unit
    assert "PrivateTmp=yes\n" in service

    settings = load(env={"MEMD_HOME": "/srv/memd-home"})
    socket_unit = plan_install(settings, "linux", ALICE, MEMD, env={}).files[1].content
    assert "ListenStream=/srv/memd-home/run/memd.sock\n" in socket_unit


def test_memd_home_under_tmp_keeps_the_shared_tmp(tmp_path: Path) -> None:
    settings = load(env={"MEMD_HOME": str(tmp_path / "mh")})
    plan = plan_install(settings, "linux", ALICE, MEMD, env={})
    assert "PrivateTmp=no\n" in plan.files[0].content
    assert any("PrivateTmp=no" in note for note in plan.notes)


def test_module_form_executable_gets_a_note() -> None:
    argv = ["/opt/py/bin/python", "-m", "memd"]
    plan = plan_install(default_settings(ALICE), "linux", ALICE, argv, env={})
    assert "ExecStart=/opt/py/bin/python -m memd serve\n" in plan.files[0].content
    assert any("importable" in note for note in plan.notes)


def test_planning_writes_nothing_and_describes_everything(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)  # the autouse _isolate_env fixture may have made it
    plan = plan_install(default_settings(home), "linux", home, MEMD, env={})
    assert files_under(tmp_path) == []
    text = plan.describe()
    assert f"write {home}/.config/systemd/user/memd.service (mode 644)" in text
    assert "    | ExecStart=/opt/memd/bin/memd serve" in text
    assert "run systemctl --user daemon-reload" in text
    assert "run systemctl --user enable --now memd.socket memd.service" in text
    assert "note: " in text
    assert "| ExecStart" not in plan.describe(contents=False)
    data = json.loads(msgspec.json.encode(plan.view()))
    assert data["action"] == "install"
    assert data["steps"][2] == {"run": ["systemctl", "--user", "daemon-reload"], "check": True}


def test_apply_linux_install_then_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = default_settings(home)
    runner = Recorder()
    plan = plan_install(settings, "linux", home, MEMD, env={})
    result = apply(plan, runner=runner)

    unit_dir = home / ".config/systemd/user"
    assert files_under(tmp_path) == [unit_dir / "memd.service", unit_dir / "memd.socket"]
    for step in plan.files:
        assert step.path.read_text() == step.content
        assert step.path.stat().st_mode & 0o777 == 0o644
    assert result.written == (unit_dir / "memd.service", unit_dir / "memd.socket")
    assert [tuple(c) for c in runner.calls] == list(plan.commands)
    assert all(kw["capture_output"] and kw["text"] and "timeout" in kw for kw in runner.kwargs)
    assert result.warnings == ()

    runner = Recorder({"systemctl --user disable": (1, "", "Unit memd.service not loaded.")})
    result = apply(plan_uninstall(settings, "linux", home, env={}), runner=runner)
    assert files_under(tmp_path) == []
    assert result.removed == (unit_dir / "memd.service", unit_dir / "memd.socket")
    assert runner.calls[0] == [
        "systemctl",
        "--user",
        "disable",
        "--now",
        "memd.service",
        "memd.socket",
    ]
    assert runner.calls[1] == ["systemctl", "--user", "daemon-reload"]
    assert [w.argv[2] for w in result.warnings] == ["disable"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_applied_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load(env={"MEMD_HOME": str(tmp_path / "memd home")})
    apply(plan_install(settings, "linux", home, resolve_executable(), env={}), runner=Recorder())
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    unit_dir = home / ".config/systemd/user"
    proc = subprocess.run(
        ["systemd-analyze", "verify", "--user", "--man=no"]
        + [str(unit_dir / name) for name in ("memd.service", "memd.socket")],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(home / "x")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "memd" in line] == []


def test_apply_stops_on_a_failing_command_with_a_hint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    runner = Recorder({"systemctl --user daemon-reload": (1, "", "Failed to connect to bus")})
    plan = plan_install(default_settings(home), "linux", home, MEMD, env={})
    with pytest.raises(ServiceError) as err:
        apply(plan, runner=runner)
    assert "Failed to connect to bus" in str(err.value)
    assert "loginctl enable-linger" in err.value.hint
    assert len(runner.calls) == 1
    assert (home / ".config/systemd/user/memd.service").exists()


def test_apply_without_systemctl_fails_install_but_not_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = default_settings(home)
    missing = Recorder({"systemctl": (127, "", "")})
    with pytest.raises(ServiceError, match="systemctl not found"):
        apply(plan_install(settings, "linux", home, MEMD, env={}), runner=missing)
    result = apply(plan_uninstall(settings, "linux", home, env={}), runner=missing)
    assert files_under(tmp_path) == []
    assert len(result.warnings) == 3


# --- macOS -------------------------------------------------------------------------------------


def test_darwin_plan_and_apply(tmp_path: Path) -> None:
    home = tmp_path / "Users" / "alice"
    settings = default_settings(home)
    plan = plan_install(settings, "darwin", home, MEMD, env={}, uid=501)
    plist_path = home / "Library/LaunchAgents/io.memd.daemon.plist"
    log_dir = home / "Library/Logs/memd"
    assert plan.steps == (
        RunCommand(("launchctl", "bootout", "gui/501/io.memd.daemon"), check=False),
        MakeDir(log_dir),
        WriteFile(plist_path, plan.files[0].content),
        RunCommand(("launchctl", "bootstrap", "gui/501", str(plist_path))),
    )
    assert files_under(tmp_path) == []

    runner = Recorder({"launchctl bootout": (113, "", "Could not find service")})
    result = apply(plan, runner=runner)
    assert log_dir.is_dir()
    plist = plistlib.loads(plist_path.read_bytes())
    assert plist["ProgramArguments"] == [*MEMD, "serve"]
    assert plist["StandardErrorPath"] == str(log_dir / "memd.err.log")
    assert [c[:2] for c in runner.calls] == [["launchctl", "bootout"], ["launchctl", "bootstrap"]]
    assert len(result.warnings) == 1

    uninstall = plan_uninstall(settings, "darwin", home, env={}, uid=501)
    assert uninstall.steps == (
        RunCommand(("launchctl", "bootout", "gui/501/io.memd.daemon"), check=False),
        RemoveFile(plist_path),
    )
    apply(uninstall, runner=Recorder())
    assert not plist_path.exists()


def test_darwin_with_memd_home_logs_under_it() -> None:
    settings = load(env={"MEMD_HOME": "/Users/alice/memd"})
    plan = plan_install(settings, "darwin", Path("/Users/alice"), MEMD, env={}, uid=501)
    plist = plistlib.loads(plan.files[0].content.encode())
    assert plist["StandardOutPath"] == "/Users/alice/memd/log/memd.out.log"
    assert plist["EnvironmentVariables"]["MEMD_HOME"] == "/Users/alice/memd"


def test_unsupported_platform_is_a_clear_error() -> None:
    with pytest.raises(ServiceError, match="win32"):
        plan_install(default_settings(ALICE), "win32", ALICE, MEMD, env={})


# --- status ------------------------------------------------------------------------------------


def test_status_with_systemd_answering(tmp_path: Path) -> None:
    home = tmp_path / "home"
    apply(plan_install(default_settings(home), "linux", home, MEMD, env={}), runner=Recorder())
    runner = Recorder({"systemctl --user is-active": (3, "active\ninactive\n", "")})
    report = service_status(default_settings(home), "linux", home, env={}, runner=runner)
    assert report.installed is True
    assert report.manager == "systemd"
    assert report.manager_available is True
    assert report.active == {"memd.service": "active", "memd.socket": "inactive"}


def test_status_without_systemctl_does_not_raise(tmp_path: Path) -> None:
    runner = Recorder({"systemctl": (127, "", "")})
    report = service_status(default_settings(tmp_path), "linux", tmp_path, env={}, runner=runner)
    assert report.installed is False
    assert report.manager_available is False
    assert report.active is None
    assert "not available" in report.detail


def test_status_with_an_unreachable_user_manager(tmp_path: Path) -> None:
    runner = Recorder({"systemctl": (1, "", "Failed to connect to bus: No medium found")})
    report = service_status(default_settings(tmp_path), "linux", tmp_path, env={}, runner=runner)
    assert report.manager_available is False
    assert "Failed to connect to bus" in report.detail


def test_status_on_this_machine_never_raises(tmp_path: Path) -> None:
    report = service_status(default_settings(tmp_path), sys.platform, tmp_path, env={})
    assert report.installed is False


def test_status_darwin() -> None:
    home = Path("/Users/alice")
    loaded = Recorder(
        {"launchctl print": (0, "gui/501/io.memd.daemon = {\n\tstate = running\n", "")}
    )
    report = service_status(default_settings(home), "darwin", home, uid=501, runner=loaded)
    assert loaded.calls == [["launchctl", "print", "gui/501/io.memd.daemon"]]
    assert report.active == {"io.memd.daemon": "running"}
    gone = Recorder({"launchctl print": (113, "", "Could not find service")})
    report = service_status(default_settings(home), "darwin", home, uid=501, runner=gone)
    assert report.active == {"io.memd.daemon": "not loaded"}


# --- the executable ----------------------------------------------------------------------------


def test_resolve_executable_prefers_the_console_script(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.symlink_to(sys.executable)
    assert resolve_executable(str(python)) == [str(python), "-m", "memd"]
    script = bin_dir / "memd"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert resolve_executable(str(python)) == [str(script)]


def test_resolve_executable_is_absolute_and_keeps_venv_symlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    assert resolve_executable("bin/python") == [str(tmp_path / "bin" / "python"), "-m", "memd"]
    assert os.path.isabs(resolve_executable()[0])
    with pytest.raises(ServiceError):
        resolve_executable("")


def test_plan_is_a_plain_value() -> None:
    plan = plan_install(default_settings(ALICE), "linux", ALICE, MEMD, env={})
    assert isinstance(plan, InstallPlan)
    assert plan == plan_install(default_settings(ALICE), "linux", ALICE, MEMD, env={})
    assert install.SYSTEMCTL == ("systemctl", "--user")
    assert units.SERVICE_UNIT in {p.name for p in (f.path for f in plan.files)}
