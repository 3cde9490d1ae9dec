"""Install, uninstall and inspect memd as a per-user service (systemd on Linux, launchd on macOS).

Planning is pure: `plan_install` and `plan_uninstall` return an `InstallPlan` (files to write
with their contents, commands to run, notes for the user) that ``--dry-run`` prints, and
`apply` carries it out. `service_status` reports and never raises when the service manager is
missing.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memd.cli.service_view import (
    MakeDirView,
    PlanView,
    RemoveView,
    RunView,
    StepView,
    WriteView,
)
from memd.cli.units import (
    LAUNCHD_LABEL,
    PLIST_NAME,
    SERVICE_UNIT,
    SOCKET_UNIT,
    render_environment_file,
    render_launchd_plist,
    render_systemd_service,
    render_systemd_socket,
)
from memd.core.errors import ServiceError
from memd.core.fsio import atomic_write
from memd.core.settings import Settings

Runner = Callable[..., "subprocess.CompletedProcess[str]"]

SYSTEMCTL = ("systemctl", "--user")
# `enable --now` waits for READY=1, so give a first start (opening the index) time to finish.
COMMAND_TIMEOUT_S = 120.0
STATUS_TIMEOUT_S = 10.0
_SHARED_TMP_ROOTS = ("/tmp", "/var/tmp")


@dataclass(frozen=True, slots=True)
class WriteFile:
    """Write `content` to `path` atomically, creating parent folders.

    A `secret` file's content (an API key) is never shown by ``--dry-run`` or ``--json``.
    """

    path: Path
    content: str
    mode: int = 0o644
    secret: bool = False


@dataclass(frozen=True, slots=True)
class MakeDir:
    """Create the folder `path` (and its parents) when missing."""

    path: Path
    mode: int = 0o700


@dataclass(frozen=True, slots=True)
class RemoveFile:
    """Remove `path`; a missing file is not an error."""

    path: Path


@dataclass(frozen=True, slots=True)
class RunCommand:
    """Run `argv`; when `check` is False a failure is reported but does not stop the plan."""

    argv: tuple[str, ...]
    check: bool = True


Step = WriteFile | MakeDir | RemoveFile | RunCommand


@dataclass(frozen=True, slots=True)
class InstallPlan:
    """What installing or uninstalling the service does, in order."""

    action: Literal["install", "uninstall"]
    platform: str
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[WriteFile, ...]:
        return tuple(s for s in self.steps if isinstance(s, WriteFile))

    @property
    def commands(self) -> tuple[tuple[str, ...], ...]:
        return tuple(s.argv for s in self.steps if isinstance(s, RunCommand))

    def describe(self, contents: bool = True) -> str:
        """The plan as text for ``--dry-run``: each step, file contents when `contents`, notes."""
        out = [f"memd service {self.action} ({self.platform}):"]
        for step in self.steps:
            if isinstance(step, WriteFile):
                out.append(f"  write {step.path} (mode {step.mode:o})")
                if contents and step.secret:
                    out.append("    | (not shown: it holds secrets)")
                elif contents:
                    out.extend(f"    | {line}" for line in step.content.splitlines())
            elif isinstance(step, MakeDir):
                out.append(f"  mkdir {step.path}")
            elif isinstance(step, RemoveFile):
                out.append(f"  remove {step.path}")
            else:
                suffix = "" if step.check else "  (failure ignored)"
                out.append(f"  run {_shell_join(step.argv)}{suffix}")
        out.extend(f"note: {note}" for note in self.notes)
        return "\n".join(out)

    def view(self) -> PlanView:
        """The plan as `--json` shows it (a secret file's content never shown)."""
        steps: list[StepView] = []
        for step in self.steps:
            if isinstance(step, WriteFile) and step.secret:
                steps.append(WriteView(write=str(step.path), mode=step.mode, secret=True))
            elif isinstance(step, WriteFile):
                steps.append(WriteView(write=str(step.path), mode=step.mode, content=step.content))
            elif isinstance(step, MakeDir):
                steps.append(MakeDirView(mkdir=str(step.path), mode=step.mode))
            elif isinstance(step, RemoveFile):
                steps.append(RemoveView(remove=str(step.path)))
            else:
                steps.append(RunView(run=list(step.argv), check=step.check))
        return PlanView(action=self.action, platform=self.platform, steps=steps,
                        notes=list(self.notes))  # fmt: skip


@dataclass(frozen=True, slots=True)
class CommandResult:
    """The outcome of one command `apply` ran."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    checked: bool = True

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What `apply` did."""

    written: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()
    commands: tuple[CommandResult, ...] = ()

    @property
    def warnings(self) -> tuple[CommandResult, ...]:
        """Commands that failed without stopping the plan (e.g. disabling a unit never enabled)."""
        return tuple(c for c in self.commands if not c.ok)


def _shell_join(argv: Sequence[str]) -> str:
    return shlex.join(argv)


def resolve_executable(python: str | None = None) -> list[str]:
    """The absolute command that starts memd, without a subcommand.

    The ``memd`` console script next to the interpreter (a venv's ``bin/``) when it exists,
    else ``[python, "-m", "memd"]``. The interpreter path is kept as given, not resolved: a venv's
    ``bin/python`` is a symlink, and following it would leave the venv.
    """
    python = python if python is not None else sys.executable
    if not python:
        raise ServiceError(
            "cannot tell which Python runs memd (sys.executable is empty)",
            hint="run `memd service install` from the installed memd command",
        )
    interpreter = os.path.abspath(python)
    script = os.path.join(os.path.dirname(interpreter), "memd")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [interpreter, "-m", "memd"]


def systemd_unit_dir(home: Path, env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/systemd/user``, or ``~/.config/systemd/user``."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config"
    return base / "systemd" / "user"


def launch_agents_dir(home: Path) -> Path:
    """``~/Library/LaunchAgents``."""
    return home / "Library" / "LaunchAgents"


def service_env_file(settings: Settings) -> Path:
    """The service's environment file (secrets such as ANTHROPIC_API_KEY), beside the settings."""
    return settings.paths.config_file.parent / "service.env"


def _env_values(names: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    missing = [n for n in names if not env.get(n)]
    if missing:
        raise ServiceError(
            f"--env {missing[0]}: {missing[0]} is not set in this shell",
            hint=f"export {missing[0]}=… first, or write it into the service's environment file",
        )
    return {n: env[n] for n in names}


def _env_file_step(path: Path, values: Mapping[str, str]) -> WriteFile | None:
    """Write the environment file when there are values to add, or to make it 0600 again."""
    try:
        current = path.read_text(encoding="utf-8")
        loose = bool(path.stat().st_mode & 0o077)
    except FileNotFoundError:
        current, loose = "", False
    except OSError as exc:
        raise ServiceError(f"cannot read {path}: {exc}") from exc
    if not values and not loose:
        return None
    text = render_environment_file(values, current) if values else current
    return WriteFile(path, text, mode=0o600, secret=True)


def _key_note(path: Path | None, settings: Settings, passed: Sequence[str]) -> str:
    if passed:
        return f"{', '.join(passed)} stored for the service only (not shown)" + (
            f" in {path} (mode 600)" if path else " in its agent file (mode 600)"
        )
    where = f"{path} (ANTHROPIC_API_KEY=…, mode 600)" if path else "the agent's environment"
    return (
        "the service does not see this shell's variables: to give it an Anthropic key, run "
        f"`memd service install --env ANTHROPIC_API_KEY`, or put it in {where} or in "
        f"extract.api_key of {settings.paths.config_file}; then restart memd"
    )


def _moves_socket(settings: Settings) -> bool:
    # Otherwise the socket is %t/memd/memd.sock, whatever XDG_RUNTIME_DIR this shell has.
    return settings.paths.home is not None or bool(settings.server_socket)


def _memd_folders(settings: Settings) -> list[Path]:
    folders = [
        settings.paths.data_dir,
        settings.paths.state_dir,
        settings.paths.log_dir,
        settings.memory_dir,
        settings.db_path,
    ]
    folders += [Path(w).expanduser() for w in settings.memory_workspaces]
    if settings.paths.home is not None:
        folders.append(settings.paths.home)
    if _moves_socket(settings):
        folders += [settings.paths.runtime_dir, settings.socket_path]
    return folders


def _under_shared_tmp(path: Path) -> bool:
    # PrivateTmp= replaces exactly these two folders; TMPDIR elsewhere is unaffected.
    text = os.path.abspath(path)
    return any(text == root or text.startswith(root + "/") for root in _SHARED_TMP_ROOTS)


def _check_platform(platform: str) -> str:
    if platform.startswith("linux"):
        return "linux"
    if platform == "darwin":
        return "darwin"
    raise ServiceError(
        f"memd service install supports Linux (systemd) and macOS (launchd), not {platform}",
        hint="run `memd serve` from your own process supervisor instead",
    )


def plan_install(
    settings: Settings,
    platform: str = sys.platform,
    home: Path | None = None,
    executable: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    uid: int | None = None,
    pass_env: Sequence[str] = (),
) -> InstallPlan:
    """Plan installing memd as a user service; nothing is touched.

    `executable` is the absolute command without subcommand (default `resolve_executable()`),
    `env` supplies ``XDG_CONFIG_HOME`` and the variables named in `pass_env` (default
    ``os.environ``), `uid` the launchd domain (default the current uid). When MEMD_HOME,
    MEMD_SOCKET or a non-default config file are in effect, the service gets the same ones so
    it serves the same memory as this shell. `pass_env` names secrets (ANTHROPIC_API_KEY) to
    copy from `env` into a file only the user can read: systemd's ``EnvironmentFile=``
    (`service_env_file`), or the launchd agent written with mode 0600.
    """
    kind = _check_platform(platform)
    home = home if home is not None else Path.home()
    env = os.environ if env is None else env
    argv = list(executable) if executable is not None else resolve_executable()
    unit_env = settings.location_env()
    secrets = _env_values(pass_env, env)
    notes: list[str] = []
    if argv[1:] == ["-m", "memd"]:
        notes.append(
            f"the service runs `{_shell_join(argv)}`: memd must stay importable by that "
            "interpreter (installed into it, not only a source checkout)"
        )
    if kind == "linux":
        unit_dir = systemd_unit_dir(home, env)
        shared_tmp = [p for p in _memd_folders(settings) if _under_shared_tmp(p)]
        if shared_tmp:
            notes.append(
                f"{shared_tmp[0]} is under a temporary folder, so the unit keeps the shared /tmp "
                "(PrivateTmp=no)"
            )
        env_file = service_env_file(settings)
        steps: list[Step] = [
            WriteFile(
                unit_dir / SERVICE_UNIT,
                render_systemd_service(
                    argv, unit_env, private_tmp=not shared_tmp, env_file=env_file.absolute()
                ),
            ),
            WriteFile(
                unit_dir / SOCKET_UNIT,
                render_systemd_socket(
                    settings.socket_path.absolute() if _moves_socket(settings) else None
                ),
            ),
            RunCommand((*SYSTEMCTL, "daemon-reload")),
            # A reinstall must restart a running daemon to pick up the new units; no-op otherwise.
            RunCommand((*SYSTEMCTL, "try-restart", SOCKET_UNIT, SERVICE_UNIT)),
            # Both: the socket so clients can connect early, the service so watchers and jobs run
            # from login on instead of waiting for the first client.
            RunCommand((*SYSTEMCTL, "enable", "--now", SOCKET_UNIT, SERVICE_UNIT)),
        ]
        env_step = _env_file_step(env_file, secrets)
        if env_step is not None:
            steps.insert(2, env_step)  # before the units are loaded and the service restarted
        notes.append(
            "user services stop when you log out; to keep memd running: loginctl enable-linger $USER"
        )
        notes.append("logs: journalctl --user -u memd.service")
        notes.append(_key_note(env_file, settings, list(secrets)))
        return InstallPlan("install", kind, tuple(steps), tuple(notes))

    uid = os.getuid() if uid is None else uid
    plist = launch_agents_dir(home) / PLIST_NAME
    # With MEMD_HOME everything, logs included, stays under it.
    if settings.paths.home is not None:
        log_dir = settings.paths.log_dir
    else:
        log_dir = home / "Library" / "Logs" / "memd"
    steps = [
        # bootstrap refuses a label that is already loaded, so a reinstall unloads it first.
        RunCommand(("launchctl", "bootout", f"gui/{uid}/{LAUNCHD_LABEL}"), check=False),
        MakeDir(log_dir),
        # launchd has no environment file: secrets go in the agent, which only the user reads.
        WriteFile(
            plist,
            render_launchd_plist(argv, log_dir, {**unit_env, **secrets}),
            mode=0o600 if secrets else 0o644,
            secret=bool(secrets),
        ),
        RunCommand(("launchctl", "bootstrap", f"gui/{uid}", str(plist))),
    ]
    notes.append(f"logs: {log_dir}/memd.err.log")
    notes.append(_key_note(None, settings, list(secrets)))
    notes.append("launchd has no readiness signal: clients retry connecting for a few seconds")
    return InstallPlan("install", kind, tuple(steps), tuple(notes))


def plan_uninstall(
    settings: Settings,
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    uid: int | None = None,
) -> InstallPlan:
    """Plan stopping, disabling and removing the user service; nothing is touched.

    Stopping may fail when the service was never started, so those commands do not stop the plan.
    memd's data, memory tree and settings are left alone.
    """
    kind = _check_platform(platform)
    home = home if home is not None else Path.home()
    env = os.environ if env is None else env
    if kind == "linux":
        unit_dir = systemd_unit_dir(home, env)
        steps: list[Step] = [
            RunCommand((*SYSTEMCTL, "disable", "--now", SERVICE_UNIT, SOCKET_UNIT), check=False),
            RemoveFile(unit_dir / SERVICE_UNIT),
            RemoveFile(unit_dir / SOCKET_UNIT),
            RunCommand((*SYSTEMCTL, "daemon-reload"), check=False),
            RunCommand((*SYSTEMCTL, "reset-failed", SERVICE_UNIT, SOCKET_UNIT), check=False),
        ]
    else:
        uid = os.getuid() if uid is None else uid
        steps = [
            RunCommand(("launchctl", "bootout", f"gui/{uid}/{LAUNCHD_LABEL}"), check=False),
            RemoveFile(launch_agents_dir(home) / PLIST_NAME),
        ]
    notes = (f"memory, index and settings are kept (memory: {settings.memory_dir})",)
    return InstallPlan("uninstall", kind, tuple(steps), notes)


def _command_hint(argv: Sequence[str], stderr: str) -> str:
    if argv[0] == "systemctl" and ("bus" in stderr.lower() or "XDG_RUNTIME_DIR" in stderr):
        return (
            "no systemd user session is reachable; run this from a login session (not sudo/su), "
            "or enable lingering: loginctl enable-linger $USER"
        )
    if argv[0] == "systemctl":
        return "see: systemctl --user status memd.service and journalctl --user -u memd.service"
    return f"see: launchctl print gui/{os.getuid()}/{LAUNCHD_LABEL}"


def apply(plan: InstallPlan, runner: Runner = subprocess.run) -> ApplyResult:
    """Carry out `plan` step by step.

    `runner` is called like `subprocess.run` (``capture_output=True, text=True, check=False``,
    ``timeout=``). A failing command with ``check=True`` raises `ServiceError` carrying its
    stderr; files written before it stay written. Other failures are returned as warnings.
    """
    written: list[Path] = []
    removed: list[Path] = []
    results: list[CommandResult] = []
    for step in plan.steps:
        try:
            if isinstance(step, WriteFile):
                atomic_write(step.path, step.content, mode=step.mode)
                written.append(step.path)
            elif isinstance(step, MakeDir):
                step.path.mkdir(parents=True, exist_ok=True, mode=step.mode)
            elif isinstance(step, RemoveFile):
                if step.path.exists() or step.path.is_symlink():
                    step.path.unlink()
                    removed.append(step.path)
            else:
                results.append(_run(step, runner))
        except OSError as exc:
            raise ServiceError(f"memd service {plan.action}: {exc}") from exc
    return ApplyResult(tuple(written), tuple(removed), tuple(results))


def _run(step: RunCommand, runner: Runner) -> CommandResult:
    cmd = _shell_join(step.argv)
    try:
        proc = runner(
            list(step.argv), capture_output=True, text=True, check=False, timeout=COMMAND_TIMEOUT_S
        )
    except FileNotFoundError as exc:
        if step.check:
            raise ServiceError(
                f"{step.argv[0]} not found; cannot run `{cmd}`",
                hint="memd service needs systemd (Linux) or launchd (macOS)",
            ) from exc
        return CommandResult(step.argv, 127, "", str(exc), checked=False)
    except subprocess.TimeoutExpired as exc:
        raise ServiceError(
            f"`{cmd}` did not finish within {COMMAND_TIMEOUT_S:.0f} s",
            hint=_command_hint(step.argv, ""),
        ) from exc
    result = CommandResult(
        step.argv, proc.returncode, proc.stdout or "", proc.stderr or "", checked=step.check
    )
    if step.check and not result.ok:
        detail = result.stderr.strip() or result.stdout.strip() or f"exit status {proc.returncode}"
        raise ServiceError(f"`{cmd}` failed: {detail}", hint=_command_hint(step.argv, detail))
    return result


def _probe(argv: Sequence[str], runner: Runner) -> tuple[int, str, str] | None:
    try:
        proc = runner(
            list(argv), capture_output=True, text=True, check=False, timeout=STATUS_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.returncode, proc.stdout or "", proc.stderr or ""


@dataclass(slots=True)
class ServiceReport:
    """The service as installed and as its manager sees it (`memd service status`): `files`
    maps each service file to whether it exists, `active` each unit or label to its state
    (None: the manager could not be asked), `detail` why the manager could not be asked."""

    platform: str
    manager: str | None = None
    files: dict[str, bool] = field(default_factory=dict)
    installed: bool = False
    manager_available: bool = False
    active: dict[str, str] | None = None
    detail: str = ""
    socket: str = ""


def service_status(
    settings: Settings,
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    uid: int | None = None,
    runner: Runner = subprocess.run,
) -> ServiceReport:
    """Whether the service files are installed and what the service manager says about them.

    Never raises for a missing or unreachable service manager: ``manager_available`` is False
    and ``detail`` says why.
    """
    home = home if home is not None else Path.home()
    env = os.environ if env is None else env
    report = ServiceReport(platform=platform, socket=str(settings.socket_path))
    try:
        kind = _check_platform(platform)
    except ServiceError as exc:
        report.detail = str(exc)
        return report
    if kind == "linux":
        report.manager = "systemd"
        unit_dir = systemd_unit_dir(home, env)
        files = [unit_dir / SERVICE_UNIT, unit_dir / SOCKET_UNIT]
        units = [SERVICE_UNIT, SOCKET_UNIT]
        probe = _probe((*SYSTEMCTL, "is-active", *units), runner)
    else:
        report.manager = "launchd"
        uid = os.getuid() if uid is None else uid
        files = [launch_agents_dir(home) / PLIST_NAME]
        probe = _probe(("launchctl", "print", f"gui/{uid}/{LAUNCHD_LABEL}"), runner)
    report.files = {str(f): f.exists() for f in files}
    report.installed = all(report.files.values())
    if probe is None:
        report.detail = f"{report.manager} is not available on this machine"
        return report
    code, out, err = probe
    if kind == "linux":
        states = out.split()
        # is-active prints one state per unit; no output means the manager could not be asked.
        if len(states) == len(units):
            report.manager_available = True
            report.active = dict(zip(units, states, strict=True))
        report.detail = err.strip()
    else:
        report.manager_available = True
        if code == 0:
            state = re.search(r"^\s*state = (\S+)", out, re.MULTILINE)
            report.active = {LAUNCHD_LABEL: state[1] if state else "loaded"}
        else:
            report.active = {LAUNCHD_LABEL: "not loaded"}
            report.detail = err.strip()
    return report
