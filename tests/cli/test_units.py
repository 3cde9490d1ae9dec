"""Rendered units pass `systemd-analyze verify`; the plist parses; templates do not drift."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memd.cli import units
from memd.cli.service import resolve_executable
from memd.core.errors import ServiceError

REPO = Path(__file__).resolve().parents[2]
PACKAGED = REPO / "memd" / "cli" / "templates"
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def verify(unit_dir: Path, tmp_path: Path) -> list[str]:
    """Run `systemd-analyze verify --user` on memd's units; return its complaints about them."""
    assert ANALYZE is not None
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        **os.environ,
        # --user needs a runtime dir to set up a user manager, even outside a login session.
        "XDG_RUNTIME_DIR": str(runtime),
        # Keep an installed copy of memd's units in the real user dir out of the picture.
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
    }
    proc = subprocess.run(
        [
            ANALYZE,
            "verify",
            "--user",
            "--man=no",
            str(unit_dir / units.SERVICE_UNIT),
            str(unit_dir / units.SOCKET_UNIT),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # verify exits 0 on "Failed to parse …, ignoring" lines, so its output is the real verdict.
    complaints = [line for line in proc.stderr.splitlines() if "memd" in line]
    if proc.returncode != 0:
        complaints.append(f"exit status {proc.returncode}: {proc.stderr.strip()}")
    return complaints


def write_units(
    unit_dir: Path,
    argv: list[str],
    env: dict[str, str] | None = None,
    socket_path: Path | None = None,
    private_tmp: bool = True,
    env_file: Path | None = None,
) -> None:
    unit_dir.mkdir(parents=True, exist_ok=True)
    (unit_dir / units.SERVICE_UNIT).write_text(
        units.render_systemd_service(argv, env, private_tmp=private_tmp, env_file=env_file)
    )
    (unit_dir / units.SOCKET_UNIT).write_text(units.render_systemd_socket(socket_path))


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = []
            continue
        key, _, value = line.partition("=")
        sections[current].append((key, value))
    return sections


def values(text: str, section: str) -> dict[str, str]:
    return dict(parse_unit(text)[section])


def test_top_level_copies_match_packaged_templates() -> None:
    for name, top in units.TOP_LEVEL_COPIES.items():
        packaged = (PACKAGED / name).read_bytes()
        assert (REPO / top).read_bytes() == packaged, f"{top} drifted from {PACKAGED / name}"
        assert units.template_text(name).encode() == packaged


def test_only_known_templates_are_served() -> None:
    with pytest.raises(ValueError):
        units.template_text("../errors.py")


def test_service_unit_settings() -> None:
    text = units.render_systemd_service(["/opt/memd/bin/memd"])
    service = values(text, "Service")
    assert service["Type"] == "notify"
    assert service["NotifyAccess"] == "main"
    assert service["ExecStart"] == "/opt/memd/bin/memd serve"
    assert service["Restart"] == "on-failure"
    assert service["RestartSec"] == "5"
    assert service["WatchdogSec"] == "60"
    assert service["TimeoutStopSec"] == "20"
    assert service["NoNewPrivileges"] == "yes"
    assert service["PrivateTmp"] == "yes"
    assert service["ProtectSystem"] == "full"
    assert "Environment" not in service
    assert values(text, "Install") == {"WantedBy": "default.target"}
    assert "@" not in text


def test_socket_unit_settings() -> None:
    text = units.render_systemd_socket()
    assert values(text, "Socket") == {
        "ListenStream": "%t/memd/memd.sock",
        "SocketMode": "0600",
        "DirectoryMode": "0700",
        "FileDescriptorName": "memd",
    }
    assert values(text, "Install") == {"WantedBy": "sockets.target"}


def test_unit_files_have_no_trailing_comments() -> None:
    for text in (units.template_text(units.SERVICE_UNIT), units.template_text(units.SOCKET_UNIT)):
        for line in text.splitlines():
            if line and not line.startswith("#"):
                assert not re.search(r"\s[#;]", line), line


def test_environment_and_odd_paths_are_escaped() -> None:
    text = units.render_systemd_service(
        ["/opt/my memd/bin/python", "-m", "memd"],
        {"MEMD_HOME": '/srv/100% "memd"', "MEMD_SOCKET": "/srv/s.sock"},
        private_tmp=False,
    )
    service = parse_unit(text)["Service"]
    assert ("ExecStart", '"/opt/my memd/bin/python" -m memd serve') in service
    assert ("Environment", '"MEMD_HOME=/srv/100%% \\"memd\\""') in service
    assert ("Environment", '"MEMD_SOCKET=/srv/s.sock"') in service
    assert ("PrivateTmp", "no") in service


def test_rejects_relative_executables_and_newlines() -> None:
    with pytest.raises(ServiceError):
        units.render_systemd_service(["memd"])
    with pytest.raises(ServiceError):
        units.render_systemd_service(["/usr/bin/memd"], {"MEMD_HOME": "/a\nExecStartPre=/bin/rm"})
    with pytest.raises(ServiceError):
        units.render_systemd_service(["/usr/bin/memd"], {"BAD NAME": "x"})
    with pytest.raises(ServiceError):
        units.render_systemd_socket(Path("relative/memd.sock"))


@needs_analyze
def test_systemd_analyze_verifies_the_rendered_units(tmp_path: Path) -> None:
    # The real command this interpreter would install, so ExecStart points at an existing file.
    write_units(tmp_path / "units", resolve_executable())
    assert verify(tmp_path / "units", tmp_path) == []


@needs_analyze
def test_systemd_analyze_verifies_units_with_environment_and_escaped_paths(tmp_path: Path) -> None:
    # verify checks that ExecStart's program exists, so a quoting or escaping mistake in a path
    # with spaces, % and $ shows up as "not executable".
    odd = tmp_path / "bin dir" / "me%md$x"
    odd.parent.mkdir()
    odd.write_text("#!/bin/sh\nexit 0\n")
    odd.chmod(0o755)
    write_units(
        tmp_path / "units",
        [str(odd), "--flag=100%"],
        env={"MEMD_HOME": str(tmp_path / "home 100%"), "MEMD_SOCKET": "/srv/memd/memd.sock"},
        socket_path=Path("/srv/memd dir/memd%.sock"),
        private_tmp=False,
        env_file=tmp_path / "cfg 100%" / "service.env",
    )
    assert verify(tmp_path / "units", tmp_path) == []


@needs_analyze
def test_systemd_analyze_catches_a_missing_executable(tmp_path: Path) -> None:
    # Proves the check above is not vacuous: verify does report problems in memd's units.
    write_units(tmp_path / "units", [str(tmp_path / "missing" / "memd")])
    complaints = verify(tmp_path / "units", tmp_path)
    assert complaints
    assert any("not executable" in line for line in complaints)


def test_launchd_plist_parses_with_required_keys() -> None:
    argv = ["/Users/u/.venv/bin/memd"]
    log_dir = Path("/Users/u/Library/Logs/memd")
    text = units.render_launchd_plist(argv, log_dir, {"MEMD_HOME": "/Users/u/m & <x>"})
    plist = plistlib.loads(text.encode())
    assert plist["Label"] == units.LAUNCHD_LABEL == "io.memd.daemon"
    assert plist["ProgramArguments"] == ["/Users/u/.venv/bin/memd", "serve"]
    assert all(isinstance(a, str) for a in plist["ProgramArguments"])
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["ProcessType"] == "Background"
    assert plist["StandardOutPath"] == "/Users/u/Library/Logs/memd/memd.out.log"
    assert plist["StandardErrorPath"] == "/Users/u/Library/Logs/memd/memd.err.log"
    env = plist["EnvironmentVariables"]
    assert env["MEMD_HOME"] == "/Users/u/m & <x>"
    assert env["PATH"].split(":")[0] == "/Users/u/.venv/bin"
    assert "/usr/bin" in env["PATH"].split(":")
    assert "Sockets" not in plist
    assert set(plist) == {
        "Label",
        "ProgramArguments",
        "RunAtLoad",
        "KeepAlive",
        "ProcessType",
        "StandardOutPath",
        "StandardErrorPath",
        "EnvironmentVariables",
    }


def test_launchd_plist_module_form_and_explicit_path() -> None:
    argv = ["/opt/py/bin/python3", "-m", "memd"]
    text = units.render_launchd_plist(argv, Path("/var/log/memd"), {"PATH": "/bin"})
    plist = plistlib.loads(text.encode())
    assert plist["ProgramArguments"] == [*argv, "serve"]
    assert plist["EnvironmentVariables"] == {"PATH": "/bin"}


def test_launchd_plist_rejects_relative_paths_and_control_characters() -> None:
    with pytest.raises(ServiceError):
        units.render_launchd_plist(["memd"], Path("/logs"))
    with pytest.raises(ServiceError):
        units.render_launchd_plist(["/bin/memd"], Path("~/Library/Logs/memd"))
    with pytest.raises(ServiceError):
        units.render_launchd_plist(["/bin/memd"], Path("/logs"), {"X": "a\x01b"})


def test_environment_file_is_optional_and_holds_plain_lines() -> None:
    text = units.render_systemd_service(["/usr/bin/memd"], env_file=Path("/h/100%/service.env"))
    assert ("EnvironmentFile", "-/h/100%%/service.env") in parse_unit(text)["Service"]
    body = units.render_environment_file(
        {"ANTHROPIC_API_KEY": "sk-ant-x_1", "B": "a b"}, "# c\nB=old\nC=3\n"
    )
    assert body.splitlines() == ["# c", "C=3", "ANTHROPIC_API_KEY=sk-ant-x_1", "B='a b'"]
    with pytest.raises(ServiceError):
        units.render_environment_file({"A": "it's"})
    with pytest.raises(ServiceError):
        units.render_systemd_service(["/usr/bin/memd"], env_file=Path("relative.env"))
