"""`memd integrate continue`: memd's MCP server and instructions as two files memd owns in
Continue's global folder (``$CONTINUE_GLOBAL_DIR`` or ``~/.continue``).

Continue (1.0 and later, the ``config.yaml`` era) reads, besides ``config.yaml``, every block
file of ``~/.continue/mcpServers/`` and every rule of ``~/.continue/rules/`` (its
``getAllDotContinueDefinitionFiles(…, {includeGlobal: true})``). So memd never edits the
user's ``config.yaml``; it writes

- ``mcpServers/memd.yaml``: a block ``{name, version, schema: v1, mcpServers: [{name: memd,
  type: stdio, command, args: [..., mcp], env}]}``;
- ``rules/memd.md``: a rule with ``alwaysApply: true`` front matter, in every chat's system
  prompt, kept current by the daemon.

Continue before 1.0 (``config.json`` only) reads neither folder: `integrate` says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from memd.conversations import editors
from memd.integrations.config_edit import (
    Plan,
    Request,
    instructions_change,
    is_owned,
    owned_change,
    read_text,
    run_cli,
    server_command,
)

TITLE = "Continue"
BLOCK_FILE = Path("mcpServers") / "memd.yaml"
RULE_FILE = Path("rules") / "memd.md"
YAML_MARK = "# memd: this file is written and kept current by memd; edits here are replaced"
RULE_HEAD = "---\nname: memd memory\ndescription: what memd remembers for every assistant\nalwaysApply: true\n---\n"


def block_text(memd_argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The MCP server block (YAML; its values written as JSON, which YAML reads as they are)."""
    command, args = server_command(memd_argv)
    lines = [
        "name: memd",
        "version: 1.0.0",
        "schema: v1",
        "mcpServers:",
        "  - name: memd",
        "    type: stdio",
        f"    command: {json.dumps(command)}",
        f"    args: {json.dumps(args)}",
    ]
    if env:
        lines.append(f"    env: {json.dumps(dict(sorted(env.items())))}")
    return "\n".join(lines) + "\n"


def plan(request: Request, *, home: Path, env: Mapping[str, str]) -> Plan:
    """The changes `memd integrate continue` makes (or `--undo` takes back)."""
    root = Path(request.overrides.get("dir") or editors.continue_dir(home, env))
    block = None if request.undo else block_text(request.memd_argv, request.env)
    rule, rule_action, target = instructions_change(
        root / RULE_FILE, "continue", undo=request.undo, head=RULE_HEAD
    )
    changes, actions = [], []
    for change, action in (
        owned_change(root / BLOCK_FILE, block, mark=YAML_MARK),
        (rule, rule_action),
    ):
        changes.append(change)
        actions += [action] if action else []
    if not request.undo and (root / "config.json").exists() and not (root / "config.yaml").exists():
        actions.append(
            f"note: {root} has only config.json (Continue before 1.0), which does not read "
            "mcpServers/ or rules/: update Continue, or add memd's server to config.json by hand"
        )
    return Plan(TITLE, tuple(changes), tuple(actions), request.undo, (target,))


def wired(home: Path, env: Mapping[str, str]) -> list[str]:
    """What of memd is in Continue's folder now: its server block and its rule."""
    root = editors.continue_dir(home, env)
    out = []
    block = root / BLOCK_FILE
    if block.is_file() and YAML_MARK in (read_text(block) or "")[:200]:
        out.append(f"MCP server block {block}")
    if is_owned(root / RULE_FILE, RULE_HEAD):
        out.append(f"memd's rule {root / RULE_FILE}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `memd integrate continue`."""
    env = dict(os.environ)
    return run_cli(
        "continue",
        argv,
        lambda request: plan(request, home=Path.home(), env=env),
        options=(
            ("dir", "Continue's global folder (default: $CONTINUE_GLOBAL_DIR or ~/.continue)"),
        ),
    )
