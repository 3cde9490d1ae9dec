"""`memd integrate <assistant> [--dry-run] [--undo]` and `memd integrate --list`.

Every assistant memd can wire is an `Integration` in `INTEGRATIONS`: its name (the `source` of
its turns), how to tell it is installed, what of memd is wired into it now, and how to wire it
(`integrate(request)`, undone with ``--undo``). `--list` shows them all. Claude Code, Cline, Roo
Code, Continue and Aider keep command lines of their own (`claude_code`, `vscode_ext`,
`continue_dev`, `aider`), which `main` hands their arguments to.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memd.api.client import request as rpc
from memd.conversations import editors
from memd.conversations.sources import BY_NAME, Where
from memd.core.errors import DaemonNotRunning, MemdError
from memd.core.settings import Settings, load
from memd.integrations import (
    aider,
    assistant_files,
    claude_code,
    codex,
    continue_dev,
    gemini,
    instructions,
    opencode,
    vscode_ext,
)
from memd.integrations.assistant_files import IntegrationPlan
from memd.integrations.wiring import Request

# Answers a read method without the daemon: (settings, signature, params) → (result, note).
Offline = Callable[[Settings, Any, Any], tuple[Any, str]]


@dataclass(frozen=True, slots=True)
class Integration:
    """One assistant `memd integrate` can wire; `main` is its own command line, when it has one
    (its arguments are handed to it), else `integrate` runs through this module's."""

    name: str
    title: str
    integrate: Callable[[Request], IntegrationPlan] | None
    wired: Callable[[Request], list[str]]
    binary: str = ""  # its command, when it has one (found on PATH: installed)
    folders: Callable[[Where], list[Path]] = lambda where: []  # found: installed
    main: Callable[[Sequence[str]], int] | None = None


def _claude_code(req: Request) -> IntegrationPlan:
    settings_path, mcp_path = claude_code.default_paths(req.where.env)
    return claude_code.integrate(settings_path, mcp_path, req.memd_argv, remove=req.remove,
                                 dry_run=req.dry_run, state_file=req.state_file("claude-code"),
                                 env=req.env)  # fmt: skip


def _claude_wired(req: Request) -> list[str]:
    settings_path, mcp_path = claude_code.default_paths(req.where.env)
    out = []
    if "hook session-start" in (assistant_files.read(settings_path) or ""):
        out.append(f"SessionStart and UserPromptSubmit hooks in {settings_path}")
    try:
        servers = json.loads(assistant_files.read(mcp_path) or "{}").get("mcpServers") or {}
    except (ValueError, AttributeError):
        servers = {}
    if isinstance(servers, dict) and claude_code._is_memd_server(servers.get("memd")):
        out.append(f"MCP server in {mcp_path}")
    return out


def _storages(ext: vscode_ext.Extension) -> Callable[[Where], list[Path]]:
    return lambda where: ext.storages(where.home, dict(where.env), where.platform)


def _vscode(ext: vscode_ext.Extension) -> Integration:
    return Integration(ext.name, ext.title, None,
                       lambda req: vscode_ext.wired(ext, req.where.home, req.where.env, req.where.platform),
                       folders=_storages(ext),
                       main=lambda argv: vscode_ext.main(argv, ext=ext))  # fmt: skip


INTEGRATIONS: dict[str, Integration] = {
    i.name: i
    for i in (
        Integration("claude-code", "Claude Code", _claude_code, _claude_wired, "claude",
                    main=claude_code.main),
        Integration(codex.NAME, codex.TITLE, codex.integrate, codex.wired, "codex"),
        Integration(gemini.NAME, gemini.TITLE, gemini.integrate, gemini.wired, "gemini"),
        Integration(opencode.NAME, opencode.TITLE, opencode.integrate, opencode.wired, "opencode"),
        _vscode(vscode_ext.CLINE),
        _vscode(vscode_ext.ROO),
        Integration("continue", continue_dev.TITLE, None,
                    lambda req: continue_dev.wired(req.where.home, req.where.env),
                    folders=lambda w: [editors.continue_dir(w.home, w.env)],
                    main=continue_dev.main),
        Integration("aider", aider.TITLE, None, lambda req: aider.wired(req.where.home), "aider",
                    folders=lambda w: [w.home / ".aider.conf.yml"], main=aider.main),
    )
}  # fmt: skip


