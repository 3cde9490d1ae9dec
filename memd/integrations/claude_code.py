"""`memd integrate claude-code`: add (or take out) memd's hooks and MCP server in Claude Code.

Two files are edited, both JSON:

- the user settings (``~/.claude/settings.json``) get a ``SessionStart`` hook for the sources
  ``startup|resume|clear|compact`` running ``<memd> hook session-start`` and a
  ``UserPromptSubmit`` hook running ``<memd> hook user-prompt``;
- the user MCP config (``~/.claude.json``) gets ``mcpServers.memd`` = ``<memd> mcp`` (stdio).

With ``CLAUDE_CONFIG_DIR`` set, both files live in that folder instead. Everything else in the
files is kept as it is; running twice changes nothing; ``remove`` takes out exactly the entries
memd added, recognised by their command, and the containers memd created for them, so the files
parse back to what they were. Writes are atomic (temp file + ``os.replace``) and the previous
content is kept next to the file as ``<name>.bak``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.core.errors import ConfigError, MemdError
from memd.integrations import assistant_files
from memd.integrations.assistant_files import FileChange, IntegrationPlan
from memd.integrations.hooks import KINDS, SESSION_START, USER_PROMPT

SERVER_NAME = "memd"
SESSION_START_MATCHER = "startup|resume|clear|compact"
# Claude Code's own limit for a hook command, in seconds; memd's hooks stop themselves well
# before it (see hooks.TIME_LIMIT_S), this only bounds a wedged interpreter.
HOOK_TIMEOUT_S = 5
_EVENTS = {SESSION_START: "SessionStart", USER_PROMPT: "UserPromptSubmit"}
_MATCHERS = {SESSION_START: SESSION_START_MATCHER, USER_PROMPT: None}
_HOOK_OPTIONS = ("--assistant", "--time-limit", "--debug")


def integrate(
    settings_path: Path,
    mcp_config_path: Path,
    memd_argv: Sequence[str],
    *,
    remove: bool = False,
    dry_run: bool = False,
    state_file: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> IntegrationPlan:
    """Add memd's hooks to `settings_path` and its MCP server to `mcp_config_path`.

    `memd_argv` is how Claude Code should start memd, e.g. ``["/usr/local/bin/memd"]`` or
    ``[sys.executable, "-m", "memd"]`` (absolute paths: hooks run with Claude Code's PATH).
    With `remove`, memd's entries are taken out instead. With `dry_run`, nothing is written and
    the plan holds the would-be content. `state_file` (memd's own state folder) remembers which
    containers (``hooks``, ``hooks.SessionStart``, ``mcpServers``) memd created, so that
    `remove` also restores a container that was present but empty; without it, containers left
    empty by `remove` are dropped. `env` (``Settings.location_env()``) is set for the hooks and
    the MCP server: Claude Code starts them without this shell's MEMD_HOME or MEMD_SOCKET.

    Raises `ConfigError` naming the file when a file is not valid JSON or not shaped like
    Claude Code's; no file is touched then.
    """
    if not memd_argv:
        raise ConfigError("memd_argv is empty: give the command that starts memd")
    docs: dict[Path, tuple[str | None, dict[str, Any]]] = {}
    for path in (settings_path, mcp_config_path):
        target = assistant_files.real_path(path)
        if target not in docs:
            text = assistant_files.read(target)
            docs[target] = (text, assistant_files.parse(target, text))
    state = assistant_files.read_state(state_file)
    records: dict[Path, set[str] | None] = {
        p: set(state[str(p)]) if isinstance(state.get(str(p)), list) else None for p in docs
    }
    settings_target = assistant_files.real_path(settings_path)
    mcp_target = assistant_files.real_path(mcp_config_path)
    # Both names may point at one file; the parsed documents are edited in place.
    settings_doc = docs[settings_target][1]
    mcp_doc = docs[mcp_target][1]
    actions: list[str] = []
    if remove:
        actions += remove_hooks(settings_doc, settings_target, records[settings_target])
        actions += _remove_server(mcp_doc, mcp_target, records[mcp_target])
    else:
        made: dict[Path, set[str]] = {p: set() for p in docs}
        env = dict(env or {})
        actions += add_hooks(
            settings_doc, settings_target, list(memd_argv), env, made[settings_target]
        )
        actions += _add_server(mcp_doc, mcp_target, list(memd_argv), env, made[mcp_target])
        for p, names in made.items():
            records[p] = (records[p] or set()) | names

    changes = []
    for target, (before, doc) in docs.items():
        after = (
            before if doc == assistant_files.parse(target, before) else assistant_files.dump(doc)
        )
        backup = target.with_name(target.name + ".bak") if before is not None else None
        changes.append(FileChange(target, before, after, backup if after != before else None))

    plan = IntegrationPlan(tuple(changes), tuple(actions), remove, dry_run)
    if dry_run:
        return plan
    for change in plan.files:
        if change.changed and change.after is not None:
            assistant_files.write_atomic(change.path, change.after, backup=change.backup)
    if state_file is not None:
        for p, record in records.items():
            if remove or record is None:
                state.pop(str(p), None)
            else:
                state[str(p)] = sorted(record)
        assistant_files.write_state(state_file, state)
    return plan


def hook_command(
    memd_argv: Sequence[str],
    kind: str,
    env: Mapping[str, str] | None = None,
    options: Sequence[str] = (),
) -> str:
    """The shell command Claude Code runs for hook `kind` (``session-start``/``user-prompt``),
    prefixed with ``NAME=value`` assignments for `env`; `options` go before the kind (Gemini
    CLI's hooks: ``--assistant gemini``)."""
    # An assignment is only one when its name is unquoted: quote the value alone.
    assignments = [f"{name}={shlex.quote(value)}" for name, value in sorted((env or {}).items())]
    return " ".join([*assignments, shlex.join([*memd_argv, "hook", *options, kind])])


def server_entry(memd_argv: Sequence[str], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``mcpServers.memd`` entry: a stdio server started as ``<memd> mcp`` with `env`."""
    entry: dict[str, Any] = {
        "type": "stdio",
        "command": memd_argv[0],
        "args": [*memd_argv[1:], "mcp"],
    }
    if env:
        entry["env"] = dict(sorted(env.items()))
    return entry


def default_paths(env: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """Claude Code's user settings file and user MCP config file.

    ``~/.claude/settings.json`` and ``~/.claude.json``, or both inside ``CLAUDE_CONFIG_DIR``.
    """
    env = os.environ if env is None else env
    base = env.get("CLAUDE_CONFIG_DIR")
    if base:
        root = Path(base).expanduser()
        return root / "settings.json", root / ".claude.json"
    home = Path.home()
    return home / ".claude" / "settings.json", home / ".claude.json"


def default_memd_argv() -> list[str]:
    """An absolute command for memd: this installation's script, else ``python -m memd``."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "memd" and argv0.is_file():
        return [str(argv0.absolute())]
    beside = Path(sys.executable).parent / "memd"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("memd")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "memd"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `memd integrate claude-code [--dry-run] [--remove] [...]`."""
    parser = argparse.ArgumentParser(
        prog="memd integrate claude-code",
        description="Add memd's hooks and MCP server to Claude Code's user settings.",
    )
    parser.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    parser.add_argument("--remove", action="store_true", help="take memd's entries out again")
    parser.add_argument("--settings", type=Path, help="settings file (~/.claude/settings.json)")
    parser.add_argument("--mcp-config", type=Path, help="MCP config file (~/.claude.json)")
    parser.add_argument("--memd", help="command that starts memd (default: this installation)")
    args = parser.parse_args(argv)
    settings_default, mcp_default = default_paths()
    memd_argv = shlex.split(args.memd) if args.memd else default_memd_argv()
    try:
        from memd.core.settings import load

        settings = load()
        state_file = settings.paths.state_dir / "claude-code-integration.json"
        plan = integrate(
            args.settings or settings_default,
            args.mcp_config or mcp_default,
            memd_argv,
            remove=args.remove,
            dry_run=args.dry_run,
            state_file=state_file,
            env=settings.location_env(),
        )
    except MemdError as exc:
        hint = f"\nhint: {exc.hint}" if exc.hint else ""
        sys.stderr.write(f"memd integrate claude-code: {exc}{hint}\n")
        return 1
    if args.dry_run:
        sys.stdout.write(plan.diff())
    sys.stdout.write(plan.summary() + "\n")
    return 0


# --- settings.json: hooks ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HookStyle:
    """How an assistant names memd's hook events and runs their commands (Gemini CLI's hooks
    take Claude Code's JSON: the same entries, other names)."""

    events: Mapping[str, str]  # hook kind → the assistant's event name
    matchers: Mapping[str, str | None]
    timeout: int  # in the assistant's unit
    options: tuple[str, ...] = ()  # given to `memd hook` before the kind


CLAUDE_HOOKS = HookStyle(_EVENTS, _MATCHERS, HOOK_TIMEOUT_S)


def add_hooks(
    doc: dict[str, Any],
    path: Path,
    memd_argv: list[str],
    env: dict[str, str],
    made: set[str],
    style: HookStyle = CLAUDE_HOOKS,
) -> list[str]:
    """memd's hooks in a settings document (an entry of memd's already there is replaced)."""
    actions = []
    hooks = assistant_files.container(doc, "hooks", dict, path, made, "hooks")
    for kind, event in style.events.items():
        groups = assistant_files.container(hooks, event, list, path, made, f"hooks.{event}")
        command = hook_command(memd_argv, kind, env, style.options)
        if any(h.get("command") == command for h in _hook_entries(groups, path, event)):
            continue
        stale = _drop_memd_hooks(groups, {kind})
        group: dict[str, Any] = {}
        if style.matchers.get(kind):
            group["matcher"] = style.matchers[kind]
        group["hooks"] = [{"type": "command", "command": command, "timeout": style.timeout}]
        groups.append(group)
        verb = "replaced" if stale else "added"
        actions.append(f"{verb} {event} hook in {path}: {command}")
    return actions


def remove_hooks(doc: dict[str, Any], path: Path, created: set[str] | None) -> list[str]:
    """memd's hooks taken out of a settings document (and the containers memd made for them)."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return []
    actions = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        removed = _drop_memd_hooks(groups, set(KINDS))
        for command in removed:
            actions.append(f"removed {event} hook from {path}: {command}")
        if removed and not groups and assistant_files.drop_empty(f"hooks.{event}", created):
            del hooks[event]
    if actions and not hooks and assistant_files.drop_empty("hooks", created):
        del doc["hooks"]
    return actions


def _hook_entries(groups: list[Any], path: Path, event: str) -> list[dict[str, Any]]:
    entries = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
            raise ConfigError(f"{path}: hooks.{event} holds an entry that is not a matcher group")
        entries += [h for h in group.get("hooks", []) if isinstance(h, dict)]
    return entries


def _drop_memd_hooks(groups: list[Any], kinds: set[str]) -> list[str]:
    """Remove memd's hook commands of `kinds` from the matcher groups; return the commands."""
    removed: list[str] = []
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = []
        for hook in group["hooks"]:
            command = hook.get("command") if isinstance(hook, dict) else None
            if isinstance(command, str) and _memd_hook_kind(command) in kinds:
                removed.append(command)
            else:
                kept.append(hook)
        if len(kept) != len(group["hooks"]):
            group["hooks"] = kept
            if not kept:
                groups.remove(group)
    return removed


def _memd_hook_kind(command: str) -> str | None:
    """The hook kind when `command` is ``<memd> hook [options] <kind>`` (any memd path), else
    None."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    if len(tokens) < 3 or tokens[-1] not in KINDS or "hook" not in tokens[:-1]:
        return None
    at = len(tokens) - 2 - tokens[-2::-1].index("hook")
    options = tokens[at + 1 : -1]
    if any(o.startswith("--") and o not in _HOOK_OPTIONS for o in options[::2]):
        return None
    return tokens[-1] if _is_memd_launcher(tokens[:at]) else None


def _is_memd_launcher(tokens: list[str]) -> bool:
    return bool(tokens) and (Path(tokens[-1]).name == "memd" or tokens[-2:] == ["-m", "memd"])


# --- ~/.claude.json: mcpServers ---------------------------------------------------------


def _add_server(
    doc: dict[str, Any], path: Path, memd_argv: list[str], env: dict[str, str], made: set[str]
) -> list[str]:
    servers = assistant_files.container(doc, "mcpServers", dict, path, made, "mcpServers")
    wanted = server_entry(memd_argv, env)
    current = servers.get(SERVER_NAME)
    if current == wanted:
        return []
    if current is not None and not _is_memd_server(current):
        return [
            f"left mcpServers.{SERVER_NAME} in {path} alone: it does not run `memd mcp` "
            f"({json.dumps(current)}); rename it to let memd add its own"
        ]
    servers[SERVER_NAME] = wanted
    verb = "replaced" if current is not None else "added"
    return [f"{verb} MCP server '{SERVER_NAME}' in {path}: {shlex.join([*memd_argv, 'mcp'])}"]


def _remove_server(doc: dict[str, Any], path: Path, created: set[str] | None) -> list[str]:
    servers = doc.get("mcpServers")
    if not isinstance(servers, dict) or not _is_memd_server(servers.get(SERVER_NAME)):
        return []
    del servers[SERVER_NAME]
    if not servers and assistant_files.drop_empty("mcpServers", created):
        del doc["mcpServers"]
    return [f"removed MCP server '{SERVER_NAME}' from {path}"]


def _is_memd_server(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    tokens = [entry["command"], *args]
    return len(tokens) >= 2 and tokens[-1] == "mcp" and _is_memd_launcher(tokens[:-1])
