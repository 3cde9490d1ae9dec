"""The index: present, sound, caught up with the files, and every memory file indexed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from memd.api.messages import FileProblem, StatusResult
from memd.cli.doctor.check import Check, fail, ok, warn
from memd.core.settings import Settings
from memd.db import DatabaseError
from memd.db.connection import connect, quick_check
from memd.memory import repo as docs
from memd.memory.indexer import Root, plan_reconcile, scan_root
from memd.memory.ops import resolve_project

LAG_WARN_S = 60.0


def _index_roots(settings: Settings) -> list[Root]:
    roots = [Root(settings.memory_dir)]
    for ws in settings.memory_workspaces:
        project = resolve_project(str(Path(ws).expanduser()))
        if project.memory_dir is not None:
            roots.append(Root(project.memory_dir, project.slug))
    return roots


@dataclass(slots=True)
class IndexReport:
    """The index file as read directly: whether it exists, `error` when it cannot be read, else
    its integrity (`quick_check`), counts, last indexing, files changed since and problems."""

    exists: bool
    path: str
    error: str = ""
    quick_check: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    last_indexed_at: float = 0.0
    stale: list[str] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)


def inspect_index(settings: Settings) -> IndexReport:
    """Read the index file directly (read-only): integrity, counts, last indexing, stale files."""
    path = settings.db_path
    if not path.exists():
        return IndexReport(exists=False, path=str(path))
    conn = connect(path, readonly=True)
    try:
        quick = quick_check(conn)
        counts = docs.counts(conn)
        last = docs.last_indexed_at(conn)
        problems = docs.problems(conn)
        bad = {p.path for p in problems}
        stale: list[str] = []
        for root in _index_roots(settings):
            disk = scan_root(root) if root.path.is_dir() else {}
            to_read, to_delete = plan_reconcile(disk, docs.manifest(conn, root.key))
            stale += [p for p in (*to_read, *to_delete) if p not in bad]
    except DatabaseError as exc:
        return IndexReport(exists=True, path=str(path), error=str(exc))
    finally:
        conn.close()
    return IndexReport(exists=True, path=str(path), quick_check=quick, counts=counts,
                       last_indexed_at=float(last), stale=sorted(stale), problems=problems)  # fmt: skip


def _ago(ts: float, now: float) -> str:
    s = max(0.0, now - ts)
    if s < 120:
        return f"{s:.0f} s ago"
    if s < 7200:
        return f"{s / 60:.0f} min ago"
    if s < 172800:
        return f"{s / 3600:.0f} h ago"
    return f"{s / 86400:.0f} days ago"


def assess_index(ix: IndexReport, status: StatusResult | None, now: float) -> Check:
    """Index present and sound, and caught up with the files (lag, stale files)."""
    rebuild = "the index is a cache: `memd reindex --full` rebuilds it from your files"
    if not ix.exists:
        return warn("index", f"no index yet at {ix.path}", "start the daemon once (`memd serve`)")
    if ix.error:
        return fail("index", f"cannot read {ix.path}: {ix.error}", rebuild)
    if ix.quick_check != "ok":
        return fail("index", f"{ix.path} is damaged: {ix.quick_check}", rebuild)
    c = ix.counts
    lag = float(status.index.lag_s) if status and status.index else 0.0
    last = ix.last_indexed_at
    stale = ix.stale
    data = {"files": c["files"], "sections": c["sections"], "items": c["items"], "lag_s": lag,
            "last_indexed_at": last or None, "stale_files": len(stale)}  # fmt: skip
    detail = (
        f"{c['files']:,} files, {c['sections']:,} sections, {c['items']:,} items; "
        f"last indexed {_ago(last, now) if last else 'never'}"
    )
    if lag > LAG_WARN_S:
        return warn("index", f"{detail}; {lag:.0f} s behind the last change",
                     "the daemon is busy or stuck: check `memd status`, restart it if it stays", data=data)  # fmt: skip
    if stale:
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        how = ("the daemon picks them up within seconds; if not, `memd reindex`" if status
               else "no daemon is running: `memd reindex` (or start the daemon)")  # fmt: skip
        return warn(
            "index", f"{detail}; {len(stale)} changed since indexed: {shown}", how, data=data
        )
    return ok("index", detail + ("; up to date" if status else "; matches the files"), data=data)


def assess_problems(problems: Sequence[FileProblem]) -> Check:
    """Memory files with a problem: not indexed at all (too large, not UTF-8, binary, …), or
    indexed in part (broken front matter: the rest of the file is searchable)."""
    if not problems:
        return ok("problems", "every memory file is indexed", count=0)
    missing = [p for p in problems if not p.indexed]
    partly = [p for p in problems if p.indexed]
    said = []
    if missing:
        said.append(f"{len(missing)} file(s) not indexed: {_listed(missing)}")
    if partly:
        said.append(f"{len(partly)} file(s) indexed with a problem (searchable): {_listed(partly)}")
    return warn(
        "problems",
        "; ".join(said),
        "fix or move these files (they are re-read when they change); `memd status` lists them",
        count=len(problems),
        files=msgspec.to_builtins(problems),
    )


def _listed(problems: Sequence[FileProblem]) -> str:
    shown = "; ".join(f"{p.path}: {p.reason}" for p in problems[:5])
    return shown + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
