"""`memd integrate codex`: memd's MCP server in Codex CLI's config, and memd's memory in the
instructions Codex reads at the start of every session.

- ``$CODEX_HOME/config.toml`` (``~/.codex/config.toml``) gets ``[mcp_servers.memd]`` with
  ``command``, ``args = ["mcp"]`` and ``env``: Codex starts MCP servers with a filtered
  environment (HOME, PATH, LANG, …), so MEMD_HOME and MEMD_SOCKET are written there. It is
  ``required``: `codex exec` waits for a server to start (and so offers its tools in its first
  request) only when it is; the price is that Codex does not start while `memd mcp` cannot (memd
  uninstalled: `memd integrate codex --undo` first). The file is edited with its comments and
  layout kept (tomlkit); a file that is not valid TOML is left alone.
- ``$CODEX_HOME/AGENTS.md`` gets memd's block (`memd.integrations.instructions`), which the
  daemon keeps current: Codex runs no hook in ``codex exec`` until the user trusts it, while it
  reads this file into every session.

``--undo`` takes both out again (the block, the server entry, and ``[mcp_servers]`` when memd
created it); the previous content of each file is kept as ``<name>.bak``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from memd.conversations.sources import codex_home
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
)

NAME = "codex"
TITLE = "Codex CLI"
STARTUP_TIMEOUT_S = 30


def config_path(req: Request) -> Path:
    return codex_home(req.where) / "config.toml"


def target(req: Request) -> instructions.Target:
    return instructions.Target(NAME, str(codex_home(req.where) / "AGENTS.md"))


def integrate(req: Request) -> IntegrationPlan:
    """Wire Codex CLI to memd (or, with `req.remove`, take memd out). `ConfigError` when its
    config cannot be read; nothing is written then."""
    draft = Draft(TITLE)
    path = assistant_files.real_path(config_path(req))
    before = assistant_files.read(path)
    doc = _parse(path, before)
    if req.remove:
        draft.actions += _remove_server(doc, path, created(req, NAME, path))
    else:
        draft.made[str(path)] = []
        draft.actions += _add_server(doc, path, req, draft.made[str(path)])
    after = tomlkit.dumps(doc) if draft.actions else before
    if after != before:
        _check(path, after or "")
        draft.change(path, before, after)
    block_change(draft, req, target(req))
    return apply(req, NAME, draft)


def wired(req: Request) -> list[str]:
    """What of memd is in Codex's files now."""
    out = []
    try:
        doc = tomllib.loads(assistant_files.read(config_path(req)) or "")
    except tomllib.TOMLDecodeError:
        doc = {}
    entry = (
        doc.get("mcp_servers", {}).get(SERVER_NAME)
        if isinstance(doc.get("mcp_servers"), dict)
        else None
    )
    if isinstance(entry, dict) and is_memd_command(
        [entry.get("command"), *(entry.get("args") or [])]
    ):
        out.append(f"MCP server in {config_path(req)}")
    text = assistant_files.read(Path(target(req).path)) or ""
    if instructions.BEGIN in text:
        out.append(f"memory block in {target(req).path}")
    return out


def _parse(path: Path, text: str | None) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise ConfigError(
            f"{path} is not valid TOML ({exc})",
            hint="fix the file by hand (Codex would not read it either); it was not changed",
        ) from exc


def _check(path: Path, text: str) -> None:
    # What tomlkit wrote must read back as TOML, memd's entry in it: else nothing is written.
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - tomlkit writes what it parsed
        raise ConfigError(f"{path}: the edited config would not be valid TOML ({exc})") from exc


def _entry(req: Request) -> tomlkit.items.Table:
    table = tomlkit.table()
    table.add("command", req.memd_argv[0])
    table.add("args", [*req.memd_argv[1:], "mcp"])
    env = tomlkit.inline_table()
    env.update(dict(sorted(req.env.items())))
    if req.env:
        table.add("env", env)
    # `codex exec` offers a server's tools from its first request only when it waited for the
    # server to start, and it waits only for required ones (memd's takes about a second).
    table.add("required", True)
    table.add("startup_timeout_sec", STARTUP_TIMEOUT_S)
    table.add(tomlkit.nl())  # a blank line before whatever table follows it
    return table


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _add_server(doc: tomlkit.TOMLDocument, path: Path, req: Request, made: list[str]) -> list[str]:
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add("mcp_servers", servers)
        made.append("mcp_servers")
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: 'mcp_servers' is not a table",
                          hint="fix the file by hand; it was not changed")  # fmt: skip
    wanted = _entry(req)
    current = servers.get(SERVER_NAME)
    if current is not None and _plain(current) == _plain(wanted):
        return []
    if current is not None and not _is_memd(current):
        return [f"left [mcp_servers.{SERVER_NAME}] in {path} alone: it does not run `memd mcp`;"
                " rename it to let memd add its own"]  # fmt: skip
    verb = "replaced" if current is not None else "added"
    servers[SERVER_NAME] = wanted
    return [f"{verb} MCP server '{SERVER_NAME}' in {path} (with MEMD_* in its env: Codex passes"
            " its servers only a few variables)"]  # fmt: skip


def _is_memd(entry: Any) -> bool:
    plain = _plain(entry)
    return isinstance(plain, dict) and is_memd_command(
        [plain.get("command"), *(plain.get("args") or [])]
    )


def _remove_server(doc: tomlkit.TOMLDocument, path: Path, made: set[str] | None) -> list[str]:
    servers = doc.get("mcp_servers")
    if not isinstance(servers, dict) or not _is_memd(servers.get(SERVER_NAME)):
        return []
    del servers[SERVER_NAME]
    if not servers and (made is None or "mcp_servers" in made):
        del doc["mcp_servers"]
    return [f"removed MCP server '{SERVER_NAME}' from {path}"]
