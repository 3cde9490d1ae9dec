"""`memd integrate aider`: Aider has no MCP and no hooks, so memd gives it a file to read.

Aider reads the files listed under ``read:`` in ``~/.aider.conf.yml`` into every chat, read-only,
and reads them again for each message. memd keeps ``~/.aider/memd.md`` (a file it owns, filled
by the daemon with the memories relevant now) and adds it to that list:

    read:
      - /home/you/.aider/memd.md  # memd integrate aider

The config file is edited as text, one line, so the user's comments and layout stay as they
are; a ``read:`` written as one value or a ``[...]`` list is rewritten as the same list, one item
per line. The result is parsed again and must equal the old settings plus memd's file, or
nothing is written. ``--undo`` takes out the lines carrying memd's comment.

A ``read:`` in a project's own ``.aider.conf.yml`` replaces the home one for that project (Aider
does not merge lists): add memd's file there too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from memd.core.errors import ConfigError
from memd.integrations.assistant_files import FileChange
from memd.integrations.config_edit import (
    Plan,
    Request,
    instructions_change,
    is_owned,
    read_text,
    real_path,
    run_cli,
)

TITLE = "Aider"
COMMENT = "# memd integrate aider"
CONTEXT_FILE = Path(".aider") / "memd.md"
_READ_KEY = re.compile(r"^read\s*:(.*)$")
_TOP_LEVEL = re.compile(r"^[^\s#-]")


def plan(request: Request, *, home: Path) -> Plan:
    """The changes `memd integrate aider` makes (or `--undo` takes back)."""
    config = real_path(Path(request.overrides.get("config") or home / ".aider.conf.yml"))
    context = Path(request.overrides.get("context-file") or home / CONTEXT_FILE)
    before = read_text(config)
    settings = _load(config, before)
    changes: list[FileChange] = []
    actions: list[str] = []
    if request.undo:
        after = remove_entry(before or "")
        if after != (before or ""):
            changes.append(FileChange(config, before, after))
            actions.append(f"removed {context} from read: in {config}")
    elif str(context) not in _read_list(settings.get("read")):
        after = add_entry(before or "", str(context))
        _verify(config, settings, after, str(context))
        changes.append(FileChange(config, before, after))
        actions.append(f"added {context} to read: in {config}")
    change, action, target = instructions_change(context, "aider", undo=request.undo)
    changes.append(change)
    actions += [action] if action else []
    return Plan(TITLE, tuple(changes), tuple(actions), request.undo, (target,))


def add_entry(text: str, path: str) -> str:
    """`text` with `path` added to its top-level ``read:`` list (made when there is none)."""
    lines = text.splitlines()
    keys = [i for i, line in enumerate(lines) if _READ_KEY.match(line)]
    item = f"{json.dumps(path)}  {COMMENT}"
    if not keys:
        prefix = text if not text or text.endswith("\n") else text + "\n"
        return f"{prefix}read:  {COMMENT}\n  - {item}\n"
    if len(keys) > 1:
        raise ConfigError(
            "the file has more than one top-level 'read:'", hint="keep one, then run again"
        )
    at = keys[0]
    rest = _READ_KEY.match(lines[at]).group(1).split(" #")[0].strip()  # type: ignore[union-attr]
    end = _block_end(lines, at)
    if rest:  # one value, or a [...] list, on the key's line: rewritten one item per line
        values = _read_list(yaml.safe_load(rest))
        block = ["read:"] + [f"  - {json.dumps(v)}" for v in values] + [f"  - {item}"]
        lines[at : at + 1] = block
    else:
        items = [line for line in lines[at + 1 : end] if line.lstrip().startswith("-")]
        indent = items[-1][: len(items[-1]) - len(items[-1].lstrip())] if items else "  "
        last = max((i for i in range(at + 1, end) if lines[i].lstrip().startswith("-")), default=at)
        lines.insert(last + 1, f"{indent}- {item}")
    return "\n".join(lines) + "\n"


def remove_entry(text: str) -> str:
    """`text` without the lines memd added (a ``read:`` memd made goes when nothing is left)."""
    lines = text.splitlines()
    kept = [
        line for line in lines if not (line.lstrip().startswith("-") and line.endswith(COMMENT))
    ]
    for i, line in enumerate(kept):
        if _READ_KEY.match(line) and line.endswith(COMMENT):
            if _block_end(kept, i) == i + 1:
                del kept[i]
            else:
                kept[i] = line[: -len(COMMENT)].rstrip()
            break
    if kept == lines:
        return text
    return "\n".join(kept) + ("\n" if kept else "")


def _block_end(lines: list[str], key: int) -> int:
    for i in range(key + 1, len(lines)):
        if _TOP_LEVEL.match(lines[i]):
            return i
    return len(lines)


def _read_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(
        f"'read:' holds {value!r}, not a file or a list of files", hint="it was not changed"
    )


def _load(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        settings = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{path} is not valid YAML: {exc}", hint="fix it by hand; it was not changed"
        ) from exc
    if settings is None:
        return {}
    if not isinstance(settings, dict):
        raise ConfigError(
            f"{path} does not hold YAML settings (key: value)", hint="it was not changed"
        )
    return settings


def _verify(path: Path, settings: dict[str, Any], after: str, added: str) -> None:
    """The edited text must read as the old settings with `added` appended to ``read``."""
    wanted = {**settings, "read": [*_read_list(settings.get("read")), added]}
    try:
        got = yaml.safe_load(after)
    except yaml.YAMLError:
        got = None
    if got != wanted:
        raise ConfigError(
            f"memd could not add its file to read: in {path} without changing other settings",
            hint=f"add `- {added}` under read: by hand; the file was not changed",
        )


def wired(home: Path) -> list[str]:
    """What of memd is in Aider's config now: its line under ``read:`` and its file."""
    config = home / ".aider.conf.yml"
    out = []
    try:
        text = read_text(real_path(config)) or ""
    except ConfigError:
        text = ""
    if any(line.lstrip().startswith("-") and line.endswith(COMMENT) for line in text.splitlines()):
        out.append(f"memd's file under read: in {config}")
    if is_owned(home / CONTEXT_FILE):
        out.append(f"memd's file {home / CONTEXT_FILE}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `memd integrate aider`."""
    return run_cli(
        "aider",
        argv,
        lambda request: plan(request, home=Path.home()),
        options=(("config", "Aider's config file (default: ~/.aider.conf.yml)"),
                 ("context-file", "the file memd keeps for Aider to read (default: ~/.aider/memd.md)")),
    )  # fmt: skip
