"""The `memd` command line: its arguments (`build_parser`) and dispatch (`main`).

The commands themselves are in `memd.cli.commands`, by group; they are imported when the
parser is built, after the commands that parse their own arguments (`hook`, `mcp`,
`integrate`, `ui`) were handed off, so an assistant's hook does not load them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from memd import __version__
from memd.cli.argv import bounded
from memd.core.errors import MemdError

Command = Callable[[argparse.Namespace], int]
# The socket's own bounds (memd.api.messages.base: Limit, Budget), checked while parsing so the
# error names the flag.
LIMIT = bounded(1, 1000)
MAX_BUDGET = 200_000


class _Unbuilt(argparse.ArgumentParser):
    """The parser of a command the command line does not name (`build_parser`'s `only`): what
    is added to it goes nowhere. Building all ~30 commands' parsers took ~11 ms of CPU, most
    of a `memd status` that finds no daemon, to parse the words of one."""

    def __init__(self, common: argparse.ArgumentParser) -> None:  # an ArgumentParser's set-up
        self._common = common  # is what it saves

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        return argparse.Action([], "unbuilt")

    def set_defaults(self, **kwargs: Any) -> None:
        pass


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command but the delegated ones (`DELEGATED`); given `only`, of that
    command alone (none when it names no command): what parsing its words needs."""
    from memd.cli.commands import conversations, daemon, history, memory, transfer

    common = argparse.ArgumentParser(add_help=False)
    _common_options(common)
    p = argparse.ArgumentParser(prog="memd", description="A local memory daemon for AI assistants.")
    p.add_argument("--version", action="version", version=f"memd {__version__}")
    # Listed in `memd --help`; given before the command they are moved after it (`main`).
    _common_options(p.add_argument_group("options of every command (before or after it)"), top=True)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, fn: Command, help: str) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _Unbuilt(common)
        sp = sub.add_parser(name, parents=[common], help=help, description=help)
        # Its own default, not the option's: a command's parser holds the options of every
        # command (`common`) as the same objects (argparse's `parents`), so a default set on
        # one of them is every command's.
        sp.set_defaults(func=fn, default_timeout=LONG_TIMEOUT_S if name in LONG else TIMEOUT_S)
        return sp

    add("serve", daemon.cmd_serve, "run the daemon in the foreground")
    add("status", daemon.cmd_status, "daemon, index, watcher and problem files")
    sp = add("search", memory.cmd_search, "search memory and past conversations, ranked together")
    sp.add_argument("query")
    sp.add_argument(
        "--limit",
        type=LIMIT,
        default=10,
        help="hits on the page (memory and conversations ranked together)",
    )
    sp.add_argument("--scope", choices=["all", "memory", "conversations"], default="all")
    sp.add_argument("--conversations", action="store_true", help="past conversations only")
    sp.add_argument(
        "--source",
        default="",
        help="only turns said with this assistant (claude-code, codex, gemini, opencode, …)",
    )
    sp = add(
        "recall",
        conversations.cmd_recall,
        "recall past conversations: sessions, a topic, one session, within one",
    )
    sp.add_argument("query", nargs="*")
    sp.add_argument("--mode", choices=["sessions", "topic", "session", "within"],
                    help="default: from the arguments (query → topic, --session → session/within)")  # fmt: skip
    sp.add_argument("--session", dest="session_id")
    sp.add_argument("--project")
    sp.add_argument("--agent", dest="agent_id")
    sp.add_argument(
        "--source",
        default="",
        help="only turns said with this assistant (claude-code, codex, gemini, opencode, …)",
    )
    sp.add_argument("--limit", type=LIMIT, default=20)
    add("ingest", conversations.cmd_ingest, "store conversation turns given as JSON lines on stdin")
    sp = add(
        "import",
        transfer.cmd_import,
        "import a memd export, a ChatGPT export, a Claude Code transcript folder or a log file",
    )
    sp.add_argument("path")
    sp.add_argument("--format", choices=["memd", "chatgpt", "claude-code", "jsonl", "openai"])
    sp = add(
        "export",
        transfer.cmd_export,
        "write sessions with their chats, memories and the Markdown tree to one JSON file",
    )
    sp.add_argument("file")
    sp.add_argument(
        "--no-tree", action="store_true", help="leave the Markdown files out (memories are kept)"
    )
    sp.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    sp = add("context", memory.cmd_context, "the memory block an assistant should get now")
    sp.add_argument("query", nargs="?", default="")
    sp.add_argument("--budget", dest="budget_tokens", metavar="TOKENS", type=bounded(0, MAX_BUDGET),
                    help="token budget (default: context.budget_tokens, 2000)")  # fmt: skip
    sp.add_argument(
        "--project",
        help="workspace path or project slug (default: the workspace of the current folder)",
    )
    sp.add_argument("--agent", dest="agent_id")
    sp.add_argument("--session", dest="session_id")
    sp.add_argument(
        "--source",
        default="",
        help="only turns said with this assistant (claude-code, codex, gemini, opencode, …)",
    )
    sp = add("remember", memory.cmd_remember, "save a memory (user scope unless --project/--agent)")
    sp.add_argument("text", nargs="+")
    sp.add_argument(
        "--project", dest="project_flag", action="store_true", help="this workspace's memory"
    )
    sp.add_argument("--project-path", dest="project", help="workspace (default: current folder)")
    sp.add_argument("--agent", dest="agent_id")
    sp.add_argument(
        "--type", help="personal, preference, skill, project, task, decision, knowledge"
    )
    sp = add(
        "forget",
        memory.cmd_forget,
        "remove memory items by id or matching text (a conversation: --session ID)",
    )
    sp.add_argument("what", nargs="*")
    sp.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    sp.add_argument(
        "--session",
        dest="session_id",
        help="forget this conversation (its id or the journal's short id) everywhere",
    )
    sp.add_argument("--turn", dest="turn_ids", action="append",
                    help="with --session: only this turn (repeatable)")  # fmt: skip
    sp = add("memories", memory.cmd_memories, "list the memories in effect")
    sp.add_argument("--scope", choices=["user", "project", "agent"])
    sp.add_argument("--all", action="store_true", help="include superseded items")
    sp.add_argument("--limit", type=bounded(0), help=f"items to show (default {memory.MEMORIES_PAGE}; with"
                    " --json all; 0: all)")  # fmt: skip
    sp.add_argument(
        "--offset", type=bounded(0), default=0, help="skip this many first (the next page)"
    )
    sp = add(
        "history", history.cmd_history, "changes of the memory tree, newest first (PATH: a file)"
    )
    sp.add_argument("path", nargs="?", help="a file or folder (here, or in the memory tree)")
    sp.add_argument("--since", help='2026-11-01, "2026-11-01 14:30", "2 days ago", "3 hours'
                    ' ago", today or yesterday')  # fmt: skip
    sp.add_argument("--limit", type=LIMIT, default=50)
    sp = add("show", history.cmd_show, "one change of the memory tree, with its diff")
    sp.add_argument("change", help="a change id from `memd history`")
    sp = add(
        "undo", history.cmd_undo, "reverse a change (or every change of a job run) as a new change"
    )
    sp.add_argument("change", nargs="?", help="a change id from `memd history`")
    sp.add_argument("--run", help="undo all a job run wrote (its id: `run` in the job's counts)")
    sp.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    add("enable", memory.cmd_switch, "turn memory on")
    add("disable", memory.cmd_switch, "turn memory off (context is empty, nothing is written)")
    sp = add("reindex", daemon.cmd_reindex, "catch up with the files, or rebuild the index")
    sp.add_argument(
        "--full", action="store_true", help="rebuild into a new database and swap it in"
    )
    for job, help in (
        ("extract", "extract facts and preferences from new conversation turns"),
        ("summarize", "summarise idle sessions"),
        ("archive", "move old journal days and expired/decayed memories to archive/"),
    ):
        sp = add(job, daemon.cmd_job, help + " (--now runs it; without, shows its state)")
        sp.add_argument("--now", action="store_true", help="run it now and print what it did")
        sp.set_defaults(job_name=job)
    sp = add(
        "sync", transfer.cmd_sync, "cloud sync: queue status, run now, create the cloud tables"
    )
    sp.add_argument("action", nargs="?", choices=["status", "init-schema"], default="status")
    sp.add_argument("--now", action="store_true", help="pull, then push everything queued, now")
    sp.add_argument(
        "--retry-parked", action="store_true", help="with --now: retry parked operations"
    )
    add("config", daemon.cmd_config, "every setting with its value, env override and help")
    sp = add(
        "workspace",
        daemon.cmd_workspace,
        "list, add or remove a project folder kept outside your home (memory.workspaces)",
    )
    sp.add_argument("action", choices=["list", "add", "remove"])
    sp.add_argument("path", nargs="?", help="the folder (add, remove)")
    if only is None:  # listed in `memd --help`; `main` hands them off before parsing
        sub.add_parser(
            "hook", help="Claude Code hooks: hook session-start|user-prompt (stdin JSON)"
        )
        sub.add_parser("mcp", help="stdio MCP server forwarding to the daemon")
        sub.add_parser(
            "integrate",
            help="wire an assistant to memd: integrate claude-code|codex|gemini|opencode|cline|"
            "roo|continue|aider [--dry-run] [--undo], or --list",
        )
        sub.add_parser("ui", help="open the memory page in a browser [--no-browser] [--port N]")
    sp = add(
        "service",
        daemon.cmd_service,
        "install, remove or inspect memd as a user service (systemd/launchd)",
    )
    sp.add_argument("action", choices=["install", "uninstall", "status"])
    sp.add_argument("--dry-run", action="store_true", help="print what would be written and run")
    sp.add_argument("--env", action="append", metavar="NAME",
                    help="install: copy this variable (e.g. ANTHROPIC_API_KEY) from this shell into"
                         " the service's environment file, readable only by you")  # fmt: skip
    add(
        "doctor",
        daemon.cmd_doctor,
        "check SQLite, folders, limits, daemon, service, keys, cloud and index",
    )
    sp = add("demo", daemon.cmd_demo, "start a daemon on a throwaway home and show what it does")
    sp.add_argument("--home", help="use this MEMD_HOME instead of a temp folder")
    sp.add_argument("--serve", action="store_true", help="keep the daemon running afterwards")
    return p


