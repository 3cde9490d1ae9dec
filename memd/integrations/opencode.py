"""`memd integrate opencode`: memd's MCP server in OpenCode's config, and memd's memory in an
instructions file OpenCode reads into every session.

``~/.config/opencode/opencode.json`` (``$XDG_CONFIG_HOME/opencode``) gets:

- ``mcp.memd`` = ``{"type": "local", "command": [<memd>, "mcp"], "environment", "enabled": true}``;
- ``~/.config/opencode/memd.md`` in ``instructions``, a file memd owns whole and the daemon keeps
  current. OpenCode has no hook that runs a command; a file of its own (rather than a block in
  ``AGENTS.md``) leaves OpenCode's choice of global instructions as it was (it reads
  ``~/.config/opencode/AGENTS.md``, else ``~/.claude/CLAUDE.md``: creating the first would hide
  the second).

Everything else in the config is kept; a config that is not plain JSON (OpenCode also reads
``opencode.jsonc`` with comments) is left alone with the reason. ``--undo`` takes memd's entries
and its file out again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memd.conversations.sources import opencode_config
from memd.core.errors import ConfigError
from memd.integrations import assistant_files, instructions
from memd.integrations.assistant_files import IntegrationPlan
from memd.integrations.wiring import (
    SERVER_NAME,
    Draft,
    Request,
    apply,
    block_change,
    created,
    is_memd_command,
    shell,
)

NAME = "opencode"
TITLE = "OpenCode"


def config_path(req: Request) -> Path:
    return opencode_config(req.where) / "opencode.json"


def target(req: Request) -> instructions.Target:
    return instructions.Target(NAME, str(opencode_config(req.where) / "memd.md"), "file")


def integrate(req: Request) -> IntegrationPlan:
    """Wire OpenCode to memd (or, with `req.remove`, take memd out). `ConfigError` when its config
    cannot be read; nothing is written then."""
    draft = Draft(TITLE)
    path = assistant_files.real_path(config_path(req))
    jsonc = path.with_suffix(".jsonc")
    if not path.exists() and jsonc.exists():
        raise ConfigError(
            f"OpenCode's config is {jsonc} (JSON with comments): memd edits only opencode.json",
            hint=f'add "mcp": {{"memd": {{"type": "local", "command": {json.dumps(_command(req))}}}}}'
            f' and "{target(req).path}" to "instructions" by hand',
        )
    before = assistant_files.read(path)
    doc = assistant_files.parse(path, before)
    if req.remove:
        draft.actions += _remove(doc, path, req, created(req, NAME, path))
    else:
        if before is None:
            doc["$schema"] = "https://opencode.ai/config.json"
        made: set[str] = set()
        draft.actions += _add(doc, path, req, made)
        draft.made[str(path)] = sorted(made)
    after = before if doc == assistant_files.parse(path, before) else assistant_files.dump(doc)
    if after != before:
        draft.change(path, before, after)
    block_change(draft, req, target(req))
    return apply(req, NAME, draft)


def wired(req: Request) -> list[str]:
    """What of memd is in OpenCode's config now."""
    try:
        doc = json.loads(assistant_files.read(config_path(req)) or "{}")
    except ValueError:
        return []
    out = []
    mcp = doc.get("mcp") if isinstance(doc, dict) else None
    if isinstance(mcp, dict) and _is_memd(mcp.get(SERVER_NAME)):
        out.append(f"MCP server in {config_path(req)}")
    if target(req).path in (doc.get("instructions") or [] if isinstance(doc, dict) else []):
        out.append(f"memory file {target(req).path}")
    return out


def _command(req: Request) -> list[str]:
    return [*req.memd_argv, "mcp"]


def _is_memd(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("command"), list)
        and is_memd_command(entry["command"])
    )


def _add(doc: dict[str, Any], path: Path, req: Request, made: set[str]) -> list[str]:
    actions = []
    servers = assistant_files.container(doc, "mcp", dict, path, made, "mcp")
    wanted: dict[str, Any] = {"type": "local", "command": _command(req), "enabled": True}
    if req.env:
        wanted["environment"] = dict(sorted(req.env.items()))
    current = servers.get(SERVER_NAME)
    if current is not None and not _is_memd(current):
        actions.append(f"left mcp.{SERVER_NAME} in {path} alone: it does not run `memd mcp`;"
                       " rename it to let memd add its own")  # fmt: skip
    elif current != wanted:
        servers[SERVER_NAME] = wanted
        verb = "replaced" if current is not None else "added"
        actions.append(f"{verb} MCP server '{SERVER_NAME}' in {path}: {shell(_command(req))}")
    listed = assistant_files.container(doc, "instructions", list, path, made, "instructions")
    if target(req).path not in listed:
        listed.append(target(req).path)
        actions.append(f"added {target(req).path} to the instructions of {path}")
    return actions


def _remove(doc: dict[str, Any], path: Path, req: Request, made: set[str] | None) -> list[str]:
    actions = []
    servers = doc.get("mcp")
    if isinstance(servers, dict) and _is_memd(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        actions.append(f"removed MCP server '{SERVER_NAME}' from {path}")
        if not servers and assistant_files.drop_empty("mcp", made):
            del doc["mcp"]
    listed = doc.get("instructions")
    if isinstance(listed, list) and target(req).path in listed:
        listed.remove(target(req).path)
        actions.append(f"removed {target(req).path} from the instructions of {path}")
        if not listed and assistant_files.drop_empty("instructions", made):
            del doc["instructions"]
    return actions
