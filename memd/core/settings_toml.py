"""The settings in force as `memd config` shows them: a TOML document a person can paste into
their settings file, and the rows of the one table of `memd.core.settings` (`--json`, the
docs), with their help lines, secrets never shown."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.core.settings import SECRETS, SETTINGS, Settings, type_name


def to_toml(settings: Settings, file: Path) -> str:
    """Every setting in force as a TOML document a person can paste into the settings `file`.

    One ``[section]`` per group; each key has its help line and environment variable above it.
    Secrets are never printed: a set one appears commented out as ``(set, not shown)``.
    """
    import tomli_w

    state = (
        ""
        if settings.source
        else " (not present: every value is a default or from the environment)"
    )
    lines = [f"# memd settings in force; the settings file is {file}{state}"]
    section = ""
    for s in SETTINGS:
        head, _, name = s.key.partition(".")
        if head != section:
            section = head
            lines += ["", f"[{section}]"]
        value = settings.value(s.key)
        lines.append(f"# {s.help} (env {s.env})")
        if s.key in SECRETS and value:
            lines.append(f"# {name} = (set, not shown)")
        else:
            lines.append(tomli_w.dumps({name: value}).rstrip("\n"))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class SettingRow:
    """A row of the table as `memd config --json` shows it: the value in force when asked for
    (a secret's only as "(set)"), else None."""

    key: str
    type: str
    default: Any
    env: str
    help: str
    restart: bool
    value: Any = None


def describe(settings: Settings | None = None) -> list[SettingRow]:
    """The table, for `memd config` and the docs; with `settings`, each row's value in force."""
    return [
        SettingRow(key=s.key, type=type_name(s.type), default=s.default, env=s.env,
                   help=s.help, restart=s.restart,
                   value=None if settings is None else _shown(s.key, settings.value(s.key)))
        for s in SETTINGS
    ]  # fmt: skip


def _shown(key: str, value: Any) -> Any:
    return "(set)" if key in SECRETS and value else value