def _common_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, top: bool = False
) -> None:
    """The options every command takes (`GLOBAL_OPTIONS`); `top`: for the help only."""
    unset: dict[str, Any] = {"default": argparse.SUPPRESS} if top else {}
    p.add_argument("--config", help="settings file (default: the platform config dir)", **unset)
    p.add_argument("--json", action="store_true", help="print JSON", **unset)
    p.add_argument("--timeout", type=float, help=f"socket timeout in seconds (default"
                   f" {TIMEOUT_S:g}; {LONG_TIMEOUT_S:g} for {', '.join(sorted(LONG))})",
                   **(unset or {"default": None}))  # fmt: skip
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR", **unset)


# How long a command waits for the daemon's answer, unless `--timeout` says; the commands
# whose work can take minutes (a whole import or export, a rebuilt index, a job run now, a
# long stdin) wait longer.
TIMEOUT_S = 30.0
LONG_TIMEOUT_S = 600.0
LONG = frozenset(
    {"import", "export", "reindex", "extract", "summarize", "archive", "sync", "ingest"}
)

# Commands with their own argument parsing, dispatched before argparse so hooks start fast.
DELEGATED = {
    "hook": "memd.integrations.hooks",
    "mcp": "memd.integrations.mcp_server",
    "integrate": "memd.integrations.integrate",
    "ui": "memd.ui.run",
}


