"""What `memd integrate` shares for the assistants configured through files memd edits or owns
(Cline, Roo Code, Continue, Aider): a planned change per file, shown as a diff, written
atomically with the previous content kept as ``<name>.bak``, and the memd command an assistant
starts.

An integration never clobbers: a file that cannot be read or parsed is left untouched and named
in a `ConfigError`; only memd's own entries (recognised by the command they run) and files memd
owns (recognised by `OWNED_MARK`) are ever changed or removed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.core.errors import ConfigError, MemdError
from memd.core.fsio import atomic_write
from memd.integrations import instructions
from memd.integrations.assistant_files import FileChange

SERVER_NAME = "memd"
# The first line of a file memd owns: `--undo` deletes only files that start with it.
OWNED_MARK = "<!-- memd: this file is written and kept current by memd; edits here are replaced -->"


@dataclass(frozen=True, slots=True)
class Plan:
    """What one `memd integrate <assistant>` did, or would do in a dry run."""

    title: str
    changes: tuple[FileChange, ...]
    actions: tuple[str, ...]
    undo: bool = False
    # The instruction files the daemon keeps current (registered when wired, dropped on undo).
    targets: tuple[instructions.Target, ...] = ()

    @property
    def changed(self) -> bool:
        return any(c.changed for c in self.changes)

    def diff(self) -> str:
        return "".join(c.diff() for c in self.changes)

    def summary(self, *, dry_run: bool) -> str:
        """Lines for the CLI: one per action, then what was written where."""
        lines = list(self.actions)
        if not self.changed:
            state = "free of memd" if self.undo else "set up for memd"
            lines.append(f"nothing to change: {self.title} is already {state}")
        elif dry_run:
            lines.append("dry run: no file was written")
        else:
            for c in self.changes:
                if not c.changed:
                    continue
                saved = f" (previous content in {backup_path(c.path)})" if c.before else ""
                verb = "removed" if c.after is None else "wrote"
                lines.append(f"{verb} {c.path}{saved}")
        return "\n".join(lines)


def apply(plan: Plan) -> None:
    """Write the plan's changed files (atomically, the old content in ``<name>.bak``)."""
    for c in plan.changes:
        if not c.changed:
            continue
        if c.before is not None and c.path.exists():
            shutil.copy2(c.path, backup_path(c.path))
        if c.after is None:
            c.path.unlink(missing_ok=True)
        else:
            atomic_write(c.path, c.after, new_mode=0o600)


def register(plan: Plan, targets: instructions.Targets) -> None:
    """Apply the plan and register its instruction files with the daemon's keeper (or drop
    them): dropped before the files go, so the keeper never writes one back; added after."""
    if plan.undo:
        for target in plan.targets:
            targets.drop(target.path)
    apply(plan)
    if not plan.undo:
        for target in plan.targets:
            targets.add(target)


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + ".bak")


def real_path(path: Path) -> Path:
    """The file to write for `path`: through a symlink (a dotfile manager's link stays a link)."""
    path = path.expanduser()
    return path.resolve() if path.is_symlink() else path.absolute()


