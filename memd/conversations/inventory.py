"""What memd finds of each assistant on this machine, for `memd status` and `memd doctor`: found or
not, where, on or off, files and turns read, and its problems (files that cannot be read, bad lines
of its logs)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from memd.api.messages import AssistantSeen
from memd.conversations import repo
from memd.conversations.sources import Choice
from memd.db import Connection

PROBLEMS_SHOWN = 5


def assistants(
    conn: Connection, choices: Sequence[Choice], problems: Mapping[str, str]
) -> list[AssistantSeen]:
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
        out.append(AssistantSeen(
            name=a.name, title=a.title, enabled=c.enabled,
            found=any(os.path.isdir(f) for f in folders), folders=folders, custom=c.custom,
            files=files, turns=turns, sessions=sessions, problems=trouble[:PROBLEMS_SHOWN],
        ))  # fmt: skip
    return out
