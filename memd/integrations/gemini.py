"""`memd integrate gemini`: memd's MCP server and hooks in Gemini CLI's user settings.

``~/.gemini/settings.json`` (under ``$GEMINI_CLI_HOME`` when set) gets:

- ``mcpServers.memd`` = ``{"command", "args": ["mcp"], "env", "trust": true}`` — Gemini CLI runs
  headless in its default approval mode and offers an MCP server's tools there only when the
  server is trusted; it strips variables that look secret from the server's environment, so only
  memd's locations are written;
- hooks, which Gemini CLI runs headless without a trust step and feeds Claude Code's JSON:
  ``SessionStart`` runs ``memd hook --assistant gemini session-start`` (the session's memory
  context) and ``BeforeAgent`` runs ``memd hook --assistant gemini user-prompt`` (what is relevant
  to the prompt). Gemini CLI puts their text into the user's message inside ``<hook_context>``,
  which memd's reader of its chats leaves out.

Everything else in the file is kept; a file that is not plain JSON (Gemini CLI also accepts
comments) is left alone with the reason. ``--undo`` takes memd's entries out again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memd.conversations.sources import gemini_dir
from memd.integrations import assistant_files, claude_code
from memd.integrations.assistant_files import IntegrationPlan
from memd.integrations.hooks import SESSION_START, USER_PROMPT
from memd.integrations.wiring import (
    SERVER_NAME,
    Draft,
    Request,
    apply,
    created,
    is_memd_command,
    shell,
)

NAME = "gemini"
TITLE = "Gemini CLI"
# Gemini CLI waits for a hook up to its `timeout` (ms); memd's hook stops itself within its own
# limit, longer than Claude Code's: a session starts once, and a late hook adds nothing.
HOOKS = claude_code.HookStyle(
    {SESSION_START: "SessionStart", USER_PROMPT: "BeforeAgent"},
    {SESSION_START: None, USER_PROMPT: None},
    timeout=10_000,
    options=("--assistant", NAME, "--time-limit", "3"),
)


def settings_path(req: Request) -> Path:
    return gemini_dir(req.where) / "settings.json"


def integrate(req: Request) -> IntegrationPlan:
    """Wire Gemini CLI to memd (or, with `req.remove`, take memd out). `ConfigError` when its
    settings cannot be read; nothing is written then."""
    draft = Draft(TITLE)
    path = assistant_files.real_path(settings_path(req))
    before = assistant_files.read(path)
    doc = assistant_files.parse(path, before)
    if req.remove:
        made = created(req, NAME, path)
        draft.actions += claude_code.remove_hooks(doc, path, made)
        draft.actions += _remove_server(doc, path, made)
    else:
        made_now: set[str] = set()
        draft.actions += _add_server(doc, path, req, made_now)
        draft.actions += claude_code.add_hooks(doc, path, req.memd_argv, req.env, made_now, HOOKS)
        draft.made[str(path)] = sorted(made_now)
    after = before if doc == assistant_files.parse(path, before) else assistant_files.dump(doc)
    if after != before:
        draft.change(path, before, after)
    return apply(req, NAME, draft)


def wired(req: Request) -> list[str]:
    """What of memd is in Gemini CLI's settings now."""
    try:
        doc = json.loads(assistant_files.read(settings_path(req)) or "{}")
    except ValueError:
        return []
    out = []
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    if isinstance(servers, dict) and _is_memd(servers.get(SERVER_NAME)):
        out.append(f"MCP server in {settings_path(req)}")
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if isinstance(hooks, dict) and "memd" in json.dumps(hooks.get("SessionStart", [])):
        out.append("SessionStart and BeforeAgent hooks")
    return out


def _entry(req: Request) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": req.memd_argv[0], "args": [*req.memd_argv[1:], "mcp"]}
    if req.env:
        entry["env"] = dict(sorted(req.env.items()))
    entry["trust"] = True
    return entry


def _is_memd(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("args", []), list):
        return False
    return is_memd_command([entry.get("command"), *entry.get("args", [])])


def _add_server(doc: dict[str, Any], path: Path, req: Request, made: set[str]) -> list[str]:
    servers = assistant_files.container(doc, "mcpServers", dict, path, made, "mcpServers")
    wanted, current = _entry(req), servers.get(SERVER_NAME)
    if current == wanted:
        return []
    if current is not None and not _is_memd(current):
        return [f"left mcpServers.{SERVER_NAME} in {path} alone: it does not run `memd mcp`;"
                " rename it to let memd add its own"]  # fmt: skip
    servers[SERVER_NAME] = wanted
    verb = "replaced" if current is not None else "added"
    return [
        f"{verb} MCP server '{SERVER_NAME}' (trusted) in {path}: {shell([*req.memd_argv, 'mcp'])}"
    ]


def _remove_server(doc: dict[str, Any], path: Path, made: set[str] | None) -> list[str]:
    servers = doc.get("mcpServers")
    if not isinstance(servers, dict) or not _is_memd(servers.get(SERVER_NAME)):
        return []
    del servers[SERVER_NAME]
    if not servers and assistant_files.drop_empty("mcpServers", made):
        del doc["mcpServers"]
    return [f"removed MCP server '{SERVER_NAME}' from {path}"]
