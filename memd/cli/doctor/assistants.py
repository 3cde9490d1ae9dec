"""The assistants memd reads (Claude Code, Codex CLI, Gemini CLI, OpenCode, …): which are on,
which are installed (their folder exists), what the daemon read of each and its problems."""

from __future__ import annotations

import os
from collections.abc import Sequence

import msgspec

from memd.api.messages import AssistantSeen
from memd.cli.doctor.check import Check, ok, warn
from memd.conversations.sources import configured
from memd.core.settings import Settings

# What only the daemon counts: left out of the report without it, rather than shown as 0.
COUNTS = ("files", "turns", "sessions")


def local_view(settings: Settings) -> list[AssistantSeen]:
    """Each assistant as the settings place it, without the daemon (no counts)."""
    return [
        AssistantSeen(name=c.assistant.name, title=c.assistant.title, enabled=c.enabled,
                      found=any(os.path.isdir(f) for f in c.folders),
                      folders=[str(f) for f in c.folders], custom=c.custom)
        for c in configured(settings.value).choices
    ]  # fmt: skip


def assess_assistants(assistants: Sequence[AssistantSeen], counted: bool) -> Check:
    """One line per assistant; a warning when one that is read has problems."""
    lines, troubled = [], []
    for a in assistants:
        where = ", ".join(a.folders)
        if not a.enabled:
            lines.append(f"{a.title}: off")
        elif not a.found:
            lines.append(f"{a.title}: not installed here ({where} does not exist)")
        else:
            read = f", {a.turns} turns read" if counted else ""
            lines.append(f"{a.title}: {where}{read}")
        if a.problems:
            troubled.append(a.title)
            lines += [f"  problem: {p}" for p in a.problems]
    detail = "; ".join(x for x in lines if not x.startswith("  "))
    seen = [msgspec.to_builtins(a) for a in assistants]
    if not counted:
        seen = [{k: v for k, v in a.items() if k not in COUNTS} for a in seen]
    data = {"assistants": seen}
    if troubled:
        problems = "\n".join(x.strip() for x in lines if x.startswith("  "))
        return warn("assistants", f"{detail}\n{problems}",
                    f"files of {', '.join(troubled)} could not be read whole: see `memd status`",
                    data=data)  # fmt: skip
    hint = "" if counted else "start the daemon (`memd serve`) to read them"
    return ok("assistants", detail, hint, data=data)
