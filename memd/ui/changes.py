"""The History view: the recorded changes of the memory tree, one change's diff, and undo.

Reads through the history's socket methods (`history`, `show_change`); the Undo buttons POST
to `/undo`, which calls `undo` for one change or for every change of one job run. An undo that
later edits would overwrite is refused by the daemon (nothing is written), and the page shows
its message where the button was.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from memd.api.messages import StatusResult, or_default
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
        changes: list[dict[str, Any]] = []
        if status:
            params: dict[str, Any] = {"limit": limit}
            params.update({k: form[k] for k in ("path", "since") if form[k]})
            res, problem = self.pages._call("history", params)
            changes = (res or {}).get("changes", [])
        for c in changes:
            c["names_item"] = present.names_item(c, form["item"])
            c["undoable"] = c.get("cause") not in present.NO_UNDO_CAUSES and not c.get("undone_by")
        more = next((n for n in LIMITS if n > limit), 0) if len(changes) >= limit else 0
        return self.pages.render(
            request,
            "history.html",
            "history",
            status=status,
            problem=problem,
            form=form,
            changes=changes,
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
            shown, problem = self.pages._call("show_change", {"change": cid})
        elif not cid:
            problem = "which change? (no id)"
        diffs = [
            {**d, "lines": present.diff_lines(d.get("diff", ""))}
            for d in (shown or {}).get("diffs", [])
        ]
        change = (shown or {}).get("change")
        return self.pages.render(
            request,
            "change.html",
            "history",
            status=status,
            problem=problem,
            change=change,
            diffs=diffs,
            undoable=change is not None
            and change.get("cause") not in present.NO_UNDO_CAUSES
            and not change.get("undone_by"),
            title=f"Change {cid}" if cid else "Change",
        )

    async def undo(self, request: Request) -> Response:
        def done(r: dict[str, Any]) -> tuple[str, str]:
            return present.undo_message(r), ""

        return await self.pages._write(request, lambda f: ("undo", present.undo_params(f)), done)


def _limit(raw: str | None) -> int:
    """One of LIMITS (the first unless the query asks for another of them)."""
    try:
        n = int(raw or LIMITS[0])
    except ValueError:
        return LIMITS[0]
    return n if n in LIMITS else LIMITS[0]


def _tree_files(changes: list[dict[str, Any]]) -> list[str]:
    """The files the listed changes touched (for the file filter's suggestions)."""
    return sorted({f["path"] for c in changes for f in c.get("files", [])})


def memory_root_index(status: StatusResult | None, roots: Sequence[RootInfo]) -> int:
    """The number of the root that is the memory tree (the one the history records), or -1."""
    if not status:
        return -1
    tree = Path(or_default(status.memory_root, ""))
    return next((r.index for r in roots if r.path == tree), -1)
