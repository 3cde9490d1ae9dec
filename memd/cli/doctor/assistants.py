"""The assistants memd reads (Claude Code, Codex CLI, Gemini CLI, OpenCode, …): which are on,
which are installed (their folder exists), what the daemon read of each and its problems."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from memd.cli.doctor.check import Check, ok, warn
from memd.conversations.sources import configured
from memd.core.settings import Settings


def local_view(settings: Settings) -> list[dict[str, Any]]:
    """Each assistant as the settings place it, without the daemon (no counts)."""
    return [
        {"name": c.assistant.name, "title": c.assistant.title, "enabled": c.enabled,
         "found": any(os.path.isdir(f) for f in c.folders), "folders": [str(f) for f in c.folders],
         "custom": c.custom, "problems": []}
        for c in configured(settings.value).choices
    ]  # fmt: skip


def assess_assistants(assistants: Sequence[Mapping[str, Any]], counted: bool) -> Check:
    """One line per assistant; a warning when one that is read has problems."""
    lines, troubled = [], []
    for a in assistants:
        where = ", ".join(a["folders"])
        if not a["enabled"]:
            lines.append(f"{a['title']}: off")
        elif not a["found"]:
            lines.append(f"{a['title']}: not installed here ({where} does not exist)")
        else:
            read = f", {a['turns']} turns read" if counted else ""
            lines.append(f"{a['title']}: {where}{read}")
        if a.get("problems"):
            troubled.append(a["title"])
            lines += [f"  problem: {p}" for p in a["problems"]]
    detail = "; ".join(x for x in lines if not x.startswith("  "))
    data = {"assistants": list(assistants)}
    if troubled:
        problems = "\n".join(x.strip() for x in lines if x.startswith("  "))
        return warn("assistants", f"{detail}\n{problems}",
                    f"files of {', '.join(troubled)} could not be read whole: see `memd status`",
                    data=data)  # fmt: skip
    hint = "" if counted else "start the daemon (`memd serve`) to read them"
    return ok("assistants", detail, hint, data=data)
