"""The History view: the recorded changes of the memory tree, one change's diff, and undo.

Reads through the history's socket methods (`history`, `show_change`); the Undo buttons POST
to `/undo`, which calls `undo` for one change or for every change of one job run. An undo that
later edits would overwrite is refused by the daemon (nothing is written), and the page shows
its message where the button was.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from memd.api.messages import (
    HISTORY,
    SHOW_CHANGE,
    UNDO,
    ChangeInfo,
    HistoryParams,
    ShowChangeParams,
    StatusResult,
    UndoResult,
    or_default,
)
from memd.core.errors import InvalidParams
from memd.ui import present
from memd.ui.tree import RootInfo

if TYPE_CHECKING:
    from memd.ui.web import Pages

LIMITS = (50, 200, 1000)


class ChangePages:
    """The routes of the History view, drawn with the page's own helpers."""

    def __init__(self, pages: Pages) -> None:
        self.pages = pages

    def history(self, request: Request) -> Response:
        qp = request.query_params
        form = {
            "path": qp.get("path", "").strip(),
            "since": qp.get("since", "").strip(),
            "item": qp.get("item", "").strip(),
        }
        limit = _limit(qp.get("limit"))
        status, problem = self.pages._status()
        changes: list[ChangeInfo] = []
        if status:
            try:
                asked = HistoryParams(limit=limit, path=form["path"], since=form["since"])
            except InvalidParams as exc:  # a path no file can have: said as the daemon says it
                problem = present.error_text(exc)
            else:
                answer = self.pages._request(HISTORY, asked)
                listed, problem = answer
                changes = listed.changes if listed else []
        # Each change with whether it names the item asked about and whether it can be undone.
        shown = [(c, present.names_item(c, form["item"]), undoable(c)) for c in changes]
        more = next((n for n in LIMITS if n > limit), 0) if len(changes) >= limit else 0
        return self.pages.render(
            request,
            "history.html",
            "history",
            status=status,
            problem=problem,
            form=form,
            changes=shown,
            limit=limit,
            more=more,
            files=_tree_files(changes),
            title=f"History of {form['path']}" if form["path"] else "History",
        )

    def change(self, request: Request) -> Response:
        cid = request.query_params.get("id", "").strip()
        status, problem = self.pages._status()
        shown = None
        if status and cid:
            answer = self.pages._request(SHOW_CHANGE, ShowChangeParams(change=cid))
            shown, problem = answer
        elif not cid:
            problem = "which change? (no id)"
        # Each file's diff with its lines, as the page colours them.
        diffs = [(d, present.diff_lines(d.diff)) for d in (shown.diffs if shown else [])]
        change = shown.change if shown else None
        return self.pages.render(
            request,
            "change.html",
            "history",
            status=status,
            problem=problem,
            change=change,
            diffs=diffs,
            undoable=change is not None and undoable(change),
            title=f"Change {cid}" if cid else "Change",
        )

    async def undo(self, request: Request) -> Response:
        def done(r: UndoResult) -> tuple[str, str]:
            return present.undo_message(r), ""

        return await self.pages._write(request, lambda f: (UNDO, present.undo_params(f)), done)


def _limit(raw: str | None) -> int:
    """One of LIMITS (the first unless the query asks for another of them)."""
    try:
        n = int(raw or LIMITS[0])
    except ValueError:
        return LIMITS[0]
    return n if n in LIMITS else LIMITS[0]


def _tree_files(changes: Sequence[ChangeInfo]) -> list[str]:
    """The files the listed changes touched (for the file filter's suggestions)."""
    return sorted({f.path for c in changes for f in c.files})


def undoable(change: ChangeInfo) -> bool:
    """The page offers an undo for it: not a baseline or prune, not undone already."""
    return change.cause not in present.NO_UNDO_CAUSES and not change.undone_by


def memory_root_index(status: StatusResult | None, roots: Sequence[RootInfo]) -> int:
    """The number of the root that is the memory tree (the one the history records), or -1."""
    if not status:
        return -1
    tree = Path(or_default(status.memory_root, ""))
    return next((r.index for r in roots if r.path == tree), -1)
