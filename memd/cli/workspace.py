"""`memd workspace add|remove|list`: the folders kept outside the home that are projects
(`memory.workspaces` in the settings file).

A folder a person names from their own shell (`memd remember --project`, the hooks) is taken
wherever it is; this list is what lets a project outside the home be named by anyone else too
(an assistant's model over MCP). The settings file is edited in place with tomlkit (comments,
other keys and layout kept), the result is read back to check it says only what was meant, and
a running daemon is asked to read it again (SIGHUP).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memd.core.errors import ConfigError, InvalidParams
from memd.core.fsio import atomic_write, make_private_dir

TABLE, KEY = "memory", "workspaces"


def folder_of(raw: str) -> str:
    """The folder `raw` names (made absolute where the command runs); it must exist."""
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        raise InvalidParams(f"{raw}: not an existing folder")
    return path


def with_workspaces(text: str, values: Sequence[str]) -> str:
    """`text` (a settings file) with `memory.workspaces` set to `values`, its other keys,
    comments and layout kept (tomlkit); `ConfigError` when it is not TOML memd can edit."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
        table = doc.get(TABLE)
        if table is None:
            table = tomlkit.table()
            doc[TABLE] = table
        table[KEY] = list(values)
        new = tomlkit.dumps(doc)
    except (TOMLKitError, TypeError, AttributeError) as exc:
        raise ConfigError(f"the settings file cannot be edited: {exc}") from None
    _check(text, new, values)
    return new


def _check(old: str, new: str, values: Sequence[str]) -> None:
    """The edited file must read as the old one with only `memory.workspaces` changed."""
    try:
        before, after = tomllib.loads(old), tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the settings file is not valid TOML: {exc}") from None
    before.setdefault(TABLE, {})
    if not isinstance(before[TABLE], dict):
        raise ConfigError(f"[{TABLE}] is not a table in the settings file")
    before[TABLE][KEY] = list(values)
    if after != before:
        raise ConfigError(f"the settings file says [{TABLE}] in a way memd does not edit")


def configured(cfg: Path) -> tuple[str, list[str]]:
    """(the settings file's text, its `memory.workspaces`)."""
    try:
        text = cfg.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "", []
    doc: dict[str, Any] = tomllib.loads(text)
    values = doc.get(TABLE, {}).get(KEY, [])
    return text, [str(v) for v in values] if isinstance(values, list) else []


def change(cfg: Path, folder: str, *, add: bool) -> tuple[bool, list[str]]:
    """Add or remove `folder` in the file's `memory.workspaces`: (changed, the new list)."""
    text, values = configured(cfg)
    same = [v for v in values if os.path.abspath(os.path.expanduser(v)) == folder]
    if add == bool(same):
        return False, values
    new_values = [*values, folder] if add else [v for v in values if v not in same]
    new = with_workspaces(text, new_values)
    make_private_dir(cfg.parent)
    # A file that exists keeps its mode; a new one is the user's alone.
    atomic_write(cfg, new if new.endswith("\n") else new + "\n")
    return True, new_values
