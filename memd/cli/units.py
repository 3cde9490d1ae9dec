"""Render the systemd units and the launchd agent from their templates.

The canonical templates are package data in ``memd/cli/templates/``; ``systemd/`` and
``launchd/`` at the top of the repository hold identical copies for people to read (a test keeps
them in sync). Placeholders are ``@NAME@``: inline ones are replaced in place, and a line that
holds only a placeholder becomes zero or more lines. All renderers are pure: they take explicit
values and never look at the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

from memd.core.errors import ServiceError

SERVICE_UNIT = "memd.service"
SOCKET_UNIT = "memd.socket"
LAUNCHD_LABEL = "io.memd.daemon"
PLIST_NAME = f"{LAUNCHD_LABEL}.plist"
# systemd expands %t to $XDG_RUNTIME_DIR in user units; platformdirs puts memd's runtime dir there.
DEFAULT_SYSTEMD_SOCKET = "%t/memd/memd.sock"
# Where each packaged template's human-readable copy lives, relative to the repository root.
TOP_LEVEL_COPIES = {
    SERVICE_UNIT: "systemd/memd.service",
    SOCKET_UNIT: "systemd/memd.socket",
    PLIST_NAME: "launchd/io.memd.daemon.plist",
}
# launchd starts agents with PATH=/usr/bin:/bin:/usr/sbin:/sbin; add the usual package prefixes.
LAUNCHD_BASE_PATH = "/usr/local/bin:/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin"

_PLACEHOLDER = re.compile(r"@([A-Z_]+)@")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SAFE_WORD = re.compile(r"[A-Za-z0-9_./+=:,@-]+")
# XML 1.0 forbids these characters even when escaped.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def template_text(name: str) -> str:
    """The text of the packaged template `name` (``memd.service``, ``memd.socket`` or the plist)."""
    if name not in TOP_LEVEL_COPIES:
        raise ValueError(f"no such template: {name!r}")
    try:
        return resources.files("memd.cli").joinpath("templates", name).read_text("utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise ServiceError(
            f"unit template {name} is missing from the memd package",
            hint="reinstall memd; its package data should include memd/cli/templates/",
        ) from exc


def _fill(template: str, inline: Mapping[str, str], lines: Mapping[str, Sequence[str]]) -> str:
    out: list[str] = []
    for line in template.splitlines():
        whole = _PLACEHOLDER.fullmatch(line.strip())
        if whole and whole[1] in lines:
            out.extend(lines[whole[1]])
            continue

        def sub(m: re.Match[str]) -> str:
            if m[1] not in inline:
                raise ValueError(f"template placeholder @{m[1]}@ has no value")
            return inline[m[1]]

        out.append(_PLACEHOLDER.sub(sub, line))
    return "\n".join(out) + "\n"


def _check_value(value: str, what: str) -> None:
    if "\n" in value or "\r" in value or "\0" in value:
        raise ServiceError(f"{what} contains a newline or NUL: {value!r}")


def _systemd_specifiers(text: str) -> str:
    # systemd.unit(5): '%' starts a specifier everywhere in a unit file.
    return text.replace("%", "%%")


def _systemd_quote(word: str) -> str:
    if _SAFE_WORD.fullmatch(word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def exec_line(argv: Sequence[str]) -> str:
    """`argv` as a systemd command line: quoted words, ``%`` and ``$`` escaped."""
    if not argv or not os.path.isabs(argv[0]):
        raise ServiceError(f"the memd executable must be an absolute path, got {list(argv)!r}")
    words = []
    for i, arg in enumerate(argv):
        _check_value(arg, "executable argument")
        word = _systemd_specifiers(_systemd_quote(arg))
        # systemd substitutes $VAR in the arguments but takes the program path literally.
        words.append(word.replace("$", "$$") if i else word)
    return " ".join(words)


def _environment_lines(env: Mapping[str, str]) -> list[str]:
    out = []
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name):
            raise ServiceError(f"invalid environment variable name {name!r}")
        _check_value(value, f"environment variable {name}")
        # Environment= does no $ expansion, but it does unquote, unescape and expand specifiers.
        quoted = f"{name}={value}".replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'Environment="{_systemd_specifiers(quoted)}"')
    return out


def _environment_file_lines(env_file: Path | None) -> list[str]:
    if env_file is None:
        return []
    if not env_file.is_absolute():
        raise ServiceError(f"the environment file must be an absolute path, got {env_file}")
    _check_value(str(env_file), "environment file")
    return [
        '# Secrets (ANTHROPIC_API_KEY=…) go in this file, readable only by you; "-": it may be missing.',
        f"EnvironmentFile=-{_systemd_specifiers(str(env_file))}",
    ]


def render_systemd_service(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    private_tmp: bool = True,
    env_file: Path | None = None,
) -> str:
    """Render ``memd.service``.

    `argv` is the absolute command that starts memd without its subcommand (``[".../memd"]`` or
    ``[".../python", "-m", "memd"]``); ``serve`` is appended. `env` becomes ``Environment=``
    lines (never put secrets here: unit files are world-readable); `env_file` an optional
    ``EnvironmentFile=``, the place for secrets (a 0600 file of ``NAME=value`` lines).
    `private_tmp` is False only when memd's folders live under a temporary directory.
    """
    return _fill(
        template_text(SERVICE_UNIT),
        inline={"EXEC": exec_line(argv), "PRIVATE_TMP": "yes" if private_tmp else "no"},
        lines={
            "ENVIRONMENT": _environment_lines(env or {}),
            "ENVIRONMENT_FILE": _environment_file_lines(env_file),
        },
    )


_ENV_FILE_SAFE = re.compile(r"[A-Za-z0-9_./+=:,@%-]*")


def render_environment_file(values: Mapping[str, str], keep: str = "") -> str:
    """An environment file (systemd ``EnvironmentFile=``): `keep`'s lines with `values` set.

    Lines of `keep` that set a name in `values` are replaced; comments and other names stay.
    Values are written plain, or single-quoted when they hold other characters.
    """
    for name, value in values.items():
        if not _ENV_NAME.fullmatch(name):
            raise ServiceError(f"invalid environment variable name {name!r}")
        _check_value(value, f"environment variable {name}")
    out = [line for line in keep.splitlines()
           if line.split("=", 1)[0].strip().removeprefix("export ").strip() not in values]  # fmt: skip
    if not out:
        out = ["# The memd service's environment: NAME=value lines (systemd EnvironmentFile).",
               "# Readable only by you; memd service install --env NAME copies NAME from a shell."]  # fmt: skip
    for name, value in values.items():
        if _ENV_FILE_SAFE.fullmatch(value):
            out.append(f"{name}={value}")
        elif "'" not in value and "\\" not in value:
            out.append(f"{name}='{value}'")
        else:
            raise ServiceError(
                f"environment variable {name} holds a quote or backslash; write it into the"
                " environment file yourself"
            )
    return "\n".join(out) + "\n"


def render_systemd_socket(socket_path: Path | None = None) -> str:
    """Render ``memd.socket`` listening on `socket_path`, or on ``%t/memd/memd.sock`` when None."""
    if socket_path is None:
        listen = DEFAULT_SYSTEMD_SOCKET
    else:
        if not socket_path.is_absolute():
            raise ServiceError(f"the socket path must be absolute, got {socket_path}")
        _check_value(str(socket_path), "socket path")
        listen = _systemd_specifiers(str(socket_path))
    return _fill(template_text(SOCKET_UNIT), inline={"SOCKET": listen}, lines={})


def _xml_text(value: str, what: str) -> str:
    if _XML_INVALID.search(value):
        raise ServiceError(f"{what} contains a character a plist cannot hold: {value!r}")
    return xml_escape(value)


def render_launchd_plist(
    argv: Sequence[str], log_dir: Path, env: Mapping[str, str] | None = None
) -> str:
    """Render the LaunchAgent plist (label ``io.memd.daemon``).

    `argv` is the absolute memd command without ``serve``; `log_dir` the absolute folder of
    ``memd.out.log`` and ``memd.err.log``; `env` the agent's environment. ``PATH`` defaults to
    the executable's folder followed by `LAUNCHD_BASE_PATH`.
    """
    if not argv or not os.path.isabs(argv[0]):
        raise ServiceError(f"the memd executable must be an absolute path, got {list(argv)!r}")
    if not log_dir.is_absolute():
        raise ServiceError(
            f"the log folder must be absolute (launchd does not expand ~): {log_dir}"
        )
    full_env = dict(env or {})
    full_env.setdefault("PATH", f"{os.path.dirname(argv[0])}:{LAUNCHD_BASE_PATH}")
    args = [f"\t\t<string>{_xml_text(a, 'executable argument')}</string>" for a in argv]
    env_lines: list[str] = []
    for name, value in full_env.items():
        if not _ENV_NAME.fullmatch(name):
            raise ServiceError(f"invalid environment variable name {name!r}")
        env_lines.append(f"\t\t<key>{name}</key>")
        env_lines.append(f"\t\t<string>{_xml_text(value, f'environment variable {name}')}</string>")
    return _fill(
        template_text(PLIST_NAME),
        inline={"LOG_DIR": _xml_text(str(log_dir), "log folder")},
        lines={"PROGRAM_ARGUMENTS": args, "ENVIRONMENT": env_lines},
    )
