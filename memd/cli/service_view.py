"""`memd service install|uninstall --json`: the plan as it is shown (`PlanView`, a secret
file's content never in it), and what carrying it out did."""

from __future__ import annotations

from msgspec import UNSET, Struct, UnsetType


class WriteView(Struct, kw_only=True):
    """A file to write, with its content, or only `secret` when it holds one."""

    write: str
    mode: int
    content: str | UnsetType = UNSET
    secret: bool | UnsetType = UNSET


class MakeDirView(Struct, kw_only=True):
    mkdir: str
    mode: int


class RemoveView(Struct, kw_only=True):
    remove: str


class RunView(Struct, kw_only=True):
    run: list[str]
    check: bool


StepView = WriteView | MakeDirView | RemoveView | RunView


class CommandRan(Struct, kw_only=True):
    """A command of the plan as it ran: its exit code and what it said on stderr."""

    run: list[str]
    returncode: int
    stderr: str


class PlanView(Struct, kw_only=True):
    """`memd service install|uninstall --json`: the plan (`dry_run` with --dry-run), and once
    carried out, the files written and removed and the commands run."""

    dry_run: bool | UnsetType = UNSET
    action: str
    platform: str
    steps: list[StepView]
    notes: list[str]
    written: list[str] | UnsetType = UNSET
    removed: list[str] | UnsetType = UNSET
    commands: list[CommandRan] | UnsetType = UNSET
