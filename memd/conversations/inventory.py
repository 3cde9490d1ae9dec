"""What memd finds of each assistant on this machine, for `memd status` and `memd doctor`: found or
not, where, on or off, files and turns read, and its problems (files that cannot be read, bad lines
of its logs)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memd.conversations import repo
from memd.conversations.sources import Choice
from memd.db import Connection

PROBLEMS_SHOWN = 5


@dataclass(slots=True)
class Found:
    """One assistant as memd sees it."""

    name: str
    title: str
    enabled: bool
    found: bool  # one of its folders exists
    folders: list[str]
    custom: bool  # the folder is a setting's, not the default
    files: int = 0
    turns: int = 0
    sessions: int = 0
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def assistants(
    conn: Connection, choices: Sequence[Choice], problems: Mapping[str, str]
) -> list[Found]:
    """Every assistant of the registry with what was read of it; `problems` are the ingestor's
    (path → why it cannot be read now)."""
    by_format = repo.files_by_format(conn)
    by_source = repo.turns_by_source(conn)
    out = []
    for c in choices:
        a = c.assistant
        folders = [str(f) for f in c.folders]
        roots = [f.rstrip(os.sep) + os.sep for f in folders]
        files = sum(by_format.get(fmt, (0, 0, 0))[0] for fmt in a.formats())
        turns, sessions = by_source.get(a.name, (0, 0))
        trouble = [f"{p}: {why}" for p, why in sorted(problems.items())
                   if any(p.startswith(r) for r in roots)]  # fmt: skip
        trouble += [f"{p}:{line}: {why}"
                    for p, line, why in repo.bad_lines_under(conn, roots, PROBLEMS_SHOWN)]  # fmt: skip
        out.append(Found(
            a.name, a.title, c.enabled, any(os.path.isdir(f) for f in folders), folders, c.custom,
            files, turns, sessions, trouble[:PROBLEMS_SHOWN],
        ))  # fmt: skip
    return out
