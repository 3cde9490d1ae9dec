"""The settings in force as a TOML document a person can paste into their settings file (`memd
config`): the one table of `memd.core.settings`, with its help lines, secrets never shown."""

from __future__ import annotations

from pathlib import Path

from memd.core.settings import SECRETS, SETTINGS, Settings


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
