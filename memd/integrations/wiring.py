"""What every `memd integrate <assistant>` shares: the request (how the assistant starts memd,
the environment memd needs, undo or not), memd's MCP server entry, and applying a plan (files
written with their backups, then memd's instructions targets registered or dropped)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memd.conversations.sources import Where
from memd.integrations import assistant_files, instructions
from memd.integrations.assistant_files import FileChange, IntegrationPlan

SERVER_NAME = "memd"


@dataclass(frozen=True, slots=True)
class Request:
    """One `memd integrate` run for one assistant.

    `memd_argv` starts memd (absolute: assistants start it with their own PATH); `env` is what
    it needs to find this memd (MEMD_HOME, MEMD_SOCKET, …), written into the assistant's config
    because assistants start MCP servers and hooks with an environment of their own; `block(name)`
    is the text of memd's instructions block for an assistant now.
    """

    memd_argv: list[str]
    env: dict[str, str]
    state_dir: Path
    where: Where
    remove: bool = False
    dry_run: bool = False
    block: Callable[[str], str] = field(default=lambda assistant: "")

    def state_file(self, name: str) -> Path:
        return self.state_dir / f"{name}-integration.json"

    @property
    def targets(self) -> instructions.Targets:
        return instructions.Targets(self.state_dir / "instructions.json")


@dataclass(slots=True)
class Draft:
    """A plan being built: the file changes, what they do, the instructions target to register
    (or drop), and the containers memd created in each file (for an undo to remove)."""

    title: str
    changes: list[FileChange] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    target: instructions.Target | None = None
    made: dict[str, list[str]] = field(default_factory=dict)

    def change(self, path: Path, before: str | None, after: str | None) -> None:
        backup = (
            path.with_name(path.name + ".bak") if before is not None and after != before else None
        )
        self.changes.append(FileChange(path, before, after, backup))

    def plan(self, req: Request) -> IntegrationPlan:
        return IntegrationPlan(
            tuple(self.changes), tuple(self.actions), req.remove, req.dry_run, self.title
        )


def mcp_command(memd_argv: Sequence[str]) -> list[str]:
    return [*memd_argv, "mcp"]


def is_memd_command(tokens: Sequence[Any]) -> bool:
    """Whether a command line (as a list) is ``<memd> mcp`` with any memd path."""
    if len(tokens) < 2 or not all(isinstance(t, str) for t in tokens) or tokens[-1] != "mcp":
        return False
    launcher = list(tokens[:-1])
    return Path(launcher[-1]).name == "memd" or launcher[-2:] == ["-m", "memd"]


def block_change(draft: Draft, req: Request, target: instructions.Target) -> None:
    """memd's instructions block put into (or, undoing, taken out of) `target`'s file."""
    path = assistant_files.real_path(Path(target.path))
    before = assistant_files.read(path)
    if req.remove:
        if before is None:
            return
        after = None if target.kind == "file" else instructions.remove_block(before)
        verb = "removed memd's file" if target.kind == "file" else "removed memd's block from"
    else:
        block = instructions.body(target.assistant, req.block(target.assistant))
        after = (
            target.head + block
            if target.kind == "file"
            else instructions.apply_block(before, block)
        )
        verb = "wrote memd's file" if target.kind == "file" else "put memd's block into"
    if after != before:
        draft.change(path, before, after)
        draft.actions.append(f"{verb} {path} (kept current by the daemon)" if not req.remove
                             else f"{verb} {path}")  # fmt: skip
    draft.target = target


def apply(req: Request, name: str, draft: Draft) -> IntegrationPlan:
    """Write the draft's files (unless a dry run), then record what memd created and register
    (or drop) its instructions target."""
    plan = draft.plan(req)
    if req.dry_run:
        return plan
    for c in plan.files:
        if not c.changed:
            continue
        if c.after is None:
            if c.backup is not None:
                assistant_files.write_atomic(c.backup, c.before or "")
            c.path.unlink(missing_ok=True)
        else:
            assistant_files.write_atomic(c.path, c.after, backup=c.backup)
    state_file = req.state_file(name)
    state = assistant_files.read_state(state_file)
    for path, made in draft.made.items():
        if req.remove:
            state.pop(path, None)
        else:
            state[path] = sorted(set(state.get(path, [])) | set(made))
    assistant_files.write_state(state_file, state)
    if draft.target is not None:
        if req.remove:
            req.targets.drop(draft.target.path)
        else:
            req.targets.add(draft.target)
    return plan


def created(req: Request, name: str, path: Path) -> set[str] | None:
    """The containers memd created in `path` for `name` (None when it has no record of the
    file: an undo then drops the containers it left empty)."""
    record = assistant_files.read_state(req.state_file(name)).get(str(path))
    return set(record) if isinstance(record, list) else None


def shell(argv: Sequence[str]) -> str:
    return shlex.join(list(argv))