def installed(integration: Integration, where: Where) -> str:
    """Where the assistant was found ("" when it was not): its folder, else its command."""
    known = BY_NAME.get(integration.name)
    folders = known.folders(where) if known is not None else integration.folders(where)
    for folder in folders:
        if folder.exists():
            return str(folder)
    found = shutil.which(integration.binary) if integration.binary else None
    return found or ""


@dataclass(frozen=True, slots=True)
class Listed:
    """An assistant in `memd integrate --list`: where it is installed ("" when not) and what
    of memd is wired into it."""

    name: str
    title: str
    installed: str
    wired: list[str]


def listing(req: Request) -> list[Listed]:
    """Every assistant: installed where, and what of memd is wired into it."""
    return [Listed(name=i.name, title=i.title, installed=installed(i, req.where),
                   wired=i.wired(req)) for i in INTEGRATIONS.values()]  # fmt: skip


def render_listing(rows: Sequence[Listed]) -> str:
    lines = []
    for r in rows:
        found = f"installed ({r.installed})" if r.installed else "not installed"
        wired = "; ".join(r.wired) if r.wired else f"not wired (memd integrate {r.name})"
        lines.append(f"{r.title} ({r.name}): {found}; {wired}")
    return "\n".join(lines)


def memory_block(settings: Settings, offline: Offline | None) -> Callable[[str], str]:
    """The text of an assistant's memd block now: from the daemon, else the read-only index."""

    def call(sig: Any, params: Any) -> Any:
        try:
            return rpc(settings.socket_path, sig, params, timeout=15)
        except DaemonNotRunning:
            if offline is None:
                raise
            return offline(settings, sig, params)[0]

    def block(assistant: str) -> str:
        try:
            return instructions.memory_text(call, assistant, settings.instructions_budget_tokens)
        except MemdError:
            return "(memd fills this in when its daemon runs: `memd serve`)"

    return block


def main(argv: Sequence[str] | None = None, offline: Offline | None = None) -> int:
    """Entry point of `memd integrate`."""
    args = list(sys.argv[1:] if argv is None else argv)
    own = INTEGRATIONS[args[0]].main if args and args[0] in INTEGRATIONS else None
    if own is not None:
        return own(args[1:])
    p = argparse.ArgumentParser(prog="memd integrate",
                                description="Wire an assistant to memd: its MCP server and memd's"
                                " memory at the start of its sessions.")  # fmt: skip
    p.add_argument("assistant", nargs="?", choices=sorted(INTEGRATIONS))
    p.add_argument("--list", action="store_true", help="every assistant: installed, wired")
    p.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    p.add_argument("--undo", "--remove", dest="undo", action="store_true",
                   help="take memd's entries out again")  # fmt: skip
    p.add_argument("--memd", help="command that starts memd (default: this installation)")
    p.add_argument("--json", action="store_true", help="--list as JSON")
    try:
        ns = p.parse_args(args)
    except SystemExit as exc:  # usage or --help: said on stderr/stdout already
        return int(exc.code or 0)
    if not ns.list and not ns.assistant:
        p.print_usage(sys.stderr)
        return 2
    try:
        settings = load()
        req = Request(
            memd_argv=shlex.split(ns.memd) if ns.memd else claude_code.default_memd_argv(),
            env=_env(settings), state_dir=settings.paths.state_dir, where=Where.here(),
            remove=ns.undo, dry_run=ns.dry_run, block=memory_block(settings, offline),
        )  # fmt: skip
        if ns.list:
            rows = listing(req)
            sys.stdout.write(
                (
                    json.dumps([asdict(r) for r in rows], indent=2)
                    if ns.json
                    else render_listing(rows)
                )
                + "\n"
            )
            return 0
        wire = INTEGRATIONS[ns.assistant].integrate
        assert wire is not None  # the others have a command line of their own
        plan = wire(req)
    except MemdError as exc:
        hint = f"\nhint: {exc.hint}" if exc.hint else ""
        sys.stderr.write(f"memd integrate {ns.assistant or ''}: {exc}{hint}\n")
        return 1
    if ns.dry_run:
        sys.stdout.write(plan.diff())
    sys.stdout.write(plan.summary() + "\n")
    return 0


def _env(settings: Settings) -> dict[str, str]:
    # Assistants start memd with environments of their own (Codex keeps only a few variables):
    # the socket is always named, and MEMD_HOME/MEMD_CONFIG when they are not the defaults.
    env = settings.location_env()
    env.setdefault("MEMD_SOCKET", str(settings.socket_path))
    return env