def read_text(path: Path) -> str | None:
    """A config file's text; None when it does not exist. Raises `ConfigError` when it cannot
    be read (the file is then not touched)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", hint="it was not changed") from exc


def owned_change(
    path: Path, text: str | None, *, mark: str = OWNED_MARK, head: str = ""
) -> tuple[FileChange, str]:
    """The change that makes `path` a memd-owned file holding `head`, `mark` and `text` (None:
    removes it), and a line saying what it does. `mark` (a comment in the file's own syntax,
    after `head` when the format needs something first, like front matter) is how memd knows
    the file is its own: a file without it is never replaced or removed."""
    target = real_path(path)
    before = read_text(target)
    if before is not None and mark not in before[: len(head) + len(mark) + 200]:
        if text is None:
            return FileChange(target, before, before), f"left {target} alone: memd did not write it"
        raise ConfigError(
            f"{target} exists and was not written by memd",
            hint="move it away (memd keeps its own file there), then run again",
        )
    after = None if text is None else f"{head}{mark}\n{text}"
    return FileChange(target, before, after), ""


PLACEHOLDER = "(memd fills this in when its daemon runs: `memd serve`)"


def instructions_change(
    path: Path, assistant: str, *, undo: bool, head: str = ""
) -> tuple[FileChange, str, instructions.Target]:
    """memd's instructions file for `assistant` at `path` (a file memd owns, which the daemon
    keeps filled with the memory that matters now: `memd.integrations.instructions`), or its
    removal; a file there that memd did not write is never replaced or removed."""
    target_path = real_path(path)
    target = instructions.Target(assistant, str(target_path), "file", head)
    before = read_text(target_path)
    start = before[: len(head) + 400] if before is not None else ""
    if before is not None and instructions.BEGIN not in start and OWNED_MARK not in start:
        if undo:
            return (
                FileChange(target_path, before, before),
                f"left {target_path} alone: memd did not write it",
                target,
            )
        raise ConfigError(
            f"{target_path} exists and was not written by memd",
            hint="move it away (memd keeps its own file there), then run again",
        )
    if undo:
        after = None
    elif before is not None and instructions.BEGIN in start:
        after = before  # written before: the daemon keeps it current
    else:
        after = head + instructions.body(assistant, PLACEHOLDER)
    return FileChange(target_path, before, after), "", target


def is_owned(path: Path, head: str = "") -> bool:
    """Whether `path` is a file memd owns (its marker at the top)."""
    try:
        start = read_text(real_path(path))
    except ConfigError:
        return False
    start = (start or "")[: len(head) + 400]
    return instructions.BEGIN in start or OWNED_MARK in start


def server_command(memd_argv: Sequence[str]) -> tuple[str, list[str]]:
    """(command, args) that start memd's MCP server."""
    if not memd_argv:
        raise ConfigError("memd_argv is empty: give the command that starts memd")
    return memd_argv[0], [*memd_argv[1:], "mcp"]


def is_memd_server(entry: Any) -> bool:
    """Whether a config entry starts ``<memd> mcp`` (any memd path or ``python -m memd``)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    tokens = [entry["command"], *args]
    if len(tokens) < 2 or tokens[-1] != "mcp":
        return False
    launcher = tokens[:-1]
    return Path(launcher[-1]).name == "memd" or launcher[-2:] == ["-m", "memd"]


def memd_argv_default() -> list[str]:
    """This installation's memd command (see `memd.integrations.claude_code`)."""
    from memd.integrations.claude_code import default_memd_argv

    return default_memd_argv()


@dataclass(frozen=True, slots=True)
class Request:
    """What the command line asked: undo, dry run, the memd command, the environment memd's
    server needs, and the file or folder overrides the assistant accepts."""

    undo: bool
    dry_run: bool
    memd_argv: list[str]
    env: Mapping[str, str]
    overrides: Mapping[str, Path | None]


def run_cli(
    name: str,
    argv: Sequence[str] | None,
    plan: Callable[[Request], Plan],
    options: Sequence[tuple[str, str]] = (),
) -> int:
    """Entry point of `memd integrate <name> [--dry-run] [--undo] [--memd CMD] [options]`.

    `options` are (flag, help) of file or folder overrides, handed to `plan` by their name.
    """
    parser = argparse.ArgumentParser(prog=f"memd integrate {name}")
    parser.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    parser.add_argument("--undo", "--remove", dest="undo", action="store_true",
                        help="take memd's entries and files out again")  # fmt: skip
    parser.add_argument("--memd", help="command that starts memd (default: this installation)")
    for flag, help_text in options:
        parser.add_argument(f"--{flag}", type=Path, help=help_text)
    args = parser.parse_args(argv)
    try:
        from memd.core.settings import load

        request = Request(
            undo=args.undo,
            dry_run=args.dry_run,
            memd_argv=shlex.split(args.memd) if args.memd else memd_argv_default(),
            env=load().location_env(),
            overrides={flag: getattr(args, flag.replace("-", "_")) for flag, _ in options},
        )
        settings = load()
        result = plan(request)
        if not args.dry_run:
            register(result, instructions.Targets.of(settings))
    except MemdError as exc:
        hint = f"\nhint: {exc.hint}" if exc.hint else ""
        sys.stderr.write(f"memd integrate {name}: {exc}{hint}\n")
        return 1
    if args.dry_run:
        sys.stdout.write(result.diff())
    sys.stdout.write(result.summary(dry_run=args.dry_run) + "\n")
    return 0


def home() -> Path:
    """The user's home folder (``HOME``, as tests set it)."""
    return Path(os.path.expanduser("~"))
