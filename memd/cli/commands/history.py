"""History commands: `history`, `show` and `undo` over the memory tree's changes."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from memd.cli.commands import call, emit


def _change_line(c: Any) -> str:
    from memd.cli.render import when

    files = ", ".join(f"{f.status} {f.path}" for f in c.files)
    run = f" (run {c.run})" if c.run else ""
    undone = f"  [undone by {c.undone_by}]" if c.undone_by else ""
    return f"{c.id}  {when(c.at)}  {c.cause:<9}  {c.summary}{run}{undone}" + (
        f"\n    {files}" if files else ""
    )


def cmd_history(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    path = args.path or ""
    if path and os.path.exists(path):
        path = os.path.abspath(path)  # a path from here; otherwise relative to the memory tree
    params = m.HistoryParams(path=path, since=args.since or "", limit=args.limit)
    res = call(args, m.HISTORY, params)
    emit(args, res, lambda: "\n".join(_change_line(c) for c in res.changes) or "no changes")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    res = call(args, m.SHOW_CHANGE, m.ShowChangeParams(change=args.change))

    def text() -> str:
        c = res.change
        head = [
            _change_line(c),
            f"    by {c.author}"
            + (f"; undoes {c.undoes}" if c.undoes else "")
            + (f"; undone by {c.undone_by}" if c.undone_by else ""),
        ]
        return "\n".join([*head, "", *(d.diff.rstrip("\n") for d in res.diffs)])

    emit(args, res, text)
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    if bool(args.change) == bool(args.run):
        print("memd: give a CHANGE (from `memd history`) or --run RUN", file=sys.stderr)
        return 2
    params = m.UndoParams(change=args.change or "", run=args.run or "", dry_run=args.dry_run)
    res = call(args, m.UNDO, params, write=True)

    def text() -> str:
        what = ", ".join(f"{c.id} ({c.summary})" for c in res.changes)
        verb = "would undo" if res.dry_run else "undid"
        files = [
            f"  {'would ' if res.dry_run else ''}"
            f"{'delete' if f.delete else 'create' if f.create else 'rewrite'} {f.rel}"
            for f in res.files
        ]
        return "\n".join([f"{verb} {what}", *files, *(f"note: {w}" for w in res.warnings)])

    emit(args, res, text)
    return 0
