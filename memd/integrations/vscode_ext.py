"""`memd integrate cline` and `memd integrate roo`: memd's MCP server in the extension's own MCP
settings, and memd's instructions in its global rules folder.

Cline (``saoudrizwan.claude-dev``) and Roo Code (``rooveterinaryinc.roo-cline``) keep their
state in the editor's ``User/globalStorage/<extension id>/`` folder: in VS Code, VS Code
Insiders, VSCodium, Cursor and Windsurf alike (``~/.config/<editor>`` on Linux,
``~/Library/Application Support/<editor>`` on macOS, ``%APPDATA%\\<editor>`` on Windows, and
``~/.vscode-server/data`` for a remote VS Code). Cline's CLI keeps the same layout in
``~/.cline/data``. Each install found gets, in ``settings/cline_mcp_settings.json`` (Cline) or
``settings/mcp_settings.json`` (Roo Code), the JSON the extension reads with ``JSON.parse``:

    {"mcpServers": {"memd": {"type": "stdio", "command": ..., "args": [..., "mcp"], "env": {...},
                             "disabled": false}}}

Everything else in the file is kept as it is; an entry named ``memd`` that does not run memd is
left alone. The rules folder (Cline: ``~/Documents/Cline/Rules``, Roo Code: ``~/.roo/rules``)
gets a memd-owned ``memd.md`` that both extensions put in every task's system prompt.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.conversations import editors
from memd.core.errors import ConfigError
from memd.integrations.assistant_files import FileChange, dump, parse
from memd.integrations.config_edit import (
    SERVER_NAME,
    Plan,
    Request,
    instructions_change,
    is_memd_server,
    is_owned,
    read_text,
    real_path,
    run_cli,
    server_command,
)

RULES_FILE = "memd.md"


@dataclass(frozen=True, slots=True)
class Extension:
    """One of the two extensions: its names, where its files are, how its MCP entry looks."""

    name: str  # the `memd integrate` name
    source: str  # the `source` of its turns, the name its instructions are kept under
    title: str
    extension_id: str
    mcp_file: str
    extra_entry: tuple[tuple[str, Any], ...]

    def storages(
        self, home: Path, env: Mapping[str, str], platform: str = sys.platform
    ) -> list[Path]:
        """The extension's globalStorage folders of every editor on this machine."""
        return editors.extension_storages(home, env, platform, self.extension_id)

    def rules_dir(self, home: Path, env: Mapping[str, str], platform: str = sys.platform) -> Path:
        if self.name == "cline":
            return editors.cline_rules(home, env, platform)
        return editors.roo_rules(home)


CLINE = Extension("cline", "cline", "Cline", editors.CLINE_ID, "cline_mcp_settings.json",
                  (("disabled", False), ("autoApprove", [])))  # fmt: skip
ROO = Extension("roo", "roo-code", "Roo Code", editors.ROO_ID, "mcp_settings.json",
                (("disabled", False), ("alwaysAllow", [])))  # fmt: skip


def plan(
    ext: Extension,
    request: Request,
    *,
    home: Path,
    env: Mapping[str, str],
    platform: str = sys.platform,
) -> Plan:
    """The changes `memd integrate <ext>` makes (or `--undo` takes back)."""
    settings = request.overrides.get("settings")
    if settings is not None:
        targets = [Path(settings)]
    else:
        targets = [
            s / "settings" / ext.mcp_file for s in ext.storages(home, env, platform) if s.is_dir()
        ]
        if not targets and not request.undo:
            raise ConfigError(
                f"{ext.title} was not found: no globalStorage/{ext.extension_id} folder in "
                + ", ".join(editors.EDITORS),
                hint=f"open {ext.title} once in your editor, or give its MCP settings file with --settings",
            )
    changes: list[FileChange] = []
    actions: list[str] = []
    for settings_file in targets:
        change, action = _mcp_change(ext, real_path(settings_file), request)
        changes.append(change)
        actions += [action] if action else []
    rules = request.overrides.get("rules-dir") or ext.rules_dir(home, env, platform)
    change, action, kept = instructions_change(
        Path(rules) / RULES_FILE, ext.source, undo=request.undo
    )
    changes.append(change)
    actions += [action] if action else []
    return Plan(ext.title, tuple(changes), tuple(actions), request.undo, (kept,))


def _mcp_change(ext: Extension, path: Path, request: Request) -> tuple[FileChange, str]:
    before = read_text(path)
    doc = parse(path, before)
    servers = doc.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(
            f"{path}: 'mcpServers' is not an object", hint="fix it by hand; it was not changed"
        )
    current = servers.get(SERVER_NAME)
    if request.undo:
        if not is_memd_server(current):
            return FileChange(path, before, before), ""
        del servers[SERVER_NAME]
        return FileChange(
            path, before, dump(doc)
        ), f"removed MCP server '{SERVER_NAME}' from {path}"
    command, args = server_command(request.memd_argv)
    wanted: dict[str, Any] = {"type": "stdio", "command": command, "args": args}
    if request.env:
        wanted["env"] = dict(sorted(request.env.items()))
    # Keep the user's own switches (disabled, auto-approved tools, timeout) on memd's entry.
    kept = {
        k: v
        for k, v in (current or {}).items()
        if k not in ("type", "command", "args", "env", "transportType")
    }
    wanted.update(
        {**dict(ext.extra_entry), **kept} if is_memd_server(current) else dict(ext.extra_entry)
    )
    if current == wanted:
        return FileChange(path, before, before), ""
    if current is not None and not is_memd_server(current):
        return FileChange(path, before, before), (
            f"left mcpServers.{SERVER_NAME} in {path} alone: it does not run `memd mcp`; "
            "rename it to let memd add its own"
        )
    servers[SERVER_NAME] = wanted
    verb = "replaced" if current is not None else "added"
    return FileChange(path, before, dump(doc)), f"{verb} MCP server '{SERVER_NAME}' in {path}"


def wired(
    ext: Extension, home: Path, env: Mapping[str, str], platform: str = sys.platform
) -> list[str]:
    """What of memd is in the extension's files now: its server entry in each install's MCP
    settings, and its rules file."""
    out = []
    for storage in ext.storages(home, env, platform):
        path = storage / "settings" / ext.mcp_file
        try:
            servers = json.loads(read_text(path) or "{}").get("mcpServers") or {}
        except (ValueError, AttributeError, ConfigError):
            continue
        if isinstance(servers, dict) and is_memd_server(servers.get(SERVER_NAME)):
            out.append(f"MCP server in {path}")
    rules = ext.rules_dir(home, env, platform) / RULES_FILE
    if is_owned(rules):
        out.append(f"memd's rules file {rules}")
    return out


def main(argv: Sequence[str] | None = None, *, ext: Extension = CLINE) -> int:
    """Entry point of `memd integrate cline|roo`."""
    env = dict(os.environ)
    return run_cli(
        ext.name,
        argv,
        lambda request: plan(ext, request, home=Path.home(), env=env),
        options=(("settings", f"one MCP settings file ({ext.mcp_file}) instead of every install found"),
                 ("rules-dir", "the global rules folder (default: where the extension looks)")),
    )  # fmt: skip


def main_roo(argv: Sequence[str] | None = None) -> int:
    """Entry point of `memd integrate roo`."""
    return main(argv, ext=ROO)
