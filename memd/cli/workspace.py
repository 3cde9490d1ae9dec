"""`memd workspace add|remove|list`: the folders kept outside the home that are projects
(`memory.workspaces` in the settings file).

A folder a person names from their own shell (`memd remember --project`, the hooks) is taken
wherever it is; this list is what lets a project outside the home be named by anyone else too
(an assistant's model over MCP). The settings file is edited in place: only the one key's lines
change (comments and every other line are kept), the result is read back to check it says what
was meant, and a running daemon is asked to read it again (SIGHUP).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memd.core.errors import ConfigError, InvalidParams
from memd.core.fsio import atomic_write, make_private_dir

TABLE, KEY = "memory", "workspaces"
_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"' -]+?)\s*\]\s*(?:#.*)?$")
_KEY_LINE = re.compile(rf"^\s*{KEY}\s*=")


def folder_of(raw: str) -> str:
    """The folder `raw` names (made absolute where the command runs); it must exist."""
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        raise InvalidParams(f"{raw}: not an existing folder")
    return path


def render(values: Sequence[str]) -> str:
    """`workspaces = [...]` as one TOML line."""
    import json

    return f"{KEY} = [{', '.join(json.dumps(v) for v in values)}]"


def with_workspaces(text: str, values: Sequence[str]) -> str:
    """`text` (a settings file) with `[memory] workspaces` set to `values`, every other line
    kept; `ConfigError` when the file says it in a way this cannot edit safely."""
    lines = text.split("\n")
    table = _table_span(lines)
    line = render(values)
    if table is None:
        body = "\n".join(lines).rstrip("\n")
        new = (body + "\n\n" if body else "") + f"[{TABLE}]\n{line}\n"
    else:
        start, end = table
        found = _key_span(lines, start + 1, end)
        if found is None:
            lines.insert(start + 1, line)
        else:
            lines[found[0] : found[1]] = [line]
        new = "\n".join(lines)
    _check(text, new, values)
    return new


def _table_span(lines: list[str]) -> tuple[int, int] | None:
    """(header line, end) of the `[memory]` table, or None when there is none."""
    start = None
    for i, raw in enumerate(lines):
        m = _HEADER.match(raw)
        if not m:
            continue
        if start is not None:
            return start, i
        if m.group(1).strip() == TABLE:
            start = i
    return (start, len(lines)) if start is not None else None


def _key_span(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """(first line, end) of the `workspaces = …` value inside the table, or None."""
    for i in range(start, end):
        if not _KEY_LINE.match(lines[i]):
            continue
        for j in range(i + 1, end + 1):
            try:
                tomllib.loads("\n".join(lines[i:j]))
            except tomllib.TOMLDecodeError:
                continue
            return i, j
        raise ConfigError(f"cannot find where `{KEY} = …` ends in the [{TABLE}] table")
    return None


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