def _delegate(argv: list[str], given: list[str]) -> int:
    import importlib

    cmd, rest = argv[0], argv[1:]
    if given:
        rest = _globals_for(cmd, given) + rest
    module = importlib.import_module(DELEGATED[cmd])
    if cmd in ("hook", "mcp", "integrate"):
        # They sit below the composition root: without a daemon they answer through the CLI's
        # read-only engine (loaded only then).
        from memd.cli.offline import answer_offline

        return int(module.main(rest, offline=answer_offline))
    return int(module.main(rest))


def _globals_for(cmd: str, given: list[str]) -> list[str]:
    """Global options given before a delegated command: `memd ui` takes `--config` and
    `--timeout` itself; the others read the settings file named by MEMD_CONFIG."""
    from memd.cli.argv import UsageError

    if cmd == "ui":
        return given
    for i, word in enumerate(given):
        name, eq, value = word.partition("=")
        if name != "--config":
            if not word.startswith("-"):
                continue
            raise UsageError(f"{name} is not an option of `memd {cmd}`")
        value = value if eq else given[i + 1]
        if not os.path.isfile(value):
            raise MemdError(
                f"{value}: no such settings file", hint="check the path given to --config"
            )
        os.environ["MEMD_CONFIG"] = os.path.abspath(value)
    return []


def _run(args: argparse.Namespace) -> int:
    if args.timeout is None:  # not given: the command's own (`TIMEOUT_S`, `LONG`)
        args.timeout = args.default_timeout
    return int(args.func(args))


def main(argv: list[str] | None = None) -> int:
    """Run `memd ARGV` (default: the process's arguments) and return its exit code."""
    from memd.cli import argv as cl

    # Everything memd creates (index, memory files, exports, snapshots, the history repository)
    # is the user's alone unless it says otherwise; files it replaces keep their own mode.
    os.umask(0o077)
    words = list(sys.argv[1:] if argv is None else argv)
    parser: argparse.ArgumentParser | None = None
    try:
        given, rest = cl.hoist_globals(words)
        if rest and rest[0] in DELEGATED:
            return _delegate(rest, given)
        named = rest[0] if rest and not rest[0].startswith("-") else None
        parser = build_parser(only=named)
        commands = cl.command_parsers(parser)
        if named is not None and named not in commands:
            raise cl.unknown_command(named, list(cl.command_parsers(build_parser())))
        args, extras = parser.parse_known_args(rest[:1] + given + rest[1:])
        parser = commands.get(getattr(args, "command", None) or "", parser)
        if extras:
            raise cl.unknown_flag(parser, extras)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return _run(args)
    except cl.UsageError as exc:
        print(f"{exc.usage}{exc.prog}: error: {exc}", file=sys.stderr)
        return 2
    except MemdError as exc:
        print(f"memd: {cl.flag_names(str(exc), parser)}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
